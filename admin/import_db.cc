#include "admin/import_db.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "admin/solver_records.h"
#include "schema/store/imported_result_store.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/perf_db_text.h"
#include "tuner_core/problem/keys.h"

namespace tuna::admin {
namespace {

// What the file is: "find" (*.fdb.txt, *.ufdb.txt), "perf" (SQLite *.db, *.udb) or "perf-text"
// (*.db.txt, *.udb.txt and the legacy *.cd.pdb.txt, *.cd.updb.txt): by name first, then by
// content (SQLite's magic header; a first key made of 'x'-joined fields is a text perf db).
absl::StatusOr<std::string> DetectFormat(const std::string& path) {
  for (const char* suffix : {".db.txt", ".udb.txt", ".pdb.txt", ".updb.txt"}) {
    if (absl::EndsWith(path, suffix)) return std::string("perf-text");
  }
  if (absl::EndsWith(path, ".fdb.txt")) return std::string("find");
  if (absl::EndsWith(path, ".db") || absl::EndsWith(path, ".udb")) return std::string("perf");
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string first;
  std::getline(in, first);
  if (first.rfind("SQLite format 3", 0) == 0) return std::string("perf");
  const std::string key = first.substr(0, first.find('='));
  if (key.find('-') == std::string::npos && key.find('x') != std::string::npos) {
    return std::string("perf-text");
  }
  return std::string("find");
}

// A batch of problems and their entries (at most kBatchKeys problems), as the file is streamed.
struct Batch {
  std::vector<Problem> problems;
  struct Entry {
    size_t problem = 0;  // index into problems
    std::string solver;
    double time = 0;
    int64_t workspace = 0;
    std::string alg;
    std::string params;
  };
  std::vector<Entry> entries;
  void Clear() {
    problems.clear();
    entries.clear();
  }
};

// Problems per batch: bounds the memory of an import and the size of each store call.
constexpr size_t kBatchKeys = 5000;

using BatchFn = std::function<absl::Status(const Batch&)>;
using ErrorFn = std::function<void(std::string)>;

// A find-db entry must carry a measurement: a finite time >= 0 ms and a workspace that fits the
// BIGINT column (a -1 time would otherwise win every "fastest" comparison downstream). 0 is a
// measurement: MIOpen's shipped dbs hold 0 ms entries (1,183 in gfx90878's, GEMM solvers below
// the timer's resolution).
absl::Status CheckFindEntry(const db::FindDbEntry& e) {
  if (!std::isfinite(e.time_ms) || e.time_ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("time ", db::FormatFindDbTime(e.time_ms), " ms is not finite and >= 0"));
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

// Streams a find db: usable entries in batches to `on_batch`, every invalid line, key or entry
// to `on_error` (the file's order).
absl::Status StreamFind(const std::string& path, const BatchFn& on_batch, const ErrorFn& on_error) {
  Batch batch;
  auto flush = [&]() -> absl::Status {
    if (batch.problems.empty()) return absl::OkStatus();
    absl::Status st = on_batch(batch);
    batch.Clear();
    return st;
  };
  absl::Status st = db::ForEachFindDbRecord(
      path,
      [&](db::FindDbRecord&& rec) -> absl::Status {
        auto problem = ParseFindDbKey(rec.key);
        if (!problem.ok()) {
          on_error(absl::StrCat("key ", rec.key, ": ", problem.status().message()));
          return absl::OkStatus();
        }
        const size_t index = batch.problems.size();
        batch.problems.push_back(*problem);
        for (db::FindDbEntry& e : rec.entries) {
          if (auto bad = CheckFindEntry(e); !bad.ok()) {
            on_error(absl::StrCat("key ", rec.key, " solver ", e.solver, ": ", bad.message()));
            continue;
          }
          batch.entries.push_back({index, std::move(e.solver), static_cast<double>(e.time_ms),
                                   static_cast<int64_t>(e.workspace), std::move(e.algorithm),
                                   ""});
        }
        return batch.problems.size() >= kBatchKeys ? flush() : absl::OkStatus();
      },
      [&](const db::ReadWarning& w) { on_error(absl::StrCat("line ", w.line, ": ", w.message)); });
  if (!st.ok()) return st;
  return flush();
}

// Streams a perf db (read-only, under the deadline) the same way, one problem per config row.
absl::Status StreamPerf(const std::string& path, std::chrono::milliseconds timeout,
                        const BatchFn& on_batch, const ErrorFn& on_error) {
  db::PerfDbReadOptions read_options;
  read_options.timeout = timeout;
  auto reader = db::PerfDbReader::Open(path, read_options);
  if (!reader.ok()) return reader.status();
  Batch batch;
  int64_t current = -1;       // config.id of the rows being read
  bool current_bad = false;   // its problem was refused
  absl::Status st = reader->ForEachByConfig(
      [&](int64_t config_id, db::PerfDbRow&& row) -> absl::Status {
        if (config_id != current) {
          if (batch.problems.size() >= kBatchKeys) {
            if (absl::Status s = on_batch(batch); !s.ok()) return s;
            batch.Clear();
          }
          current = config_id;
          auto problem = FromPerfDbConfig(row.config);
          current_bad = !problem.ok();
          if (current_bad) {
            on_error(absl::StrCat("config ", config_id, " (", row.config.direction, " ",
                                  row.config.layout, " ", row.config.data_type, " c",
                                  row.config.in_channels, " k", row.config.out_channels,
                                  "): ", problem.status().message()));
            return absl::OkStatus();
          }
          batch.problems.push_back(*problem);
        }
        if (current_bad) return absl::OkStatus();
        if (auto bad = CheckPerfRow(row); !bad.ok()) {
          on_error(absl::StrCat("config ", config_id, " key ", FindDbKey(batch.problems.back()),
                                " solver ", row.solver, ": ", bad.message()));
          return absl::OkStatus();
        }
        batch.entries.push_back(
            {batch.problems.size() - 1, std::move(row.solver), -1, -1, "", std::move(row.params)});
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (!batch.problems.empty()) return on_batch(batch);
  return absl::OkStatus();
}

// A text perf db key as a problem: the current 'x'-joined config columns, or (legacy
// *.cd.pdb.txt) a find-db key.
absl::StatusOr<Problem> ProblemOfPerfTextKey(const std::string& key) {
  if (key.find('-') != std::string::npos) return ParseFindDbKey(key);
  auto config = db::ParsePerfDbTextKey(key);
  if (!config.ok()) return config.status();
  return FromPerfDbConfig(*config);
}

// Streams a text perf db (read whole: these files are tens of MB) the same way, one problem per
// key, in key order.
absl::Status StreamPerfText(const std::string& path, const BatchFn& on_batch,
                            const ErrorFn& on_error) {
  auto file = db::ReadPerfDbTextFile(path);
  if (!file.ok()) return file.status();
  for (const db::ReadWarning& w : file->warnings) {
    on_error(absl::StrCat("line ", w.line, ": ", w.message));
  }
  Batch batch;
  for (auto& [key, entries] : file->records) {
    auto problem = ProblemOfPerfTextKey(key);
    if (!problem.ok()) {
      on_error(absl::StrCat("key ", key, ": ", problem.status().message()));
      continue;
    }
    batch.problems.push_back(*problem);
    for (auto& [solver, params] : entries) {
      db::PerfDbRow row{ToPerfDbConfig(*problem), solver, params};
      if (auto bad = CheckPerfRow(row); !bad.ok()) {
        on_error(absl::StrCat("key ", key, " solver ", solver, ": ", bad.message()));
        continue;
      }
      batch.entries.push_back({batch.problems.size() - 1, solver, -1, -1, "", std::move(params)});
    }
    if (batch.problems.size() >= kBatchKeys) {
      if (absl::Status s = on_batch(batch); !s.ok()) return s;
      batch.Clear();
    }
  }
  if (!batch.problems.empty()) return on_batch(batch);
  return absl::OkStatus();
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
  const std::string source = *format;
  report.format = source == "find" ? "find" : "perf";
  auto stream = [&](const BatchFn& on_batch, const ErrorFn& on_error) {
    if (source == "find") return StreamFind(options.path, on_batch, on_error);
    if (source == "perf-text") return StreamPerfText(options.path, on_batch, on_error);
    return StreamPerf(options.path, options.sqlite_timeout, on_batch, on_error);
  };

  // Pass 1: validate everything and collect the solver names; nothing is written.
  if (options.progress) options.progress("entries parsed", 0, 0);
  std::vector<std::string> errors;
  std::set<std::string> names;
  absl::Status read = stream(
      [&](const Batch& b) {
        report.keys += static_cast<int64_t>(b.problems.size());
        report.entries += static_cast<int64_t>(b.entries.size());
        for (const auto& e : b.entries) names.insert(e.solver);
        if (options.progress) options.progress("entries parsed", report.entries, 0);
        return absl::OkStatus();
      },
      [&](std::string e) { errors.push_back(std::move(e)); });
  if (!read.ok()) return read;
  if (options.progress) options.progress("entries parsed", report.entries, report.entries);
  if (!errors.empty()) {
    if (!options.skip_invalid) {
      std::string msg = absl::StrCat(errors.size(), " invalid entr",
                                     errors.size() == 1 ? "y" : "ies", " in ", options.path,
                                     "; nothing was imported (--skip_invalid skips them):");
      for (const std::string& e : errors) absl::StrAppend(&msg, "\n  ", e);
      return absl::InvalidArgumentError(msg);
    }
    for (const std::string& e : errors) spdlog::warn("import-db: skipped {}", e);
    report.skipped = static_cast<int64_t>(errors.size());
  }
  errors.clear();
  errors.shrink_to_fit();
  for (const std::string& n : names) {
    if (registry.ByName(n) == nullptr) report.unknown_solvers.push_back(n);
  }
  const std::vector<schema::SolverRecord> known = SolverRecords(registry);

  // Pass 2: the file again, batch by batch, in one transaction (all or nothing).
  schema::ConfigStore configs(db);
  schema::SolverStore solvers(db);
  // The solver rows first, in a short transaction of their own: EnsureNames locks the whole
  // solver table (FOR UPDATE), and every live report's foreign-key check needs those rows, so
  // they must not stay locked for the length of the import. Solver rows are names only: one
  // left behind by a failed import is never a result and never a job.
  std::map<std::string, int64_t> solver_ids;
  absl::Status named = db.Transaction([&](schema::Connection& c) -> absl::Status {
    report.solvers_added = 0;
    auto ids = solvers.EnsureNames(c, std::vector<std::string>(names.begin(), names.end()), known,
                                   &report.solvers_added);
    if (!ids.ok()) return ids.status();
    solver_ids = *std::move(ids);
    return absl::OkStatus();
  });
  if (!named.ok()) return named;
  const ImportDbReport base = report;
  absl::Status st = db.Transaction([&](schema::Connection& c) -> absl::Status {
    report = base;  // the body may run again after a deadlock
    std::vector<int64_t> all_ids;  // every config id, for the new/known count
    int64_t written = 0;
    if (options.progress) options.progress("entries written", 0, report.entries);
    absl::Status body = stream(
        [&](const Batch& b) -> absl::Status {
          int64_t inserted = 0;
          auto ids = configs.Upsert(c, b.problems, &inserted);
          if (!ids.ok()) return ids.status();
          report.configs_new += inserted;
          all_ids.insert(all_ids.end(), ids->begin(), ids->end());
          if (options.tag) {
            auto tags = configs.AddTag(c, *ids, *options.tag, false);
            if (!tags.ok()) return tags.status();
            report.tags_added += *tags;
          }
          absl::StatusOr<schema::UpsertCounts> counts;
          if (report.format == "find") {
            std::vector<schema::FindResultRecord> rows;
            rows.reserve(b.entries.size());
            for (const auto& e : b.entries) {
              rows.push_back(
                  {(*ids)[e.problem], solver_ids.at(e.solver), e.time, e.workspace, e.alg});
            }
            counts = schema::ImportedResultStore::UpsertFind(c, options.session_id, rows);
          } else {
            std::vector<schema::PerfResultRecord> rows;
            rows.reserve(b.entries.size());
            for (const auto& e : b.entries) {
              rows.push_back({(*ids)[e.problem], solver_ids.at(e.solver), e.params});
            }
            counts = schema::ImportedResultStore::UpsertPerf(c, options.session_id, rows);
          }
          if (!counts.ok()) return counts.status();
          report.results_added += counts->added;
          report.results_existing += counts->existing;
          written += static_cast<int64_t>(b.entries.size());
          if (options.progress) options.progress("entries written", written, report.entries);
          return absl::OkStatus();
        },
        [](std::string) {});  // reported (or refused) by pass 1
    if (!body.ok()) return body;
    std::sort(all_ids.begin(), all_ids.end());
    const auto unique = std::unique(all_ids.begin(), all_ids.end()) - all_ids.begin();
    report.configs_known = static_cast<int64_t>(unique) - report.configs_new;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  spdlog::info("import-db {} session {}: {} keys, {} entries, {} results new, {} existing",
               options.path, options.session_id, report.keys, report.entries,
               report.results_added, report.results_existing);
  return report;
}

}  // namespace tuna::admin
