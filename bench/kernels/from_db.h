// --from-db: the kernels a real `tuna tune -f` session exported, as bench jobs. The perf db
// (`<arch><cu>.db`, MIOpen's SQLite format, read with tuner_core/db's PerfDbReader) holds one
// row per (config, solver) with the tuned params; each row becomes the problem of its config
// (FromPerfDbConfig), that solver (by name, from the builtin registry) and those params (parsed
// with the solver's search space for that problem and target, and checked with IsValid).
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::bench {

struct DbJob {
  Problem problem;
  const solver::Solver* solver = nullptr;
  solver::PerfConfig config;
  std::string params;  // as stored
};

struct DbSkip {
  std::string solver, params, reason;
};

struct DbJobs {
  std::string path;
  std::vector<DbJob> jobs;    // in the db's row order
  std::vector<DbSkip> skipped;  // rows that cannot run on `target` (unknown solver, bad params, ...)
};

// The perf db in `dir`: `<DbBasename(target.arch, target.num_cu)>.db` when present, else the only
// `*.db` there. NotFound when there is none; InvalidArgument when several and none is named so.
absl::StatusOr<std::string> FindPerfDb(const std::string& dir, const solver::Target& target);

// Every row of the perf db at `path`. Errors only for an unreadable file; bad rows are skipped.
absl::StatusOr<DbJobs> ReadDbJobs(const std::string& path, const solver::SolverRegistry& registry,
                                  const solver::Target& target);

}  // namespace tuna::bench
