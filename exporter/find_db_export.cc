// The find db: `<base>.<BACKEND>.fdb.txt` from a session's find results.
#include <filesystem>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "exporter/format_registry.h"
#include "exporter/formats.h"

namespace tuna::exporter::internal {
namespace {

struct Candidate {
  db::FindDbEntry entry;
  std::optional<int64_t> job;
  int64_t config_id = 0;
};

bool Better(const Candidate& a, const Candidate& b) {
  return std::tie(a.entry.time_ms, a.entry.workspace, a.config_id) <
         std::tie(b.entry.time_ms, b.entry.workspace, b.config_id);
}

}  // namespace

Direction KeyDirection(const Problem& p) {
  if (p.mode != ConvMode::kTrans) return p.direction;
  switch (p.direction) {
    case Direction::kForward: return Direction::kBackwardData;
    case Direction::kBackwardData: return Direction::kForward;
    case Direction::kBackwardWeights: return Direction::kBackwardWeights;
  }
  return p.direction;
}

IncomingFind FoldFindResults(const std::vector<schema::FindResultRow>& rows,
                             const std::map<int64_t, Problem>& problems,
                             const AlgorithmResolver& algorithm_for) {
  IncomingFind out;
  // Keys and algorithm names are computed once per config / (solver, direction).
  std::map<int64_t, std::pair<std::string, Direction>> keys;
  std::map<std::pair<std::string, Direction>, std::optional<std::string>> algorithms;
  std::map<std::string, std::map<std::string, Candidate>> best;
  for (const auto& r : rows) {
    auto k = keys.find(r.config_id);
    if (k == keys.end()) {
      auto p = problems.find(r.config_id);
      if (p == problems.end()) {
        ++out.skipped_bad_config;
        continue;
      }
      k = keys.emplace(r.config_id, std::make_pair(FindDbKey(p->second), KeyDirection(p->second)))
              .first;
    }
    const auto& [key, direction] = k->second;
    auto a = algorithms.find({r.solver, direction});
    if (a == algorithms.end()) {
      auto name = algorithm_for(r.solver, direction);
      std::optional<std::string> value;
      if (name.ok()) {
        value = *std::move(name);
      } else {
        out.warnings.push_back(absl::StrCat("find results of solver ", r.solver,
                                            " skipped: ", name.status().message()));
      }
      a = algorithms.emplace(std::make_pair(r.solver, direction), std::move(value)).first;
    }
    if (!a->second) {
      ++out.skipped_unknown_solver;
      continue;
    }
    Candidate c{{r.solver, static_cast<float>(r.kernel_time), static_cast<uint64_t>(r.workspace),
                 *a->second},
                r.job_id,
                r.config_id};
    auto [it, inserted] = best[key].try_emplace(r.solver, c);
    if (!inserted && Better(c, it->second)) it->second = std::move(c);
  }
  for (auto& [key, solvers] : best) {
    std::vector<db::FindDbEntry>& entries = out.db[key];
    entries.reserve(solvers.size());
    for (const auto& [solver, c] : solvers) entries.push_back(c.entry);
    db::SortFindDbEntries(entries);
    out.fastest_job[key] = solvers.at(entries.front().solver).job;
  }
  return out;
}

absl::StatusOr<std::optional<db::FindDb>> ReadExistingFindDb(const std::string& path,
                                                             std::vector<std::string>* warnings) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<db::FindDb>();
  auto read = db::ReadFindDbFile(path);
  if (!read.ok()) return read.status();
  for (const auto& w : read->warnings) {
    warnings->push_back(absl::StrCat(path, ":", w.line, ": ", w.message, " (skipped)"));
  }
  return std::optional<db::FindDb>(std::move(read->records));
}

FileMergeCounts FindMergeCounts(const db::MergeReport& report, int64_t existing_entries) {
  FileMergeCounts c;
  c.added = static_cast<int64_t>(report.added_entries);
  c.improved = static_cast<int64_t>(report.improved_entries);
  c.unchanged = static_cast<int64_t>(report.unchanged_entries);
  c.kept = existing_entries - c.improved - c.unchanged;
  return c;
}

absl::StatusOr<FileReport> WriteFindDbExport(const IncomingFind& incoming,
                                             const std::optional<db::FindDb>& existing,
                                             const std::string& path, size_t top_n) {
  FileReport report;
  report.path = path;
  const db::FindDb* out = &incoming.db;
  db::FindDbMergeResult merged;
  if (existing) {
    merged = db::MergeFindDb(*existing, incoming.db);
    int64_t existing_entries = 0;
    for (const auto& [key, entries] : *existing) existing_entries += entries.size();
    report.merged = true;
    report.merge = FindMergeCounts(merged.report, existing_entries);
    out = &merged.db;
  } else {
    for (const auto& [key, entries] : incoming.db) report.merge.added += entries.size();
  }
  db::FindDbWriteOptions options;
  options.max_entries_per_key = top_n;
  if (auto st = db::WriteFindDbFile(path, *out, options); !st.ok()) return st;
  for (const auto& [key, entries] : *out) {
    if (entries.empty()) continue;
    ++report.keys;
    report.entries += top_n ? std::min(entries.size(), top_n) : entries.size();
  }
  report.written = true;
  return report;
}

namespace {

// Per key the top_n fastest find results, merged into the merge dir's find db when given.
absl::StatusOr<FileReport> WriteFindDb(const ExportInputs& in, const std::string& path,
                                       ExportReport* report) {
  in.Progress("write find db", 0, 0);
  // The warnings of reading the merge dir's find db were collected before this file.
  std::vector<std::string> merge_warnings = std::move(report->find.warnings);
  auto written = WriteFindDbExport(in.incoming_find, in.existing_find, path, in.options->top_n);
  if (!written.ok()) return written.status();
  written->warnings = std::move(merge_warnings);
  in.Progress("write find db", written->keys, written->keys);
  return written;
}

}  // namespace

FormatExporter FindDbExporter() {
  FormatExporter e{ExportFormat::kFindDb};
  e.needs_find_results = true;
  e.needs_merge_find_db = true;
  e.file_name = &FindDbFileName;
  e.write = &WriteFindDb;
  e.slot = &ExportReport::find;
  return e;
}

}  // namespace tuna::exporter::internal
