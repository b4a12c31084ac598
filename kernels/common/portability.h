// The one portability header of tuna's GPU kernels: CUDA (NVRTC) and HIP (hiprtc) sources
// include it as "common/portability.h" (the backends provide it; no include path needed).
//
// Self-contained on purpose: NVRTC and hiprtc run with no CUDA/ROCm include directory on the
// worker, so nothing here includes <cuda_fp16.h> or any other header. fp16/bf16 are plain
// 16-bit storage types with conversion functions; arithmetic happens in float.
//
// Conventions for kernel sources:
//   * entries are `TUNA_GLOBAL void name(...)` (extern "C": the name in the code object is the
//     name in the source, no mangling), arguments are plain values and device pointers;
//   * specialisation comes from -DTUNA_* options only (see the solver's perf config);
//   * use TUNA_WARP_SIZE and the tuna_shfl_* functions, never a literal 32 or __shfl_*_sync.
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#define TUNA_BACKEND_HIP 1
#elif defined(__CUDACC__)
#define TUNA_BACKEND_CUDA 1
#else
#error "kernels/common/portability.h is for CUDA or HIP device compilation"
#endif

// ---- Kernel declarations -------------------------------------------------------------------
#define TUNA_GLOBAL extern "C" __global__
#define TUNA_LAUNCH_BOUNDS(max_threads) __launch_bounds__(max_threads)
#define TUNA_DEVICE __device__ __forceinline__
#define TUNA_SHARED __shared__
#define TUNA_RESTRICT __restrict__
// Dynamic shared memory: `TUNA_DYNAMIC_SHARED(float, smem);` declares `float* smem`.
#define TUNA_DYNAMIC_SHARED(type, name)                                     \
  extern __shared__ __align__(16) unsigned char tuna_dynamic_smem_raw_[]; \
  type* name = reinterpret_cast<type*>(tuna_dynamic_smem_raw_)

// ---- Thread / block indices ----------------------------------------------------------------
#define TUNA_TID_X ((int)threadIdx.x)
#define TUNA_TID_Y ((int)threadIdx.y)
#define TUNA_TID_Z ((int)threadIdx.z)
#define TUNA_BID_X ((int)blockIdx.x)
#define TUNA_BID_Y ((int)blockIdx.y)
#define TUNA_BID_Z ((int)blockIdx.z)
#define TUNA_BDIM_X ((int)blockDim.x)
#define TUNA_BDIM_Y ((int)blockDim.y)
#define TUNA_BDIM_Z ((int)blockDim.z)
#define TUNA_GDIM_X ((int)gridDim.x)
#define TUNA_GDIM_Y ((int)gridDim.y)
#define TUNA_GDIM_Z ((int)gridDim.z)
#define TUNA_SYNC() __syncthreads()

// ---- Fixed-width integers (no <cstdint> under the runtime compilers) -----------------------
typedef signed char tuna_i8;
typedef unsigned char tuna_u8;
typedef short tuna_i16;
typedef unsigned short tuna_u16;
typedef int tuna_i32;
typedef unsigned int tuna_u32;
typedef long long tuna_i64;
typedef unsigned long long tuna_u64;

// ---- Warp size ------------------------------------------------------------------------------
#if defined(TUNA_BACKEND_CUDA)
#define TUNA_WARP_SIZE 32
#elif defined(__AMDGCN_WAVEFRONT_SIZE)
#define TUNA_WARP_SIZE __AMDGCN_WAVEFRONT_SIZE
#else
#define TUNA_WARP_SIZE 64  // gfx9 (CDNA); RDNA compiles wave32 and defines the macro
#endif
#define TUNA_LANE_ID ((int)(threadIdx.x % TUNA_WARP_SIZE))

// ---- Shuffles (whole-warp; `width` a power of two <= TUNA_WARP_SIZE) ------------------------
#if defined(TUNA_BACKEND_CUDA)
#define TUNA_FULL_MASK 0xffffffffu
template <typename T>
TUNA_DEVICE T tuna_shfl(T v, int src_lane, int width = TUNA_WARP_SIZE) {
  return __shfl_sync(TUNA_FULL_MASK, v, src_lane, width);
}
template <typename T>
TUNA_DEVICE T tuna_shfl_xor(T v, int lane_mask, int width = TUNA_WARP_SIZE) {
  return __shfl_xor_sync(TUNA_FULL_MASK, v, lane_mask, width);
}
template <typename T>
TUNA_DEVICE T tuna_shfl_down(T v, unsigned delta, int width = TUNA_WARP_SIZE) {
  return __shfl_down_sync(TUNA_FULL_MASK, v, delta, width);
}
template <typename T>
TUNA_DEVICE T tuna_shfl_up(T v, unsigned delta, int width = TUNA_WARP_SIZE) {
  return __shfl_up_sync(TUNA_FULL_MASK, v, delta, width);
}
#else
template <typename T>
TUNA_DEVICE T tuna_shfl(T v, int src_lane, int width = TUNA_WARP_SIZE) {
  return __shfl(v, src_lane, width);
}
template <typename T>
TUNA_DEVICE T tuna_shfl_xor(T v, int lane_mask, int width = TUNA_WARP_SIZE) {
  return __shfl_xor(v, lane_mask, width);
}
template <typename T>
TUNA_DEVICE T tuna_shfl_down(T v, unsigned delta, int width = TUNA_WARP_SIZE) {
  return __shfl_down(v, delta, width);
}
template <typename T>
TUNA_DEVICE T tuna_shfl_up(T v, unsigned delta, int width = TUNA_WARP_SIZE) {
  return __shfl_up(v, delta, width);
}
#endif

