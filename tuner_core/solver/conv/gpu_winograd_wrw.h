// TunaWinogradWrw (id 1018): FP32 NCHW 3x3 stride-1 backward weights by Winograd F(3x3, 2x2)
// (kernels/conv/winograd_f2x3.cu): dy in 2x2 tiles transformed to 4x4 (A z A^T), the x tiles
// under them as in the forward (B^T d B), 16 GEMMs over the tiles on TunaFastSimtWrw's kernel (one
// launch of grid.z = 16 * SPLIT_K; its tile axes and split-K are this solver's), then
// dw = G^T P G after summing the split slices in slice order (deterministic bits). 2.25x fewer
// multiplies than direct; strict FP32. Every candidate is verified against the reference.
//
// Covers: FP32, 2D, groups 1, 3x3 filters, stride 1, dilation 1, padding 0-2, dense NCHW.
// CUDA sm_80+. Workspace: 16 * (C*T4 + K*T4 + SPLIT_K*K*C) floats, T4 = N * ceil(Ho/2) *
// ceil(Wo/2) rounded up to 4. Thread-safe and stateless.
// Axes (perf-db params in this order): TB_M, TB_N, TB_K, STAGES, SPLIT_K (gpu_fast_simt_wrw.h).
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class WinogradWrwSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaWinogradWrw"; }
  Algorithm Algo() const override { return Algorithm::kWinograd; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kBackwardWeights}; }

  TUNA_TUNABLE_SOLVER_VERBS
};

}  // namespace tuna::solver
