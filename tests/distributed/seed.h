// Test and benchmark data for the work queue: a session, solvers, configs and jobs inserted with
// plain SQL (fast enough for 200k jobs), plus a tiny tunable test solver for validation tests.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "tuner_core/solver/registry.h"

namespace tuna::testing {

struct Seeded {
  int64_t session_id = 0;
  std::vector<int64_t> solver_ids;
  int64_t configs = 0;
  int64_t jobs = 0;
};

// One session (arch, backend upper case, num_cu), `solvers` solvers named TestSolver<k> (ids
// 9001..) unless `solver_names` is given, `configs` conv_config rows (distinct batch sizes of a
// 3x3 fp32 forward conv) and one job per (config, solver) of `kind` in state `state`.
absl::StatusOr<Seeded> SeedQueue(schema::Database& db, int64_t configs, int solvers,
                                 const std::string& kind = "perf",
                                 const std::string& state = "new",
                                 const std::string& arch = "cpu-test", int num_cu = 4,
                                 const std::string& backend = "CPU",
                                 const std::vector<std::string>& solver_names = {});

// A registry with one tunable solver "TestSolver9001" (axis tile in {1, 2, 4}; tile 4 invalid)
// and one non-tunable "TestSolver9002". Their GetSolution fails (never run here).
std::unique_ptr<solver::SolverRegistry> MakeTestRegistry();

}  // namespace tuna::testing
