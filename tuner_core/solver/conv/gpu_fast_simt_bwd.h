// TunaFastSimtBwd (id 1015): FP32 NCHW backward data on TunaFastSimtFwd's kernel
// (kernels/conv/fast_simt_fwd.cu) as dx = dy (*) w': tuna_simt_bwd_filter writes w' (taps rotated,
// K and C swapped; per sub-pixel phase of a strided dimension, only that phase's taps) into the
// workspace, part of every run; then one launch per phase (gpu_fast_simt.h): stride 1 is a single
// convolution over dy, stride s splits dx into s x s residues that each take their own taps, so
// no multiply by an inserted zero is done. Each dx element is written once (deterministic).
//
// Covers: FP32, 2D, groups 1, x, w, y dense NCHW, any padding, dilation in unstrided dimensions,
// strides up to 4 (dilation 1 in a strided dimension), filters up to 11x11, tails. CUDA sm_80+.
// Axes, validity and defaults: TunaFastSimtFwd's (TB_M over dx pixels, TB_N over C).
// Workspace: K * C * R * S floats (w'). Thread-safe and stateless.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/gpu_fast_simt.h"

namespace tuna::solver {

class FastSimtBwdSolver : public fast_simt::SimtSolver {
 public:
  std::string_view Name() const override { return "TunaFastSimtBwd"; }
  std::vector<Direction> Directions() const override { return {Direction::kBackwardData}; }
  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  fast_simt::Plan PlanOf(const Problem& problem) const override;
};

}  // namespace tuna::solver
