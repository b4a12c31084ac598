// The HIP runtime and hiprtc entry points the hip backend dlopens. Types and signatures come
// from Debian's HIP headers (ROCm 5.2, types only: nothing links libamdhip64), so they cannot
// drift from the declarations. The exported `hipGetDeviceProperties` keeps the 5.x struct
// layout in ROCm 6 (the 6.x layout is `hipGetDevicePropertiesR0600`), so 5.2 headers suit both.
#pragma once

#include <hip/hip_runtime_api.h>
#include <hip/hiprtc.h>

namespace tuna::hip_api {

// X(name): a runtime function whose type is decltype(&name).
#define TUNA_HIP_RUNTIME_FUNCTIONS(X) \
  X(hipInit)                          \
  X(hipDriverGetVersion)              \
  X(hipRuntimeGetVersion)             \
  X(hipGetErrorName)                  \
  X(hipGetErrorString)                \
  X(hipGetDeviceCount)                \
  X(hipGetDeviceProperties)           \
  X(hipSetDevice)                     \
  X(hipFree)                          \
  X(hipMemcpyHtoD)                    \
  X(hipMemcpyDtoH)                    \
  X(hipMemsetD8)                      \
  X(hipMemcpyDtoDAsync)               \
  X(hipModuleLoadData)                \
  X(hipModuleUnload)                  \
  X(hipModuleGetFunction)             \
  X(hipModuleLaunchKernel)            \
  X(hipDeviceSynchronize)             \
  X(hipEventCreate)                   \
  X(hipEventDestroy)                  \
  X(hipEventRecord)                   \
  X(hipEventSynchronize)              \
  X(hipEventElapsedTime)

#define TUNA_HIPRTC_FUNCTIONS(X) \
  X(hiprtcVersion)               \
  X(hiprtcGetErrorString)        \
  X(hiprtcCreateProgram)         \
  X(hiprtcDestroyProgram)        \
  X(hiprtcCompileProgram)        \
  X(hiprtcGetProgramLogSize)     \
  X(hiprtcGetProgramLog)         \
  X(hiprtcGetCodeSize)           \
  X(hiprtcGetCode)

struct RuntimeApi {
#define TUNA_HIP_MEMBER(name) decltype(&::name) name = nullptr;
  TUNA_HIP_RUNTIME_FUNCTIONS(TUNA_HIP_MEMBER)
#undef TUNA_HIP_MEMBER
  // Overloaded in C++ (a template convenience form), so spelled out.
  hipError_t (*hipMalloc)(void** ptr, size_t size) = nullptr;
};

struct RtcApi {
#define TUNA_HIP_MEMBER(name) decltype(&::name) name = nullptr;
  TUNA_HIPRTC_FUNCTIONS(TUNA_HIP_MEMBER)
#undef TUNA_HIP_MEMBER
};

}  // namespace tuna::hip_api
