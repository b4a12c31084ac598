// `tuna import-db` (MITuna's import_db): an existing MIOpen find db (`*.fdb.txt`, current and
// legacy entry forms), SQLite perf db (`*.db`) or text perf db (`*.db.txt`, `*.udb.txt`, and the
// legacy `*.cd.pdb.txt` keyed like the find db) -> conv_config + find_result / perf_result of a
// session. Every key spelling of MIOpen's shipped dbs is read (tuner_core/problem/keys.h).
//
// Each key / perf-db config row becomes a config (ParseFindDbKey / FromPerfDbConfig, then the
// same ConfigHash dedup as `tuna import`). Each entry becomes one result row keyed by (session,
// config, solver); re-importing is a no-op. Solvers are matched by name: a registry solver gets
// its registry id (inserted if `tuna solvers update` has not run), any other name a placeholder
// solver row with valid=0 (schema/store/solver_store.h), so no entry of the file is lost and
// none of them ever becomes a job. Solver rows are ensured first in a short transaction of
// their own (so the solver table is not locked while the import runs; a placeholder row may
// outlive a failed import); configs, tags and results are written in one transaction.
//
// Memory: the file is streamed twice (pass 1 checks every entry and collects the solver names,
// pass 2 writes batches of 5000 keys inside the transaction), so an import holds one batch, the
// solver names, the config ids written and (find db) the keys seen, never the whole file.
//
// Validation (each failure names the find-db key and the solver): a find-db entry needs a finite
// time >= 0 ms and a workspace within int64; a perf-db row needs a non-empty solver and non-empty
// printable-ASCII params of at most 1024 bytes. Precedence: a stored result measured by tuna
// (verified, or written by a job) is never overwritten or marked by an imported entry
// (schema/store/imported_result_store.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admin/stage_progress.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"
#include "tuner_core/solver/registry.h"

namespace tuna::admin {

struct ImportDbOptions {
  int64_t session_id = 0;
  std::string path;
  std::optional<std::string> tag;  // also tag the imported configs
  bool skip_invalid = false;       // skip unparsable lines/keys instead of failing
  // A perf db (SQLite, opened read-only) must be read within this time, else DeadlineExceeded
  // (db::PerfDbReadOptions); <= 0: no limit.
  std::chrono::milliseconds sqlite_timeout{60'000};
  // "entries parsed" (pass 1: the file is read and checked), "entries written" (pass 2: the file
  // is read again and written batch by batch: configs, tags, results)
  StageProgressFn progress;
};

struct ImportDbReport {
  std::string format;             // "find" or "perf" (SQLite or text)
  int64_t keys = 0;               // find-db records / perf-db config rows used
  int64_t entries = 0;            // solver entries / perf_db rows
  int64_t skipped = 0;            // invalid lines or keys skipped (skip_invalid)
  int64_t configs_new = 0;
  int64_t configs_known = 0;
  int64_t solvers_added = 0;      // solver rows inserted (registry or placeholder)
  std::vector<std::string> unknown_solvers;  // names not in the registry
  int64_t results_added = 0;
  int64_t results_existing = 0;
  int64_t tags_added = 0;
};

// Errors: NotFound (file, session), DeadlineExceeded (perf db read past sqlite_timeout), InvalidArgument (unknown format; invalid lines, keys or
// entries, all listed, unless skip_invalid), the store's codes. Nothing is written on error.
absl::StatusOr<ImportDbReport> ImportMiopenDb(schema::Database& db,
                                              const solver::SolverRegistry& registry,
                                              const ImportDbOptions& options);

}  // namespace tuna::admin
