// TunaFastSimtFwd (id 1011): FP32 NCHW forward convolution as a register-blocked SIMT implicit
// GEMM on NVIDIA sm_80+ (kernels/conv/fast_simt_fwd.cu), computed transposed so NCHW needs no
// transform (the kernel's rows are output channels); 8x8 micro-tiles, 128-bit shared reads,
// cp.async multi-stage pipeline; 1x1 / stride 1 / pad 0 layers with H*W % 4 == 0 load four
// pixels per 16-byte copy (a plain GEMM over the channels).
//
// Covers: conv mode, FP32, 2D, groups 1, any padding / stride / dilation, x, w, y dense NCHW.
// Not applicable on HIP targets (inline PTX). A 1x1 filter is compiled in (-DTUNA_FR/FS=1); any
// other size is a run-time argument, so one build per tile config serves every filter
// (gpu_fast_simt.h: TapsOptions).
//
// GEMM (forward only), as in every tuna forward solver: M = N*Ho*Wo (output pixels),
// N = K (output channels), K = C*R*S.
// Axes (perf-db params in this order), each the kernel's -D name (gpu_fast_simt.h):
//   TB_N    output channels per block (GEMM N; was tb_m, which is why it comes first)
//   TB_M    output pixels per block (GEMM M; was tb_n)
//   TB_K    reduction step
//   STAGES  cp.async ring depth.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/gpu_fast_simt.h"

namespace tuna::solver {

class FastSimtFwdSolver : public fast_simt::SimtSolver {
 public:
  std::string_view Name() const override { return "TunaFastSimtFwd"; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }
  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  fast_simt::Plan PlanOf(const Problem& problem) const override;
};

}  // namespace tuna::solver
