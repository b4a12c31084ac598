// Kernel sources shared by the backend tests.
#pragma once

#include <string>

#include "tuner_core/backend/backend.h"

namespace tuna::backend::testing {

// CUDA/HIP-common source exercising kernels/common/portability.h. Needs -DTUNA_SCALE=<float>.
inline constexpr char kGpuSource[] = R"src(
#include "common/portability.h"
#ifndef TUNA_SCALE
#error "TUNA_SCALE must be defined with -D"
#endif

TUNA_GLOBAL void vector_add(const float* TUNA_RESTRICT a, const float* TUNA_RESTRICT b,
                            float* TUNA_RESTRICT c, int n) {
  int i = TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (i < n) c[i] = a[i] + TUNA_SCALE * b[i];
}

// One warp per block: out[block] = sum of the warp's inputs (every lane must agree).
TUNA_GLOBAL void warp_sum(const float* in, float* out) {
  float v = in[TUNA_BID_X * TUNA_WARP_SIZE + TUNA_LANE_ID];
  float s = tuna_warp_sum(v);
  float lane0 = tuna_shfl(s, 0);
  if (TUNA_LANE_ID == 0) out[TUNA_BID_X] = (s == lane0) ? s : -1.0f;
}

// Rounds through fp16 and bf16 storage types.
TUNA_GLOBAL void round_trip(const float* in, float* via_half, float* via_bf16, int n) {
  int i = TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (i >= n) return;
  via_half[i] = tuna_to_float(tuna_from_float<tuna_half>(in[i]));
  via_bf16[i] = tuna_to_float(tuna_from_float<tuna_bf16>(in[i]));
}

// Reverses each block's slice through dynamic shared memory.
TUNA_GLOBAL void smem_reverse(const float* in, float* out) {
  TUNA_DYNAMIC_SHARED(float, s);
  int t = TUNA_TID_X;
  s[t] = in[TUNA_BID_X * TUNA_BDIM_X + t];
  TUNA_SYNC();
  out[TUNA_BID_X * TUNA_BDIM_X + t] = s[TUNA_BDIM_X - 1 - t];
}

// Writes far outside any allocation: used to check that a faulting kernel maps to
// "context lost".
TUNA_GLOBAL void poke(float* p, long long offset) { p[offset] = 1.0f; }
)src";

inline constexpr char kCpuSource[] = R"src(
#include "cpu/cpu_kernel.h"
#ifndef TUNA_SCALE
#error "TUNA_SCALE must be defined with -D"
#endif

// c[i] = a[i] + TUNA_SCALE * b[i]; one block of launch->block.x elements per call.
TUNA_CPU_KERNEL(vector_add) {
  const float* a = tuna_arg<const float*>(args, 0);
  const float* b = tuna_arg<const float*>(args, 1);
  float* c = tuna_arg<float*>(args, 2);
  int n = tuna_arg<int>(args, 3);
  for (unsigned t = 0; t < launch->block.x; ++t) {
    long i = (long)launch->block_idx.x * launch->block.x + t;
    if (i < n) c[i] = a[i] + TUNA_SCALE * b[i];
  }
}

// Reverses each block's slice through the block's shared scratch.
TUNA_CPU_KERNEL(smem_reverse) {
  const float* in = tuna_arg<const float*>(args, 0);
  float* out = tuna_arg<float*>(args, 1);
  float* s = static_cast<float*>(launch->shared);
  unsigned bd = launch->block.x, base = launch->block_idx.x * bd;
  for (unsigned t = 0; t < bd; ++t) s[t] = in[base + t];
  for (unsigned t = 0; t < bd; ++t) out[base + t] = s[bd - 1 - t];
}
)src";

// The request that compiles kGpuSource (all its entries) for a GPU arch.
inline CompileRequest GpuRequest(const std::string& arch) {
  CompileRequest req;
  req.source = kGpuSource;
  req.source_name = "portable.cu";
  req.entries = {"vector_add", "warp_sum", "round_trip", "smem_reverse", "poke"};
  req.options = {"-DTUNA_SCALE=2.0f"};
  req.arch = arch;
  return req;
}

// The request that compiles kCpuSource for a cpu arch ("cpu-x86_64").
inline CompileRequest CpuRequest(const std::string& arch) {
  CompileRequest req;
  req.source = kCpuSource;
  req.source_name = "vector_add.cc";
  req.entries = {"vector_add", "smem_reverse"};
  req.options = {"-DTUNA_SCALE=2.0f"};
  req.arch = arch;
  return req;
}

}  // namespace tuna::backend::testing
