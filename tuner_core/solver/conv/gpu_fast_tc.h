// TunaFastTcFwd (id 1010): tensor-core implicit-GEMM forward convolution for FP16/BF16 NHWC
// on NVIDIA sm_80+ (kernels/conv/fast_tc_fwd.cu: mma.sync m16n8k16 with FP32 accumulate,
// ldmatrix, a cp.async multi-stage pipeline over padded conflict-free shared tiles).
//
// Covers: conv mode, 2D, groups 1, any padding / stride / dilation, x, w and y dense NHWC.
// C % 8 == 0 takes 16-byte cp.async loads; other C (the 3-channel stem) a gather path.
// Not applicable on HIP targets (inline PTX). Sizes are kernel arguments (dynamic).
//
// GEMM (forward only): M = N*Ho*Wo (output pixels), N = K (output channels), K = C*R*S.
// Axes (perf-db params in this order), each the kernel's -D name:
//   TB_M, TB_N       block tile of the GEMM (TB_K is fixed at 32)
//   WARP_M, WARP_N   warp tile
//   STAGES           shared-memory ring depth.
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class FastTcFwdSolver : public gpu::FastSolver {
 public:
  FastTcFwdSolver() : FastSolver("TunaFastTcFwd", Direction::kForward, /*dynamic=*/true) {}

  // On sm_90 and later its mma.sync tiles issue HMMA only, about half of what the tensor cores
  // do with wgmma: the Hopper family (TunaHopperFwd, TunaHopperTmaFwd) won every FP16 NHWC
  // forward config of ResNet-50 on the H100/H200, so it is searched briefly where they apply.
  bool IsGeneric(const Target& target, const Problem&) const override { return target.SmVersion() >= 90; }

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory of a config (STAGES * (TB_M + TB_N) rows of 40 halves).
  static uint64_t SharedBytes(int tb_m, int tb_n, int stages);
};

}  // namespace tuna::solver
