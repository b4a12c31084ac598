// `tuna jobs load` (MITuna's load_job): one job per (config tagged TAG, solver, kind).
//
// Solvers: with only_applicable, the (config, solver) pairs that `tuna applicability update`
// found applicable for the session; otherwise every valid solver whose directions include the
// config's direction. Kinds come from the fin steps: miopen_perf_* -> perf, miopen_find_* ->
// find. A non-tunable solver gets no perf job (nothing to tune; MITuna does the same). Loading
// again adds nothing (unique (session, config, solver, kind)).
// Within a config, generic solvers' (Solver::IsGeneric) jobs get the config's last ids, the claim
// order: their searches then more often meet the config's faster results (the outclassed stop).
// On GPU targets, find jobs of non-tunable solvers (the naive reference kernels) run
// kFindOnlyAhead configs ahead of the rest (FindOnlyAhead below): they need one cheap build
// shared across configs and time slow kernels, so at a session's start they keep the devices
// busy while the tunable solvers' first builds compile (measured: bench/gpu, issue #19's cold
// start). They are also fillers (schema::JobSpec::filler): an eval claim takes them after the
// other ready jobs, so they fill the moments no tunable job is ready instead of all running
// first. On the CPU backend the device is the compiler's cores: the order stays, no fillers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "admin/stage_progress.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"
#include "schema/store/job_store.h"
#include "tuner_core/solver/registry.h"

namespace tuna::admin {

// {"perf"} / {"find"} / both, in that order. InvalidArgument names an unknown step.
absl::StatusOr<std::vector<std::string>> KindsForFinSteps(const std::vector<std::string>& steps);

// How many configs ahead of the rest find-only jobs run: their evaluators (inputs, reference)
// stay cached for the config's later jobs (EvaluatorCache holds 64 per executor).
inline constexpr size_t kFindOnlyAhead = 32;

// `jobs` (grouped by config, in claim order) reordered so that each config's jobs for which
// `find_only` holds come `ahead` configs before its other jobs: the first `ahead` configs' ones
// first, then per config i its other jobs after config (i + ahead)'s find-only ones. Otherwise
// the order is kept.
std::vector<schema::JobSpec> FindOnlyAhead(const std::vector<schema::JobSpec>& jobs,
                                           const std::function<bool(const schema::JobSpec&)>& find_only,
                                           size_t ahead);

struct LoadJobsOptions {
  int64_t session_id = 0;
  std::string tag;
  std::vector<std::string> fin_steps;  // miopen_perf_compile, miopen_perf_eval, ...
  bool only_applicable = false;        // -o
  std::string label;                   // -l, stored in job.label
  std::vector<std::string> solvers;    // -s: only these solver names (default: all)
  StageProgressFn progress;            // "jobs stored": rows inserted or found / jobs
};

struct LoadJobsReport {
  int64_t configs = 0;
  int64_t solvers = 0;  // solvers considered
  std::vector<std::string> kinds;
  int64_t added = 0;
  int64_t existing = 0;
  int64_t skipped_not_tunable = 0;  // (config, solver) pairs that got no perf job
};

// Errors: InvalidArgument (fin step, unknown -s solver), NotFound (session, or no config has the
// tag), FailedPrecondition (solvers not synced; -o without applicability for the session), the
// store's codes.
absl::StatusOr<LoadJobsReport> LoadJobs(schema::Database& db,
                                        const solver::SolverRegistry& registry,
                                        const LoadJobsOptions& options);

}  // namespace tuna::admin
