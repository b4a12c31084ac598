// The CUDA backend: NVRTC compiles (no device needed), the driver API runs. Both libraries are
// dlopen'ed (libcuda.so.1, libnvrtc.so.13/.12), so the binary builds and runs without CUDA.
#pragma once

#include <memory>
#include <string>

#include "tuner_core/backend/backend.h"

namespace tuna::backend {

struct CudaBackendOptions {
  std::string driver_path;  // libcuda.so.1 override (default: the dynamic loader's search)
  std::string nvrtc_path;   // libnvrtc override (default: sonames, /usr/local/cuda, python pkgs)

  // driver_path from $TUNA_CUDA_DRIVER_PATH, nvrtc_path from $TUNA_NVRTC_PATH.
  static CudaBackendOptions FromEnv();
};

// Never fails: CompilerStatus() / DriverStatus() say what is missing. Thread-safe.
std::unique_ptr<Backend> NewCudaBackend(const CudaBackendOptions& options);

}  // namespace tuna::backend
