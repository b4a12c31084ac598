// A job's vocabulary, shared by the store, the coordinator, the worker and the admin tools: the
// two steps a job goes through and the states of `job.state` (migration 001's ENUM, in its
// order). This is the one place that spells them; everything else uses the enums.
//
//   compile: ready kNew      → leased kCompileStart → done kCompiled
//   eval:    ready kCompiled → leased kEvalStart    → done kEvaluated
//   terminal: kEvaluated, kFailed, kNotApplicable, kCancelled (kErrored is in the schema but is
//   not produced: a failed step returns to its ready state, see schema/store/lease_store.h).
//
// Pure functions; thread-safe.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace tuna::jobs {

enum class JobStep { kCompile, kEval };
const char* ToString(JobStep step);  // "compile", "eval"

enum class JobState {
  kNew,
  kCompileStart,
  kCompiled,
  kEvalStart,
  kEvaluated,
  kErrored,
  kFailed,
  kNotApplicable,
  kCancelled,
};
const char* ToString(JobState state);  // the column value: "new", "compile_start", ...
// The state a column value names; nullopt for anything else.
std::optional<JobState> ParseJobState(std::string_view text);
// Every state, in the schema's order.
const std::vector<JobState>& AllJobStates();

// Finished for good: evaluated, failed, not_applicable, cancelled.
bool IsTerminal(JobState state);
// Leased to a worker (a step running): compile_start, eval_start.
bool IsLeased(JobState state);
// Still on its way to evaluated: new, compile_start, compiled, eval_start.
bool IsUnfinished(JobState state);

JobState ReadyState(JobStep step);   // kNew, kCompiled
JobState LeasedState(JobStep step);  // kCompileStart, kEvalStart
JobState DoneState(JobStep step);    // kCompiled, kEvaluated

// Whom a failed step is blamed on (docs/RELIABILITY.md, "Hosts take the blame"):
//   kJob          the job (a retry is charged; crashes count towards its quarantine);
//   kHost         the worker's host (its device cannot be opened, the executor cannot start):
//                 the job goes back to its ready state without a charge and the host's
//                 infrastructure failures are counted instead;
//   kUnsupported  this worker cannot run it (a solver, arch or version it does not know, as in
//                 a rolling upgrade): the job goes back without a charge for another worker.
enum class Blame { kJob, kHost, kUnsupported };
const char* ToString(Blame blame);  // "job", "host", "unsupported"

}  // namespace tuna::jobs
