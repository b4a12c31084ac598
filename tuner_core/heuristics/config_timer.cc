#include "tuner_core/heuristics/config_timer.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/backend/registry.h"

namespace tuna::heuristics {

absl::StatusOr<std::unique_ptr<ConfigTimer>> ConfigTimer::Open(const ConfigTimerOptions& options) {
  absl::StatusOr<std::unique_ptr<backend::Backend>> be = backend::OpenBackend(options.backend, backend::DetectOptions::FromEnv());
  if (!be.ok()) return be.status();
  if (absl::Status st = (*be)->CompilerStatus(); !st.ok()) {
    return absl::UnavailableError(absl::StrCat((*be)->Name(), " compiler: ", st.message()));
  }
  absl::StatusOr<std::unique_ptr<backend::Device>> device = (*be)->OpenDevice(options.device);
  if (!device.ok()) return device.status();
  std::unique_ptr<ConfigTimer> t(new ConfigTimer());
  t->options_ = options;
  t->target_ = solver::TargetForDevice(options.backend, (*device)->Info());
  if (!options.arch.empty() && t->target_.arch != options.arch) {
    return absl::FailedPreconditionError(absl::StrCat("device ", options.device, " (", (*device)->Info().name, ") is ",
                                                      t->target_.arch, ", the session's target ", options.arch,
                                                      ": its times would not compare"));
  }
  t->device_name_ = (*device)->Info().name;
  t->backend_ = *std::move(be);
  t->device_ = *std::move(device);
  t->compiler_ = std::make_unique<search::Compiler>(*t->backend_, t->target_);
  t->start_ = std::chrono::steady_clock::now();
  return t;
}

ConfigTimer::~ConfigTimer() {
  evaluator_.reset();  // before the device it uses
  compiler_.reset();
  device_.reset();
}

absl::StatusOr<double> ConfigTimer::Time(const Problem& problem, const solver::Solver& solver,
                                         const solver::PerfConfig& config) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (options_.time_limit_s > 0 && elapsed >= options_.time_limit_s) {
    ++counts_.over_time;
    return absl::DeadlineExceededError(absl::StrCat("measure time limit ", options_.time_limit_s, " s reached"));
  }
  absl::StatusOr<double> ms = TimeNow(problem, solver, config);
  if (ms.ok()) {
    ++counts_.timed;
  } else {
    ++counts_.failed;
  }
  return ms;
}

absl::StatusOr<double> ConfigTimer::TimeNow(const Problem& problem, const solver::Solver& solver,
                                            const solver::PerfConfig& config) {
  if (evaluator_ != nullptr && !evaluator_->healthy()) {
    return absl::UnavailableError("the device is unusable after a launch timeout");
  }
  if (evaluator_ == nullptr || !(evaluator_->problem() == problem)) {
    evaluator_.reset();
    absl::StatusOr<std::unique_ptr<search::Evaluator>> ev = search::Evaluator::Create(
        *device_, problem, options_.evaluator, &solver::SolverRegistry::Builtin(), backend_.get(), &target_);
    if (!ev.ok()) return absl::Status(ev.status().code(), absl::StrCat("preparing the problem: ", ev.status().message()));
    evaluator_ = *std::move(ev);
  }
  const search::CompiledCandidate c = compiler_->CompileOne(solver, problem, config);
  if (c.disposition != search::Disposition::kPassed) {
    return absl::AbortedError(absl::StrCat(std::string(search::DispositionName(c.disposition)), ": ", c.error));
  }
  const search::Measurement m = evaluator_->Evaluate(c, 0);
  if (m.disposition != search::Disposition::kPassed) {
    return absl::AbortedError(absl::StrCat(std::string(search::DispositionName(m.disposition)), ": ", m.error));
  }
  return m.time_ms;
}

}  // namespace tuna::heuristics
