// What happened to one candidate (CUTLASS profiler's Disposition, tuna's names). Recorded for
// every candidate (eval_sample.status), so one bad kernel is data, never an abort.
#pragma once

#include <optional>
#include <string_view>

namespace tuna::search {

enum class Disposition {
  kPassed,         // compiled, ran, verified, timed
  kCompileFailed,  // GetSolution or the compiler failed
  kLaunchFailed,   // loading or launching failed, or the device reported an error
  kIncorrect,      // ran without error but the output does not match the reference
  kTimeout,        // a launch did not complete within the watchdog's deadline
  kNotApplicable,  // the config is not valid for the problem / target
  kSkipped,        // not run (dry run, device unusable after an earlier timeout, ...)
};

// "Passed", "CompileFailed", ... (stable: stored in eval_sample.status and JSON reports).
std::string_view DispositionName(Disposition d);

}  // namespace tuna::search
