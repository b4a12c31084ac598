// The CPU backend's kernel ABI, shared by the backend (which launches) and kernel sources
// (which include it as "cpu/cpu_kernel.h"; the cpu backend provides it at compile time).
//
// A CPU kernel is compiled into a shared object and called once per block of the launch grid,
// from a pool of threads (blocks run concurrently, in no particular order):
//
//   TUNA_CPU_KERNEL(vector_add) {            // (const TunaCpuLaunch* launch, void** args)
//     const float* a = tuna_arg<const float*>(args, 0);
//     ...
//     for (unsigned t = 0; t < launch->block.x; ++t) { ... }   // the block's "threads"
//   }
//
// `args` is the KernelArgs pointer array: args[i] points at argument i's value (a device
// buffer argument is its 64-bit address, i.e. a host pointer here). `launch->shared` is
// scratch memory of `shared_bytes`, private to the block being run (like GPU shared memory).
// Plain C layout only: the backend and the kernel may come from different compilers.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define TUNA_CPU_ABI_VERSION 1

struct TunaDim3 {
  uint32_t x, y, z;
};

struct TunaCpuLaunch {
  TunaDim3 grid;
  TunaDim3 block;
  TunaDim3 block_idx;  // this call's block
  void* shared;        // block-private scratch, 64-byte aligned (null when shared_bytes == 0)
  size_t shared_bytes;
  uint32_t worker;     // index of the pool thread running this block (for per-thread state)
};

typedef void (*TunaCpuKernelFn)(const struct TunaCpuLaunch* launch, void** args);

#ifdef __cplusplus
#define TUNA_CPU_EXTERN_C extern "C"
#else
#define TUNA_CPU_EXTERN_C
#endif

// The backend refuses a shared object without this symbol or with another version.
#define TUNA_CPU_ABI_SYMBOL "tuna_cpu_abi_version"

#define TUNA_CPU_KERNEL(name)                                                               \
  TUNA_CPU_EXTERN_C __attribute__((visibility("default"))) void name(                       \
      const struct TunaCpuLaunch* launch, void** args)

#if defined(TUNA_CPU_KERNEL_SOURCE)  // defined by the backend when compiling a kernel
TUNA_CPU_EXTERN_C __attribute__((visibility("default"), weak)) const int tuna_cpu_abi_version =
    TUNA_CPU_ABI_VERSION;

#ifdef __cplusplus
template <typename T>
static inline T tuna_arg(void** args, int i) {
  return *static_cast<T*>(args[i]);
}
#endif
#endif
