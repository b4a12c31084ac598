// Held-out evaluation of the learned heuristics (`tuna heuristics eval`), side by side with what
// the runtime does without them: the analytic fallback (runtime/fallback.h) for the solver and
// the solver's default config for the params.
//
// Solver choice, per test problem with >= 2 timed solvers: among the solvers the session timed
// (and that are applicable), the first of each ranking; its time against the fastest one.
//   best      picked the fastest            within10  picked one within 10 % of the fastest
//   slowdown  mean of (picked time / fastest time - 1)
// Params, per (test problem, tunable solver) with samples: the tuned optimum is the fastest
// sampled config (eval_sample, passed candidates). Times come only from those samples:
//   predicted  what the runtime runs: the predictor's best valid config of the solver's space
//              (TopPredicted, k = 1, as runtime/convolution.cc); when the session never timed
//              it, the case counts as a miss (`unmeasured`, ratio +inf: never a hit, it raises
//              the median, it is left out of the mean). Without a usable predictor (out of
//              range) the runtime keeps the default config, so that is what is counted.
//   ranked     the sampled config the predictor scores best (how well it orders what was
//              measured; always timed): a diagnostic, not what the runtime runs.
//   default    the solver's DefaultConfig when it was sampled; otherwise counted in
//              `default_unmeasured` and left out (the search times the default first).
//   within15  ratio (time / optimum) <= 1.15;  median (over every case) and mean (over the
//   measured ones) of the ratio.
// With a MeasureFn (`tuna heuristics eval --measure`), a predicted or default config the session
// never timed is timed by it (config_timer.h: built, verified and timed on the local device) and
// that time is used against the session's optimum (`measured`). One it fails to build, launch or
// verify is a miss with the reason in the notes (`failed`, ratio +inf). One it cannot time for
// lack of time (DeadlineExceeded) or of a usable device (Unavailable) stays as without it
// (predicted: `unmeasured`; default: `default_unmeasured`). A config is timed at most once.
// Pure functions, thread-safe. Errors: InvalidArgument when no test problem has timings.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/heuristics/training.h"
#include "tuner_core/runtime/fallback.h"

namespace tuna::heuristics {

struct ChoiceScore {
  int64_t cases = 0;
  int64_t best = 0;
  int64_t within10 = 0;
  double mean_slowdown = 0;  // fraction: 0.05 = 5 %
};

struct ParamsScore {
  int64_t cases = 0;
  int64_t within15 = 0;
  int64_t unmeasured = 0;  // cases whose config was never timed: misses, ratio +inf
  int64_t measured = 0;    // cases timed by the MeasureFn (counted with their time)
  int64_t failed = 0;      // cases the MeasureFn could not build / run / verify: misses, ratio +inf
  double median_ratio = 0;  // +inf when half the cases or more are unmeasured
  double mean_ratio = 0;    // over the measured cases; +inf when none was measured
};

struct EvalReport {
  int64_t test_problems = 0;
  ChoiceScore picker, fallback;
  ParamsScore predicted, ranked, defaults;
  int64_t default_unmeasured = 0;
  bool measure = false;            // a MeasureFn was given
  int64_t measure_calls = 0;       // configs it was asked to time (each at most once)
  int64_t measure_unavailable = 0;  // of those, not timed: time limit or no usable device
  std::vector<std::string> notes;  // e.g. problems the models call out of range
};

// Times `config` of `solver` on `problem` (ms, > 0), or why not (see the file comment).
using MeasureFn =
    std::function<absl::StatusOr<double>(const Problem&, const solver::Solver&, const solver::PerfConfig&)>;

absl::StatusOr<EvalReport> Evaluate(const Models& models, const std::vector<const ProblemRecord*>& test,
                                    const solver::Target& target, const runtime::DeviceModel& device,
                                    const solver::SolverRegistry& registry, const MeasureFn& measure = nullptr);

}  // namespace tuna::heuristics
