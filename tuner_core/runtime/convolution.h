// The convolution API of the runtime (MIOpen's Find and immediate mode over one Problem, which
// carries what MIOpen's tensor and convolution descriptors carry).
//
// Find (MIOpen convolutionocl.cpp::FindConvolution, research/MIOPEN_DB_FORMATS.md §5.2):
//   effective mode = NORMAL when MIOPEN_FIND_ENFORCE is not NONE, else MIOPEN_FIND_MODE.
//   FAST / HYBRID / DYNAMIC_HYBRID: the find db (user record, else system) is consulted first;
//     a hit returns that record's best applicable solution with its db time, compiled, without
//     benchmarking. On a miss FAST returns the fallback's first solution (no benchmark, nothing
//     written; NORMAL path if the fallback is empty), HYBRID benchmarks every applicable solver,
//     DYNAMIC_HYBRID only the dynamic ones (falling back to all when none is dynamic).
//   NORMAL: the USER find db record is reused only when this handle already has an invoker
//     for every solver in it; otherwise every applicable solver is benchmarked.
//   Benchmarking (§5.4) writes the user find db record (replacing it), fastest first, one
//   entry per solver that ran (MIOpen keeps the running best per step; tuna the real times).
// Perf configs of tunable solvers during Find (MIOpen's FindSolutionImpl, §5.1), per enforce:
//   NONE              perf db (user merged over system); absent/invalid: search if
//                     exhaustive_search, else the default config.
//   DB_UPDATE         exhaustive_search: skip the perf db, search, write; else as NONE.
//   SEARCH            as NONE with exhaustive_search forced on.
//   SEARCH_DB_UPDATE  always search and write.
//   DB_CLEAN          remove the user perf db entry, use the default config, no search.
//   "search" tunes the solver's perf config with search::Tuner (config.search_budget configs,
//   exhaustive when 0) and writes the best params to the user perf db.
// Find allocates its own buffers (the problem's x, w, y and the largest workspace), filled with
// seeded random data: unlike MIOpen's Find it takes no user buffers.
//
// Immediate mode (§5.3):
//   GetSolutionCount / GetSolution: the find-db record's applicable solvers (user else system)
//     sorted by time; on a miss the learned solver picker of the db dirs (heuristics/models.h,
//     loaded by the Handle; source "heuristics model") when it has one and the problem is in its
//     range, else the analytic fallback ranking (fallback.h); times are the analytic estimates
//     either way, and `note` says why the picker was not used. FAST Find on a miss does the same.
//     NotFound when both are empty ("not supported or fallback unsuccessful").
//   GetSolutionWorkspaceSize: 0 for solvers that never need one; InvalidArgument when the
//     solver is unknown or not applicable.
//   CompileSolution / Immediate: perf config from the perf db (no search ever), kernels from
//     the kernel cache, invoker kept in the handle. Immediate runs it once.
// Perf configs with no (valid) perf-db entry and no search: the learned predictor's best-scored
// valid config when the handle has a predictor for the solver and the problem is in range
// (params source "heuristics model"), else the solver's default config.
// With MIOPEN_ENABLE_LOGGING_CMD every run (Immediate, Run, Time) logs its MIOpenDriver line
// (command_log.h), Find logs a LogCmdFindConvolution line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/runtime/handle.h"
#include "tuner_core/solver/invoker.h"

namespace tuna::runtime {

// Where a solution (or a perf config) came from.
enum class ChoiceSource { kUserDb, kSystemDb, kFallback, kBenchmark, kSearch, kDefault, kHeuristics };
std::string_view ChoiceSourceName(ChoiceSource s);  // "user db", "system db", "fallback",
                                                    // "benchmark", "search", "default",
                                                    // "heuristics model"

struct ConvSolution {
  float time_ms = 0;         // db time, benchmark time or fallback estimate
  uint64_t workspace_bytes = 0;
  uint64_t solver_id = 0;
  std::string solver;        // name (perf/find db id)
  std::string algorithm;     // "miopenConvolutionFwdAlgoDirect", ...
  ChoiceSource source = ChoiceSource::kFallback;
  std::string params;        // perf config used (Find only; empty for non-tunable)
  ChoiceSource params_source = ChoiceSource::kDefault;
  std::string note;          // fallback only: why the heuristics picker was not used
};

// What a Find did, for tests and the driver's report.
struct FindTrace {
  FindMode effective_mode = FindMode::kNormal;
  bool find_db_hit = false;
  bool benchmarked = false;
  bool stored_find_db = false;
  std::vector<std::string> searched;  // solvers whose perf config was searched
  std::vector<std::string> cleaned;   // solvers whose user perf entry was removed (DB_CLEAN)
};

struct FindOptions {
  size_t request_count = 0;        // 0 = every solution
  bool exhaustive_search = false;  // MIOpen's exhaustiveSearch argument
  uint64_t seed = 1;               // data of the benchmark buffers
};

struct FindResult {
  std::vector<ConvSolution> solutions;  // fastest first
  FindTrace trace;
};

// Every function below takes a transposed problem (ConvMode::kTrans) as MIOpen's API does: it
// runs as its convolution (tuner_core/problem/transpose.h), whose x is the given y and whose y
// the given x (buffers are passed as the transposed problem names them); InvalidArgument when it
// has no convolution form. Commands are logged as given.
absl::StatusOr<FindResult> FindConvolution(Handle& handle, const Problem& problem,
                                           const FindOptions& options = {});

absl::StatusOr<size_t> GetSolutionCount(Handle& handle, const Problem& problem);
absl::StatusOr<std::vector<ConvSolution>> GetSolution(Handle& handle, const Problem& problem,
                                                      size_t max_count = 0);
absl::StatusOr<uint64_t> GetSolutionWorkspaceSize(Handle& handle, const Problem& problem,
                                                  uint64_t solver_id);
absl::Status CompileSolution(Handle& handle, const Problem& problem, uint64_t solver_id);
// Runs the solution once (asynchronous on GPUs; call handle.device().Synchronize()).
// InvalidArgument when buffers are missing or the workspace is too small.
absl::Status Immediate(Handle& handle, const Problem& problem, uint64_t solver_id,
                       const solver::ConvBuffers& buffers);
// A run after Find (MIOpen's miopenConvolutionForward etc.): like Immediate, logged without -S 0.
absl::Status RunConvolution(Handle& handle, const Problem& problem, uint64_t solver_id,
                            const solver::ConvBuffers& buffers);
// Times `iterations` runs (device time per run, ms). Logged like RunConvolution.
absl::StatusOr<std::vector<double>> TimeConvolution(Handle& handle, const Problem& problem,
                                                    uint64_t solver_id,
                                                    const solver::ConvBuffers& buffers,
                                                    int iterations);
// The workspace a prepared (or preparable) solution needs.
absl::StatusOr<const PreparedInvoker*> PrepareSolution(Handle& handle, const Problem& problem,
                                                       uint64_t solver_id);

}  // namespace tuna::runtime
