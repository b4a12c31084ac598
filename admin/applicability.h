// `tuna applicability update` (MITuna's --update_applicability): for a session's target, every
// solver x config, computed on the CPU from the solvers' IsApplicable, in parallel, then
// upserted into solver_applicability with the reason for "no".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admin/stage_progress.h"
#include "schema/store/applicability_store.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::admin {

struct SolverRef {
  int64_t id = 0;
  const solver::Solver* solver = nullptr;
};

// Pure computation: one record per (config, solver), config-major. A solver whose directions do
// not include the problem's is "not applicable" with that reason without asking it. `threads`
// <= 0 uses every core. Thread-safe (solvers are const and stateless). `progress` (configs
// checked, configs) is called on the calling thread only.
std::vector<schema::ApplicabilityRecord> ComputeApplicability(
    const solver::Target& target, const std::vector<schema::StoredConfig>& configs,
    const std::vector<SolverRef>& solvers, int threads = 0,
    const schema::ProgressFn& progress = nullptr);

struct ApplicabilityOptions {
  int64_t session_id = 0;
  std::optional<std::string> tag;  // only configs with this tag (default: all)
  int threads = 0;                 // <= 0: all cores
  StageProgressFn progress;        // "configs checked", then "rows stored"
};

struct ApplicabilityReport {
  int64_t configs = 0;
  int64_t solvers = 0;
  int64_t applicable = 0;
  int64_t not_applicable = 0;
  // Configs no solver applies to (they get no job): "LINE: why" (the reason of the first solver
  // that handles the config's direction), in config order.
  std::vector<std::string> unsolved;
  double compute_seconds = 0;
  double store_seconds = 0;
};

// The solvers used are the registry's that are valid in the solver table (matched by id and
// name). Errors: NotFound (no such session), FailedPrecondition (no valid registry solver in the
// table: run `tuna solvers update`), InvalidArgument (the session's arch is unknown to
// TargetForArch), the store's codes.
absl::StatusOr<ApplicabilityReport> UpdateApplicability(schema::Database& db,
                                                        const solver::SolverRegistry& registry,
                                                        const ApplicabilityOptions& options);

// "LINE: why" for each config that no record of its block applies to (records as
// ComputeApplicability returns them, `per_config` per config); why: the reason of the first
// solver that handles the config's direction.
std::vector<std::string> UnsolvedConfigs(const std::vector<schema::StoredConfig>& configs,
                                         const std::vector<schema::ApplicabilityRecord>& records,
                                         size_t per_config);

// Registry solvers that are valid rows of the solver table (shared with job loading).
absl::StatusOr<std::vector<SolverRef>> ValidRegistrySolvers(schema::Database& db,
                                                            const solver::SolverRegistry& registry);

}  // namespace tuna::admin
