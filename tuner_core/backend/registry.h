// Finding the backends this host can use. One binary runs everywhere: a backend whose
// libraries are missing is reported with the reason, never a crash.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner_core/backend/backend.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/backend/hip/hip_backend.h"

namespace tuna::backend {

struct DetectOptions {
  CpuBackendOptions cpu;
  CudaBackendOptions cuda;
  HipBackendOptions hip;
  static DetectOptions FromEnv();  // each backend's FromEnv
};

// One entry per backend kind, in the order cuda, hip, cpu. `backend` is always set (its
// CompilerStatus/DriverStatus say what works); `usable` is true when it can compile or run.
struct DetectedBackend {
  BackendKind kind;
  std::unique_ptr<Backend> backend;
  bool usable = false;
};

std::vector<DetectedBackend> DetectBackends(const DetectOptions& options);

// The backend of `kind` (e.g. from a worker's --backend flag); Unavailable with the reason when
// it can neither compile nor run on this host.
absl::StatusOr<std::unique_ptr<Backend>> OpenBackend(BackendKind kind, const DetectOptions& options);

// "cpu" / "cuda" / "hip" → kind; InvalidArgument otherwise.
absl::StatusOr<BackendKind> ParseBackendKind(const std::string& name);

}  // namespace tuna::backend
