// The perf db: `<base>.db` (MIOpen's SQLite config + perf_db tables) and `<base>.db.txt` (its text
// form) from a session's perf results.
#include <filesystem>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "exporter/format_registry.h"
#include "exporter/formats.h"
#include "tuner_core/db/perf_db_text.h"

namespace tuna::exporter::internal {

FoldedPerf FoldPerfResults(const std::vector<schema::PerfResultRow>& rows,
                           const std::map<int64_t, Problem>& problems) {
  FoldedPerf out;
  // Config columns and keys are computed once per conv_config id.
  std::map<int64_t, std::pair<PerfDbConfig, std::string>> configs;
  for (const auto& r : rows) {
    auto c = configs.find(r.config_id);
    if (c == configs.end()) {
      auto p = problems.find(r.config_id);
      if (p == problems.end()) {
        ++out.skipped_bad_config;
        continue;
      }
      c = configs.emplace(r.config_id, std::make_pair(ToPerfDbConfig(p->second),
                                                      FindDbKey(p->second)))
              .first;
    }
    IncomingPerfEntry e{r.params, static_cast<float>(r.kernel_time), c->second.second};
    auto [it, inserted] = out.rows[c->second.first].try_emplace(r.solver, e);
    if (!inserted &&
        std::tie(e.time_ms, e.params) < std::tie(it->second.time_ms, it->second.params)) {
      it->second = std::move(e);
    }
  }
  return out;
}

absl::StatusOr<FileReport> WritePerfDbExport(const IncomingPerf& incoming,
                                             const std::optional<std::string>& existing_path,
                                             const std::optional<db::FindDb>& existing_find,
                                             const std::string& path) {
  FileReport report;
  report.path = path;
  auto existing = ReadExistingRows<db::PerfDbReader, db::PerfDbRow>(existing_path, &report);
  if (!existing.ok()) return existing.status();
  PerfMergeResult merged = MergePerfDb(*existing, incoming, existing_find);
  report.merge = merged.counts;
  db::PerfDbWriter writer;
  for (const auto& row : merged.rows) writer.Add(row);
  if (auto st = writer.Write(path); !st.ok()) return st;
  report.keys = static_cast<int64_t>(writer.config_count());
  report.entries = static_cast<int64_t>(writer.row_count());
  report.written = true;
  return report;
}

absl::StatusOr<FileReport> WritePerfDbTextExport(const IncomingPerf& incoming,
                                                 const std::optional<std::string>& existing_path,
                                                 const std::optional<db::FindDb>& existing_find,
                                                 const std::string& path) {
  FileReport report;
  report.path = path;
  db::PerfDbText kept;  // existing lines whose keys do not parse: copied as they are
  std::vector<db::PerfDbRow> existing;
  std::error_code ec;
  if (existing_path && std::filesystem::exists(*existing_path, ec)) {
    auto file = db::ReadPerfDbTextFile(*existing_path);
    if (!file.ok()) return file.status();
    report.merged = true;
    for (const db::ReadWarning& w : file->warnings) {
      report.warnings.push_back(absl::StrCat(*existing_path, ":", w.line, ": ", w.message));
    }
    for (auto& [key, entries] : file->records) {
      auto config = db::ParsePerfDbTextKey(key);
      if (!config.ok()) {
        report.warnings.push_back(
            absl::StrCat(*existing_path, ": kept as it is: ", config.status().message()));
        kept.emplace(key, entries);
        report.merge.kept += static_cast<int64_t>(entries.size());
        continue;
      }
      for (auto& [solver, params] : entries) existing.push_back({*config, solver, params});
    }
  }
  PerfMergeResult merged = MergePerfDb(existing, incoming, existing_find);
  report.merge.added += merged.counts.added;
  report.merge.improved += merged.counts.improved;
  report.merge.unchanged += merged.counts.unchanged;
  report.merge.kept += merged.counts.kept;
  report.merge.replaced_untimed += merged.counts.replaced_untimed;
  db::PerfDbText text = db::PerfDbRowsToText(merged.rows);
  text.merge(kept);
  if (auto st = db::WritePerfDbTextFile(path, text); !st.ok()) return st;
  report.keys = static_cast<int64_t>(text.size());
  for (const auto& [key, entries] : text) report.entries += static_cast<int64_t>(entries.size());
  report.written = true;
  return report;
}

namespace {

absl::StatusOr<FileReport> WritePerfDb(const ExportInputs& in, const std::string& path,
                                       ExportReport* report) {
  FoldedPerf folded = FoldPerfResults(in.perf_rows, in.problems);
  report->skipped_bad_config += folded.skipped_bad_config;
  in.Progress("write perf db", 0, 0);
  auto written = WritePerfDbExport(folded.rows, in.MergePath(PerfDbFileName(in.basename)),
                                   in.existing_find, path);
  if (!written.ok()) return written.status();
  in.Progress("write perf db", written->entries, written->entries);
  return written;
}

std::string PerfName(const std::string& basename, const std::string&) {
  return PerfDbFileName(basename);
}

absl::StatusOr<FileReport> WritePerfDbText(const ExportInputs& in, const std::string& path,
                                           ExportReport* report) {
  FoldedPerf folded = FoldPerfResults(in.perf_rows, in.problems);
  report->skipped_bad_config += folded.skipped_bad_config;
  in.Progress("write text perf db", 0, 0);
  auto written = WritePerfDbTextExport(
      folded.rows, in.MergePath(PerfDbTextFileName(in.basename)), in.existing_find, path);
  if (!written.ok()) return written.status();
  in.Progress("write text perf db", written->entries, written->entries);
  return written;
}

std::string PerfTextName(const std::string& basename, const std::string&) {
  return PerfDbTextFileName(basename);
}

}  // namespace

FormatExporter PerfDbExporter() {
  FormatExporter e{ExportFormat::kPerfDb};
  e.needs_perf_results = true;
  e.needs_merge_find_db = true;  // the existing find db times the existing rows
  e.file_name = &PerfName;
  e.write = &WritePerfDb;
  e.slot = &ExportReport::perf;
  return e;
}

FormatExporter PerfDbTextExporter() {
  FormatExporter e{ExportFormat::kPerfDbText};
  e.needs_perf_results = true;
  e.needs_merge_find_db = true;
  e.file_name = &PerfTextName;
  e.write = &WritePerfDbText;
  e.slot = &ExportReport::perf_text;
  return e;
}

}  // namespace tuna::exporter::internal
