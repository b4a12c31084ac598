// TunaHopperWrw (id 1019): backward weights on Hopper's warpgroup tensor cores
// (kernels/conv/hopper_wrw.cu, built for sm_90a): implicit GEMM, FP16/BF16 in, FP32 accumulate,
// wgmma reading both operands transposed (MN-major) from a cp.async-fed, 128-byte-swizzled
// shared-memory ring.
//
//   GEMM per group: M = K/G output channels, N = R*S*C/G filter columns (c fastest), reduction
//   over the N*Ho*Wo output pixels.
//
// Split-K is deterministic: with SPLIT_K > 1 each pixel range writes its FP32 partial dw into its
// own workspace slice and tuna_hopper_wrw_reduce sums the slices in slice order, so re-runs give
// identical bits. Workspace: SPLIT_K * K * R * S * C/G floats (0 when SPLIT_K = 1).
//
// Covers: conv mode, 2D, x, dy and dw dense NHWC, any padding / stride / dilation / filter shape,
// any N, H, W, groups with C/G % 8 == 0, K/G % 8 == 0. Ungrouped C % 8 != 0 (the 3-channel stem)
// first copies x with its channels padded to 4 (built CHUNK=8) or to a multiple of 8 into the
// workspace, computes FP32 partials of the padded dw and drops the padding channels in the reduce
// (workspace: the copy, then SPLIT_K * K * R * S * C' floats). sm_90 targets only.
// Problem sizes (and the split count) are kernel arguments: one build serves every problem with
// the same tile config.
//
// Axes (perf-db params in this order), each the kernel's -D name except SPLIT_K:
//   TB_M    block tile rows (GEMM M = K/G output channels): 64, 128, 256
//   TB_N    block tile columns (GEMM N = R*S*C/G), also the wgmma N: 64, 128, 256
//   WG_M    consumer warpgroups splitting TB_M (each owns a multiple of 64 rows): 1, 2, 4
//   STAGES  depth of the shared-memory ring (64 pixels per stage): 3..8
//   SPLIT_K pixel ranges reduced through the workspace (the solver's: a kernel argument).
// Validity is analytic: shared memory, at most 128 FP32 accumulators per thread, no tile twice
// the GEMM extent, splits only while the grid is short of filling the GPU. Thread-safe and
// stateless.
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class HopperWrwSolver : public gpu::FastSolver {
 public:
  HopperWrwSolver() : FastSolver("TunaHopperWrw", Direction::kBackwardWeights, /*dynamic=*/true) {}

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory of a config: the ring plus 1 KiB to align it to the swizzle's period.
  static uint64_t SharedBytes(int tb_m, int tb_n, int stages);
};

}  // namespace tuna::solver
