#include "jobs/job_state.h"

namespace tuna::jobs {

const char* ToString(JobStep step) { return step == JobStep::kCompile ? "compile" : "eval"; }

const char* ToString(JobState state) {
  switch (state) {
    case JobState::kNew: return "new";
    case JobState::kCompileStart: return "compile_start";
    case JobState::kCompiled: return "compiled";
    case JobState::kEvalStart: return "eval_start";
    case JobState::kEvaluated: return "evaluated";
    case JobState::kErrored: return "errored";
    case JobState::kFailed: return "failed";
    case JobState::kNotApplicable: return "not_applicable";
    case JobState::kCancelled: return "cancelled";
  }
  return "?";
}

const std::vector<JobState>& AllJobStates() {
  static const auto* all = new std::vector<JobState>{
      JobState::kNew,       JobState::kCompileStart, JobState::kCompiled,
      JobState::kEvalStart, JobState::kEvaluated,    JobState::kErrored,
      JobState::kFailed,    JobState::kNotApplicable, JobState::kCancelled};
  return *all;
}

std::optional<JobState> ParseJobState(std::string_view text) {
  for (JobState s : AllJobStates()) {
    if (text == ToString(s)) return s;
  }
  return std::nullopt;
}

bool IsTerminal(JobState state) {
  return state == JobState::kEvaluated || state == JobState::kFailed ||
         state == JobState::kNotApplicable || state == JobState::kCancelled;
}

bool IsLeased(JobState state) {
  return state == JobState::kCompileStart || state == JobState::kEvalStart;
}

bool IsUnfinished(JobState state) {
  return state == JobState::kNew || state == JobState::kCompileStart ||
         state == JobState::kCompiled || state == JobState::kEvalStart;
}

JobState ReadyState(JobStep step) {
  return step == JobStep::kCompile ? JobState::kNew : JobState::kCompiled;
}
JobState LeasedState(JobStep step) {
  return step == JobStep::kCompile ? JobState::kCompileStart : JobState::kEvalStart;
}
JobState DoneState(JobStep step) {
  return step == JobStep::kCompile ? JobState::kCompiled : JobState::kEvaluated;
}

const char* ToString(Blame blame) {
  switch (blame) {
    case Blame::kJob: return "job";
    case Blame::kHost: return "host";
    case Blame::kUnsupported: return "unsupported";
  }
  return "job";
}

}  // namespace tuna::jobs
