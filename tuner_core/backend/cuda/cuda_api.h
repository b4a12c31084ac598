// The CUDA driver API and NVRTC entry points the cuda backend uses, declared here so that tuna
// builds without CUDA headers (a fresh Debian machine has none) and dlopens libcuda.so.1 and
// libnvrtc at run time. tests/backend/cuda_api_header_test checks every declaration below
// against the real cuda.h / nvrtc.h with the system compiler when those headers exist.
//
// Two modes:
//   default                        tuna's own types in namespace tuna::cuda_api;
//   TUNA_CUDA_API_SYSTEM_TYPES     the real types from <cuda.h>/<nvrtc.h> (included first):
//                                  only the header test uses it, to compare the signatures.
// Self-contained (no tuna or absl includes) so the test can compile it with plain g++.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tuna::cuda_api {

#if defined(TUNA_CUDA_API_SYSTEM_TYPES)
using ::cuuint32_t;
using ::cuuint64_t;
using ::CUtensorMap;
using ::CUtensorMapDataType;
using ::CUtensorMapInterleave;
using ::CUtensorMapSwizzle;
using ::CUtensorMapL2promotion;
using ::CUtensorMapFloatOOBfill;
using ::CUcontext;
using ::CUdevice;
using ::CUdevice_attribute;
using ::CUdeviceptr;
using ::CUevent;
using ::CUfunction;
using ::CUfunction_attribute;
using ::CUmodule;
using ::CUresult;
using ::CUstream;
using ::nvrtcProgram;
using ::nvrtcResult;
#else
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUevent_st;
struct CUstream_st;
struct _nvrtcProgram;
// The enums are int-sized C enums in the real headers; ints here keep the ABI and let the
// constants below be the one list to check.
using CUresult = int;
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using nvrtcResult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUevent = CUevent_st*;
using CUstream = CUstream_st*;
using nvrtcProgram = _nvrtcProgram*;
using cuuint32_t = std::uint32_t;
using cuuint64_t = std::uint64_t;
struct alignas(128) CUtensorMap {  // CUDA 13 headers align it to 128 (12.x: 64)
  cuuint64_t opaque[16];
};
enum CUtensorMapDataType : int {};
enum CUtensorMapInterleave : int {};
enum CUtensorMapSwizzle : int {};
enum CUtensorMapL2promotion : int {};
enum CUtensorMapFloatOOBfill : int {};
#endif

// Constants, named as in cuda.h with a k prefix. The header test checks each one.
#define TUNA_CUDA_CONSTANTS(X)                            \
  X(CUDA_SUCCESS, 0)                                      \
  X(CUDA_ERROR_INVALID_VALUE, 1)                          \
  X(CUDA_ERROR_OUT_OF_MEMORY, 2)                          \
  X(CUDA_ERROR_NOT_INITIALIZED, 3)                        \
  X(CUDA_ERROR_NO_DEVICE, 100)                            \
  X(CUDA_ERROR_INVALID_DEVICE, 101)                       \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)                    \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)                    \
  X(CUDA_ERROR_INVALID_PTX, 218)                          \
  X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)              \
  X(CUDA_ERROR_NOT_FOUND, 500)                            \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                      \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)              \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                       \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)                 \
  X(CUDA_ERROR_ASSERT, 710)                               \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)                 \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)                  \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)                   \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)                \
  X(CUDA_ERROR_INVALID_PC, 718)                           \
  X(CUDA_ERROR_LAUNCH_FAILED, 719)                        \
  X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 8)   \
  X(CU_DEVICE_ATTRIBUTE_WARP_SIZE, 10)                    \
  X(CU_DEVICE_ATTRIBUTE_CLOCK_RATE, 13)                   \
  X(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 16)         \
  X(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, 38)                \
  X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 75)     \
  X(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 76)     \
  X(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, 97) \
  X(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 8)   \
  X(CU_EVENT_DEFAULT, 0)                                  \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT8, 0)                     \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT16, 1)                    \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT32, 2)                    \
  X(CU_TENSOR_MAP_DATA_TYPE_UINT64, 4)                    \
  X(CU_TENSOR_MAP_INTERLEAVE_NONE, 0)                     \
  X(CU_TENSOR_MAP_SWIZZLE_NONE, 0)                        \
  X(CU_TENSOR_MAP_SWIZZLE_32B, 1)                         \
  X(CU_TENSOR_MAP_SWIZZLE_64B, 2)                         \
  X(CU_TENSOR_MAP_SWIZZLE_128B, 3)                        \
  X(CU_TENSOR_MAP_L2_PROMOTION_L2_128B, 2)                \
  X(CU_TENSOR_MAP_L2_PROMOTION_L2_256B, 3)                \
  X(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, 0)                 \
  X(NVRTC_SUCCESS, 0)                                     \
  X(NVRTC_ERROR_COMPILATION, 6)

#define TUNA_CUDA_DECLARE_CONSTANT(name, value) inline constexpr int k##name = value;
TUNA_CUDA_CONSTANTS(TUNA_CUDA_DECLARE_CONSTANT)
#undef TUNA_CUDA_DECLARE_CONSTANT

