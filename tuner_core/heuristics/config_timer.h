// Times a perf config that a tuning session never timed (`tuna heuristics eval --measure`):
// built, run, verified and timed on a local device by the tuner's own measure stage
// (search/measure: Compiler::CompileOne, then Evaluator::Evaluate: seeded inputs, the reference
// output, the verified run, L2 flush before each timed launch on GPUs, the median of the runs),
// the very path `tuna tune` times candidates with. No early drop: every pick gets its full time.
//
// One Evaluator is kept for the problem last timed (its inputs and reference are made once per
// problem; Evaluate asks problem by problem). A config that does not build, launch or verify is
// an error naming its disposition ("CompileFailed: ...", "Incorrect: ..."); a launch that times
// out leaves the device unusable and every later call Unavailable. After the time limit every
// call is DeadlineExceeded (the caller counts those as not measured, not as failures).
//
// Threads: one thread at a time. The backend and device are owned by the timer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/measure/compiler.h"
#include "tuner_core/search/measure/evaluator.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::heuristics {

struct ConfigTimerOptions {
  backend::BackendKind backend = backend::BackendKind::kCpu;
  int device = 0;
  // The session's target: the local device must have its arch (FailedPrecondition otherwise:
  // times of another device would not compare with the session's).
  std::string arch;
  double time_limit_s = 0;  // 0 = none; counted from Open
  search::EvaluatorOptions evaluator;
};

struct ConfigTimerCounts {
  int64_t timed = 0;      // passed: built, verified, timed
  int64_t failed = 0;     // did not build, launch or verify
  int64_t over_time = 0;  // asked after the time limit
};

class ConfigTimer {
 public:
  // Opens the backend and device. Unavailable when the backend cannot compile or has no such
  // device; FailedPrecondition when the device's arch is not options.arch.
  static absl::StatusOr<std::unique_ptr<ConfigTimer>> Open(const ConfigTimerOptions& options);
  ~ConfigTimer();

  // The median time (ms) of `config` of `solver` on `problem`, verified (see the file comment).
  absl::StatusOr<double> Time(const Problem& problem, const solver::Solver& solver, const solver::PerfConfig& config);

  const ConfigTimerCounts& counts() const { return counts_; }
  const std::string& device_name() const { return device_name_; }
  const solver::Target& target() const { return target_; }

 private:
  ConfigTimer() = default;
  absl::StatusOr<double> TimeNow(const Problem& problem, const solver::Solver& solver, const solver::PerfConfig& config);
  ConfigTimerOptions options_;
  std::unique_ptr<backend::Backend> backend_;
  std::unique_ptr<backend::Device> device_;
  solver::Target target_;
  std::string device_name_;
  std::unique_ptr<search::Compiler> compiler_;
  std::unique_ptr<search::Evaluator> evaluator_;  // of the problem last timed
  std::chrono::steady_clock::time_point start_;
  ConfigTimerCounts counts_;
};

}  // namespace tuna::heuristics
