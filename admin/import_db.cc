#include "admin/import_db.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "admin/solver_records.h"
#include "schema/store/imported_result_store.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/keys.h"

namespace tuna::admin {
namespace {

// What the file is: by name first, then SQLite's magic header.
absl::StatusOr<std::string> DetectFormat(const std::string& path) {
  if (absl::EndsWith(path, ".fdb.txt")) return std::string("find");
  if (absl::EndsWith(path, ".db") || absl::EndsWith(path, ".udb")) return std::string("perf");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  char header[16] = {};
  in.read(header, sizeof(header));
  if (std::string(header, 15) == "SQLite format 3") return std::string("perf");
  return std::string("find");
}

// The problems and entries of either format, before any database work.
struct Parsed {
  std::vector<Problem> problems;  // one per key / config row
  struct Entry {
    size_t problem = 0;
    std::string solver;
    double time = 0;
    int64_t workspace = 0;
    std::string alg;
    std::string params;
  };
  std::vector<Entry> entries;
  std::vector<std::string> errors;
  int64_t skipped = 0;
};

// A find-db entry must carry a measurement: a finite time > 0 ms and a workspace that fits the
// BIGINT column (a -1 time would otherwise win every "fastest" comparison downstream).
absl::Status CheckFindEntry(const db::FindDbEntry& e) {
  if (!std::isfinite(e.time_ms) || e.time_ms <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("time ", db::FormatFindDbTime(e.time_ms), " ms is not finite and > 0"));
  }
  if (e.workspace > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return absl::InvalidArgumentError(
        absl::StrCat("workspace ", e.workspace, " bytes exceeds the int64 range"));
  }
  return absl::OkStatus();
}

// A perf-db row: a solver name and a params string the ASCII VARCHAR(1024) column can hold.
absl::Status CheckPerfRow(const db::PerfDbRow& row) {
  if (row.solver.empty()) return absl::InvalidArgumentError("empty solver name");
  if (row.params.empty()) return absl::InvalidArgumentError("empty params");
  if (row.params.size() > 1024) {
    return absl::InvalidArgumentError(
        absl::StrCat("params of ", row.params.size(), " bytes (at most 1024)"));
  }
  for (unsigned char ch : row.params) {
    if (ch < 0x20 || ch > 0x7e) {
      return absl::InvalidArgumentError("params hold a byte that is not printable ASCII");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Parsed> ParseFind(const std::string& path) {
  auto read = db::ReadFindDbFile(path);
  if (!read.ok()) return read.status();
  Parsed out;
  for (const db::ReadWarning& w : read->warnings) {
    out.errors.push_back(absl::StrCat("line ", w.line, ": ", w.message));
  }
  for (const auto& [key, entries] : read->records) {
    auto problem = ParseFindDbKey(key);
    if (!problem.ok()) {
      out.errors.push_back(absl::StrCat("key ", key, ": ", problem.status().message()));
      continue;
    }
    const size_t index = out.problems.size();
    out.problems.push_back(*problem);
    for (const db::FindDbEntry& e : entries) {
      if (auto st = CheckFindEntry(e); !st.ok()) {
        out.errors.push_back(absl::StrCat("key ", key, " solver ", e.solver, ": ", st.message()));
        continue;
      }
      out.entries.push_back({index, e.solver, static_cast<double>(e.time_ms),
                             static_cast<int64_t>(e.workspace), e.algorithm, ""});
    }
  }
  return out;
}

absl::StatusOr<Parsed> ParsePerf(const std::string& path, std::chrono::milliseconds timeout) {
  db::PerfDbReadOptions read_options;
  read_options.timeout = timeout;
  auto reader = db::PerfDbReader::Open(path, read_options);
  if (!reader.ok()) return reader.status();
  auto rows = reader->ReadAll();
  if (!rows.ok()) return rows.status();
  Parsed out;
  std::map<PerfDbConfig, size_t, db::PerfDbConfigLess> index_of;
  std::set<PerfDbConfig, db::PerfDbConfigLess> bad;
  for (const db::PerfDbRow& row : *rows) {
    auto it = index_of.find(row.config);
    if (it == index_of.end()) {
      if (bad.count(row.config)) continue;
      auto problem = FromPerfDbConfig(row.config);
      if (!problem.ok()) {
        bad.insert(row.config);
        out.errors.push_back(absl::StrCat("config ", row.config.direction, " ",
                                          row.config.layout, " ", row.config.data_type, " c",
                                          row.config.in_channels, " k", row.config.out_channels,
                                          ": ", problem.status().message()));
        continue;
      }
      it = index_of.emplace(row.config, out.problems.size()).first;
      out.problems.push_back(*problem);
    }
    if (auto st = CheckPerfRow(row); !st.ok()) {
      out.errors.push_back(absl::StrCat("config ", FindDbKey(out.problems[it->second]),
                                        " solver ", row.solver, ": ", st.message()));
      continue;
    }
    out.entries.push_back({it->second, row.solver, -1, -1, "", row.params});
  }
  return out;
}

}  // namespace

absl::StatusOr<ImportDbReport> ImportMiopenDb(schema::Database& db,
                                              const solver::SolverRegistry& registry,
                                              const ImportDbOptions& options) {
  ImportDbReport report;
  schema::SessionStore sessions(db);
  if (auto s = sessions.Get(options.session_id); !s.ok()) return s.status();
  auto format = DetectFormat(options.path);
  if (!format.ok()) return format.status();
  report.format = *format;
  if (options.progress) options.progress("entries parsed", 0, 0);
  auto parsed = report.format == "find" ? ParseFind(options.path) : ParsePerf(options.path, options.sqlite_timeout);
  if (!parsed.ok()) return parsed.status();
  if (options.progress) {
    const auto n = static_cast<int64_t>(parsed->entries.size());
    options.progress("entries parsed", n, n);
  }
  if (!parsed->errors.empty()) {
    if (!options.skip_invalid) {
      std::string msg = absl::StrCat(parsed->errors.size(), " invalid entr",
                                     parsed->errors.size() == 1 ? "y" : "ies", " in ",
                                     options.path, "; nothing was imported (--skip_invalid skips "
                                     "them):");
      for (const std::string& e : parsed->errors) absl::StrAppend(&msg, "\n  ", e);
      return absl::InvalidArgumentError(msg);
    }
    for (const std::string& e : parsed->errors) spdlog::warn("import-db: skipped {}", e);
    report.skipped = static_cast<int64_t>(parsed->errors.size());
  }
  report.keys = static_cast<int64_t>(parsed->problems.size());
  report.entries = static_cast<int64_t>(parsed->entries.size());

  std::set<std::string> names;
  for (const auto& e : parsed->entries) names.insert(e.solver);
  for (const std::string& n : names) {
    if (registry.ByName(n) == nullptr) report.unknown_solvers.push_back(n);
  }
  const std::vector<schema::SolverRecord> known = SolverRecords(registry);

  schema::ConfigStore configs(db);
  schema::SolverStore solvers(db);
  const ImportDbReport base = report;
  absl::Status st = db.Transaction([&](schema::Connection& c) -> absl::Status {
    report = base;  // the body may run again after a deadlock
    int64_t inserted = 0;
    // Each stage is announced before its first chunk, so its time counts from its start.
    if (options.progress) options.progress("configs written", 0, 0);
    auto ids = configs.Upsert(c, parsed->problems, &inserted,
                              ForStage(options.progress, "configs written"));
    if (!ids.ok()) return ids.status();
    std::set<int64_t> unique(ids->begin(), ids->end());
    report.configs_new = inserted;
    report.configs_known = static_cast<int64_t>(unique.size()) - inserted;
    if (options.tag) {
      if (options.progress) options.progress("configs tagged", 0, 0);
      auto tags = configs.AddTag(c, *ids, *options.tag, false);
      if (!tags.ok()) return tags.status();
      report.tags_added = *tags;
      if (options.progress) options.progress("configs tagged", *tags, *tags);
    }
    auto solver_ids = solvers.EnsureNames(c, std::vector<std::string>(names.begin(), names.end()),
                                          known, &report.solvers_added);
    if (!solver_ids.ok()) return solver_ids.status();
    absl::StatusOr<schema::UpsertCounts> counts;
    if (options.progress) {
      options.progress("results written", 0, static_cast<int64_t>(parsed->entries.size()));
    }
    if (report.format == "find") {
      std::vector<schema::FindResultRecord> rows;
      rows.reserve(parsed->entries.size());
      for (const auto& e : parsed->entries) {
        rows.push_back({(*ids)[e.problem], solver_ids->at(e.solver), e.time, e.workspace, e.alg});
      }
      counts = schema::ImportedResultStore::UpsertFind(
          c, options.session_id, rows, ForStage(options.progress, "results written"));
    } else {
      std::vector<schema::PerfResultRecord> rows;
      rows.reserve(parsed->entries.size());
      for (const auto& e : parsed->entries) {
        rows.push_back({(*ids)[e.problem], solver_ids->at(e.solver), e.params});
      }
      counts = schema::ImportedResultStore::UpsertPerf(
          c, options.session_id, rows, ForStage(options.progress, "results written"));
    }
    if (!counts.ok()) return counts.status();
    report.results_added = counts->added;
    report.results_existing = counts->existing;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  spdlog::info("import-db {} session {}: {} keys, {} entries, {} results new, {} existing",
               options.path, options.session_id, report.keys, report.entries,
               report.results_added, report.results_existing);
  return report;
}

}  // namespace tuna::admin
