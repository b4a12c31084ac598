// TunaHopperFwd (id 1012): forward convolution on Hopper's warpgroup tensor cores
// (kernels/conv/hopper_fwd.cu, built for sm_90a): implicit GEMM, FP16/BF16 in, FP32 accumulate,
// wgmma with both operands read from a cp.async-fed, 128-byte-swizzled shared-memory ring.
//
// Covers: conv mode, 2D, x, w and y dense NHWC, any padding / stride / dilation / filter shape,
// any N, H, W, K (tails are masked), any C when ungrouped, groups with C/G % 8 == 0. C % 8 != 0
// (the 3-channel stem) first copies x and w with the channels padded to 4 (built CHUNK=8: two
// 8-byte taps per 16-byte chunk) or to a multiple of 8, into the workspace. sm_90 targets only (wgmma);
// other targets and depthwise fall to TunaFastTcFwd and the generic solvers.
// Problem sizes are kernel arguments: one build serves every problem with the same config.
//
// Axes (perf-db params in this order), each equal to the kernel's -D name:
//   TB_M    block tile rows (GEMM M = N*Ho*Wo output pixels): 64, 128, 256
//   TB_N    block tile columns (GEMM N = K/G output channels), also the wgmma N: 64, 128, 256
//   WG_M    consumer warpgroups splitting TB_M (each owns TB_M/WG_M rows, a multiple of 64)
//   STAGES  depth of the shared-memory ring (TB_K = 64 halves per stage)
//   SPLIT_K k-tiles split over a cluster of SPLIT_K blocks (gridDim.z); the FP32 partials are
//           summed through distributed shared memory in a fixed order, so re-runs give
//           identical bits (deterministic); no workspace. Only where the output tiles alone
//           leave SMs idle.
// Validity is analytic: shared memory, at most 128 FP32 accumulators per thread, no tile twice
// the GEMM extent. Thread-safe and stateless.
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class HopperFwdSolver : public gpu::FastSolver {
 public:
  HopperFwdSolver() : FastSolver("TunaHopperFwd", Direction::kForward, /*dynamic=*/true) {}

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory of a config: the ring (or the staged output tile, FP32 when split, if
  // larger) plus 1 KiB to align the ring to the swizzle's 1024-byte period.
  static uint64_t SharedBytes(int tb_m, int tb_n, int stages, int split_k);
};

}  // namespace tuna::solver
