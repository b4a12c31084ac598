#include "tuner_core/search/session.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::search {

absl::StatusOr<std::vector<TuneResult>> TuneProblems(const std::vector<Problem>& problems,
                                                     const SessionOptions& options,
                                                     const solver::SolverRegistry& registry,
                                                     const ResultCallback& on_result) {
  solver::Target target;
  backend::BackendKind kind;
  if (options.tune.dry_run) {
    if (options.target_arch.empty()) return absl::InvalidArgumentError("a dry run needs a target arch");
    absl::StatusOr<solver::Target> t = solver::TargetForArch(options.target_arch);
    if (!t.ok()) return t.status();
    target = *t;
    kind = target.backend;
  } else {
    absl::StatusOr<backend::BackendKind> k = backend::ParseBackendKind(options.backend);
    if (!k.ok()) return k.status();
    kind = *k;
  }
  absl::StatusOr<std::unique_ptr<backend::Backend>> be =
      backend::OpenBackend(kind, backend::DetectOptions::FromEnv());
  if (!be.ok()) return be.status();
  if (absl::Status st = (*be)->CompilerStatus(); !st.ok()) {
    return absl::UnavailableError(absl::StrCat((*be)->Name(), " compiler: ", st.message()));
  }
  std::unique_ptr<backend::Device> device;
  if (!options.tune.dry_run) {
    absl::StatusOr<std::unique_ptr<backend::Device>> d = (*be)->OpenDevice(options.device);
    if (!d.ok()) return d.status();
    device = *std::move(d);
    target = solver::TargetForDevice(kind, device->Info());
    spdlog::info("tuning on {} ({}), {} problem(s)", device->Info().name, target.arch, problems.size());
  }

  std::vector<TuneResult> results;
  {
    Tuner tuner(registry, **be, device.get(), target, options.tune);
    for (size_t i = 0; i < problems.size(); ++i) {
      absl::StatusOr<TuneResult> r =
          options.stop && options.stop() ? absl::CancelledError("not tuned: stopped") : tuner.Tune(problems[i]);
      TuneResult result;
      if (r.ok()) {
        result = *std::move(r);
      } else {
        result.problem = problems[i];
        result.arch = target.arch;
        result.dry_run = options.tune.dry_run;
        result.error = r.status().ToString();
        spdlog::error("problem {}: {}", i + 1, result.error);
      }
      bool wedged = false;
      for (const SolverTuneResult& sr : result.solvers) wedged |= sr.by_disposition.count(Disposition::kTimeout) > 0;
      if (on_result) on_result(i, result);
      results.push_back(std::move(result));
      if (wedged && i + 1 < problems.size()) {
        // A hung kernel may still occupy the device: nothing more can be measured here.
        for (size_t j = i + 1; j < problems.size(); ++j) {
          TuneResult skipped;
          skipped.problem = problems[j];
          skipped.arch = target.arch;
          skipped.error = "not tuned: the device became unusable after a launch timeout";
          if (on_result) on_result(j, skipped);
          results.push_back(std::move(skipped));
        }
        break;
      }
    }
  }
  bool wedged = false;
  for (const TuneResult& r : results)
    for (const SolverTuneResult& sr : r.solvers) wedged |= sr.by_disposition.count(Disposition::kTimeout) > 0;
  if (wedged) {
    spdlog::error("a launch timed out: leaving the device open (the process should exit)");
    (void)device.release();
    (void)be->release();
  }
  return results;
}

}  // namespace tuna::search