// Driver API functions: X(name, parameter list). All return CUresult. The _v2 names are the
// symbols that cuda.h's unversioned macros (cuMemAlloc → cuMemAlloc_v2) resolve to.
#define TUNA_CUDA_DRIVER_FUNCTIONS(X)                                                        \
  X(cuInit, (unsigned int flags))                                                            \
  X(cuDriverGetVersion, (int* version))                                                      \
  X(cuGetErrorString, (CUresult error, const char** str))                                    \
  X(cuGetErrorName, (CUresult error, const char** str))                                      \
  X(cuDeviceGet, (CUdevice * device, int ordinal))                                           \
  X(cuDeviceGetCount, (int* count))                                                          \
  X(cuDeviceGetName, (char* name, int len, CUdevice dev))                                    \
  X(cuDeviceGetAttribute, (int* value, CUdevice_attribute attrib, CUdevice dev))             \
  X(cuDeviceTotalMem_v2, (size_t * bytes, CUdevice dev))                                     \
  X(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev))                              \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice dev))                                            \
  X(cuCtxSetCurrent, (CUcontext ctx))                                                        \
  X(cuCtxSynchronize, (void))                                                                \
  X(cuModuleLoadData, (CUmodule * module, const void* image))                                \
  X(cuModuleUnload, (CUmodule hmod))                                                         \
  X(cuModuleGetFunction, (CUfunction * hfunc, CUmodule hmod, const char* name))              \
  X(cuFuncSetAttribute, (CUfunction hfunc, CUfunction_attribute attrib, int value))          \
  X(cuLaunchKernel,                                                                          \
    (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,      \
     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,                 \
     unsigned int sharedMemBytes, CUstream hStream, void** kernelParams, void** extra))      \
  X(cuMemAlloc_v2, (CUdeviceptr * dptr, size_t bytesize))                                   \
  X(cuMemFree_v2, (CUdeviceptr dptr))                                                        \
  X(cuMemcpyHtoD_v2, (CUdeviceptr dstDevice, const void* srcHost, size_t ByteCount))        \
  X(cuMemcpyDtoH_v2, (void* dstHost, CUdeviceptr srcDevice, size_t ByteCount))              \
  X(cuMemsetD8_v2, (CUdeviceptr dstDevice, unsigned char uc, size_t N))                     \
  X(cuMemcpyDtoDAsync_v2,                                                                    \
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))      \
  X(cuEventCreate, (CUevent * phEvent, unsigned int Flags))                                  \
  X(cuEventDestroy_v2, (CUevent hEvent))                                                     \
  X(cuEventRecord, (CUevent hEvent, CUstream hStream))                                       \
  X(cuEventSynchronize, (CUevent hEvent))                                                    \
  X(cuEventElapsedTime_v2, (float* pMilliseconds, CUevent hStart, CUevent hEnd))          \
  X(cuTensorMapEncodeTiled,                                                                  \
    (CUtensorMap * tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,     \
     void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,      \
     const cuuint32_t* boxDim, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, \
     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)) \
  X(cuTensorMapEncodeIm2col,                                                                 \
    (CUtensorMap * tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,     \
     void* globalAddress, const cuuint64_t* globalDim, const cuuint64_t* globalStrides,      \
     const int* pixelBoxLowerCorner, const int* pixelBoxUpperCorner, cuuint32_t channelsPerPixel, \
     cuuint32_t pixelsPerColumn, const cuuint32_t* elementStrides, CUtensorMapInterleave interleave, \
     CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill))

// NVRTC functions: X(name, parameter list). All return nvrtcResult, except
// nvrtcGetErrorString (declared separately).
#define TUNA_NVRTC_FUNCTIONS(X)                                                              \
  X(nvrtcVersion, (int* major, int* minor))                                                  \
  X(nvrtcGetNumSupportedArchs, (int* numArchs))                                              \
  X(nvrtcGetSupportedArchs, (int* supportedArchs))                                           \
  X(nvrtcCreateProgram,                                                                      \
    (nvrtcProgram * prog, const char* src, const char* name, int numHeaders,                 \
     const char* const* headers, const char* const* includeNames))                           \
  X(nvrtcDestroyProgram, (nvrtcProgram * prog))                                              \
  X(nvrtcCompileProgram, (nvrtcProgram prog, int numOptions, const char* const* options))    \
  X(nvrtcGetPTXSize, (nvrtcProgram prog, size_t * ptxSizeRet))                               \
  X(nvrtcGetPTX, (nvrtcProgram prog, char* ptx))                                             \
  X(nvrtcGetCUBINSize, (nvrtcProgram prog, size_t * cubinSizeRet))                           \
  X(nvrtcGetCUBIN, (nvrtcProgram prog, char* cubin))                                         \
  X(nvrtcGetProgramLogSize, (nvrtcProgram prog, size_t * logSizeRet))                        \
  X(nvrtcGetProgramLog, (nvrtcProgram prog, char* log))

#define TUNA_CUDA_DECLARE_DRIVER_PFN(name, params) using PFN_##name = CUresult(*) params;
#define TUNA_CUDA_DECLARE_NVRTC_PFN(name, params) using PFN_##name = nvrtcResult(*) params;
TUNA_CUDA_DRIVER_FUNCTIONS(TUNA_CUDA_DECLARE_DRIVER_PFN)
TUNA_NVRTC_FUNCTIONS(TUNA_CUDA_DECLARE_NVRTC_PFN)
#undef TUNA_CUDA_DECLARE_DRIVER_PFN
#undef TUNA_CUDA_DECLARE_NVRTC_PFN
using PFN_nvrtcGetErrorString = const char* (*)(nvrtcResult result);

// The loaded entry points (null when the library or symbol is absent).
struct DriverApi {
#define TUNA_CUDA_MEMBER(name, params) PFN_##name name = nullptr;
  TUNA_CUDA_DRIVER_FUNCTIONS(TUNA_CUDA_MEMBER)
#undef TUNA_CUDA_MEMBER
};

struct NvrtcApi {
#define TUNA_CUDA_MEMBER(name, params) PFN_##name name = nullptr;
  TUNA_NVRTC_FUNCTIONS(TUNA_CUDA_MEMBER)
#undef TUNA_CUDA_MEMBER
  PFN_nvrtcGetErrorString nvrtcGetErrorString = nullptr;
};

}  // namespace tuna::cuda_api
