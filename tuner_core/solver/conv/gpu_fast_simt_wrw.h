// TunaFastSimtWrw (id 1016): FP32 NCHW backward weights as a register-blocked SIMT implicit GEMM
// on NVIDIA sm_80+ (kernels/conv/fast_simt_wrw.cu): M = K, N = C*R*S, reduction over the N*Ho*Wo
// pixels; 8x8 micro-tiles, 128-bit shared reads, cp.async multi-stage pipeline.
//
// Split-K is deterministic: with SPLIT_K > 1 each of the SPLIT_K pixel ranges writes its partial
// dw into its own workspace slice and tuna_simt_wrw_reduce sums the slices in slice order, so
// re-runs give identical bits. Workspace: SPLIT_K * K * C * R * S floats (0 when SPLIT_K = 1).
//
// Covers: FP32, 2D, groups 1, any padding / stride / dilation, filters up to 11x11, x, dy, dw
// dense NCHW, tails. Not applicable on HIP targets (inline PTX).
// Axes (perf-db params in this order), each the kernel's -D name:
//   TB_M     output channels per block (GEMM M)
//   TB_N     filter columns (c, r, s) per block (GEMM N)
//   TB_K     pixels per pipeline step
//   STAGES   cp.async ring depth
//   SPLIT_K  pixel ranges reduced through the workspace.
// Thread-safe and stateless.
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class FastSimtWrwSolver : public gpu::FastSolver {
 public:
  FastSimtWrwSolver() : FastSolver("TunaFastSimtWrw", Direction::kBackwardWeights, /*dynamic=*/false) {}

  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  SearchSpace Space(const Target&, const Problem&) const override { return Axes(); }
  static SearchSpace Axes();  // TB_M, TB_N, TB_K, STAGES, SPLIT_K (the same for every problem)
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;
  absl::Status IsValid(const Target& target, const Problem& problem,
                       const PerfConfig& config) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

  // Dynamic shared memory of a config: STAGES * TB_K * ((TB_M + 4) + (TB_N + 4)) floats.
  static uint64_t SharedBytes(int tb_m, int tb_n, int tb_k, int stages);

  // For solvers built on this kernel (TunaWinogradF2x3Wrw): its build for `p`, and its launch
  // of `count` independent problems like `p` (grid.z = SPLIT_K * count): problem b reads x at
  // x_off + b * zx and dy at dy_off + b * zdy (floats into their roles' buffers), and split s
  // writes its partial dw to `out` at out_off + (s * count + b) * K*C*R*S.
  struct GemmBatch {
    int kernel = 0;
    BufferRole x = BufferRole::kX, dy = BufferRole::kY, out = BufferRole::kW;
    int64_t count = 1, x_off = 0, dy_off = 0, out_off = 0, zx = 0, zdy = 0;
  };
  static KernelBuild Build(const Problem& p, const PerfConfig& config);
  static Launch GemmLaunch(const Problem& p, const PerfConfig& config, const GemmBatch& batch);
  static int SplitK(const PerfConfig& config);
};

}  // namespace tuna::solver