// Sum over the lanes of a warp; every lane gets the total.
template <typename T>
TUNA_DEVICE T tuna_warp_sum(T v) {
#pragma unroll
  for (int offset = TUNA_WARP_SIZE / 2; offset > 0; offset /= 2) v += tuna_shfl_xor(v, offset);
  return v;
}

// ---- Bit casts ------------------------------------------------------------------------------
TUNA_DEVICE tuna_u32 tuna_float_as_u32(float f) { return __float_as_uint(f); }
TUNA_DEVICE float tuna_u32_as_float(tuna_u32 u) { return __uint_as_float(u); }

// ---- 16-bit floats: storage types, converted to float for arithmetic -----------------------
struct __align__(2) tuna_half { tuna_u16 bits; };
struct __align__(2) tuna_bf16 { tuna_u16 bits; };

TUNA_DEVICE float tuna_half_to_float(tuna_half h) {
#if defined(TUNA_BACKEND_CUDA)
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
  return f;
#else
  _Float16 v = __builtin_bit_cast(_Float16, h.bits);
  return (float)v;
#endif
}

// Round to nearest even, as the hardware conversions do.
TUNA_DEVICE tuna_half tuna_float_to_half(float f) {
  tuna_half h;
#if defined(TUNA_BACKEND_CUDA)
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
#else
  h.bits = __builtin_bit_cast(tuna_u16, (_Float16)f);
#endif
  return h;
}

TUNA_DEVICE float tuna_bf16_to_float(tuna_bf16 b) { return tuna_u32_as_float((tuna_u32)b.bits << 16); }

// Round to nearest even; NaN stays a (quiet) NaN.
TUNA_DEVICE tuna_bf16 tuna_float_to_bf16(float f) {
  tuna_u32 u = tuna_float_as_u32(f);
  tuna_bf16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = (tuna_u16)((u >> 16) | 0x40u);
  } else {
    u += 0x7fffu + ((u >> 16) & 1u);
    b.bits = (tuna_u16)(u >> 16);
  }
  return b;
}

// Uniform loads/stores for templated kernels: tuna_to_float(x) / tuna_from_float<T>(f).
TUNA_DEVICE float tuna_to_float(float v) { return v; }
TUNA_DEVICE float tuna_to_float(tuna_half v) { return tuna_half_to_float(v); }
TUNA_DEVICE float tuna_to_float(tuna_bf16 v) { return tuna_bf16_to_float(v); }
template <typename T>
TUNA_DEVICE T tuna_from_float(float f);
template <>
TUNA_DEVICE float tuna_from_float<float>(float f) { return f; }
template <>
TUNA_DEVICE tuna_half tuna_from_float<tuna_half>(float f) { return tuna_float_to_half(f); }
template <>
TUNA_DEVICE tuna_bf16 tuna_from_float<tuna_bf16>(float f) { return tuna_float_to_bf16(f); }

// ---- Vector types ---------------------------------------------------------------------------
// float2/float4/int4 are built into both compilers. tuna_vec<T, N> is the aligned vector for
// 16-byte (or narrower) accesses to any element type: p must be aligned to sizeof(tuna_vec).
template <typename T, int N>
struct __align__(sizeof(T) * N) tuna_vec { T v[N]; };

template <typename T, int N>
TUNA_DEVICE tuna_vec<T, N> tuna_load_vec(const T* p) { return *reinterpret_cast<const tuna_vec<T, N>*>(p); }
template <typename T, int N>
TUNA_DEVICE void tuna_store_vec(T* p, const tuna_vec<T, N>& x) { *reinterpret_cast<tuna_vec<T, N>*>(p) = x; }

// ---- Architecture feature macros (tensor-core / MFMA / async-copy paths test these) ---------
#if defined(TUNA_BACKEND_CUDA) && defined(__CUDA_ARCH__)
#define TUNA_ARCH_SM __CUDA_ARCH__  // 900 for sm_90
#if __CUDA_ARCH__ >= 800
#define TUNA_HAS_CP_ASYNC 1
#endif
#if __CUDA_ARCH__ >= 900
#define TUNA_HAS_TMA 1
#endif
#endif
#if defined(TUNA_BACKEND_HIP) && (defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || \
                                  defined(__gfx941__) || defined(__gfx942__))
#define TUNA_HAS_MFMA 1
#endif
