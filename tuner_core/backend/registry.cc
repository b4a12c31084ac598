#include "tuner_core/backend/registry.h"

#include "absl/strings/str_cat.h"

namespace tuna::backend {
namespace {

std::unique_ptr<Backend> Make(BackendKind kind, const DetectOptions& options) {
  switch (kind) {
    case BackendKind::kCuda: return NewCudaBackend(options.cuda);
    case BackendKind::kHip: return NewHipBackend(options.hip);
    case BackendKind::kCpu: return NewCpuBackend(options.cpu);
  }
  return nullptr;
}

}  // namespace

DetectOptions DetectOptions::FromEnv() {
  return DetectOptions{CpuBackendOptions::FromEnv(), CudaBackendOptions::FromEnv(),
                       HipBackendOptions::FromEnv()};
}

std::vector<DetectedBackend> DetectBackends(const DetectOptions& options) {
  std::vector<DetectedBackend> out;
  for (BackendKind kind : {BackendKind::kCuda, BackendKind::kHip, BackendKind::kCpu}) {
    DetectedBackend d{kind, Make(kind, options)};
    d.usable = d.backend->CompilerStatus().ok() || d.backend->DriverStatus().ok();
    out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<Backend>> OpenBackend(BackendKind kind, const DetectOptions& options) {
  std::unique_ptr<Backend> backend = Make(kind, options);
  if (!backend->CompilerStatus().ok() && !backend->DriverStatus().ok()) {
    return absl::UnavailableError(absl::StrCat(BackendKindName(kind), " backend unavailable: ",
                                               backend->CompilerStatus().message(), "; ",
                                               backend->DriverStatus().message()));
  }
  return backend;
}

absl::StatusOr<BackendKind> ParseBackendKind(const std::string& name) {
  if (name == "cpu") return BackendKind::kCpu;
  if (name == "cuda") return BackendKind::kCuda;
  if (name == "hip") return BackendKind::kHip;
  return absl::InvalidArgumentError(absl::StrCat("unknown backend '", name, "' (cpu, cuda, hip)"));
}

}  // namespace tuna::backend
