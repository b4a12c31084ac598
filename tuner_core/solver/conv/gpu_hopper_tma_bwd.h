// TunaHopperTmaBwd (id 1014): backward data on Hopper's tensor cores, FP16/BF16 NHWC, as
// convolutions dx = dy (*) w' that TunaHopperTmaFwd's kernel runs (kernels/conv/hopper_tma_fwd.cu):
// w' is w with its taps rotated by 180 degrees and K and C/G swapped (tuna_flip_filter into the
// workspace, part of every run). Stride 1 is one forward convolution over dy (padding
// dilation*(filter-1) - padding). Stride 2 (per dimension) is split into its sub-pixel phases
// in the same launch: the dx pixels of one residue (a, b) mod the stride receive only the filter
// taps congruent to a + pad, b + pad, so each phase is a dense convolution over dy with its own
// taps and im2col box and no zero is multiplied; a phase that no tap reaches is written as zeros.
// FP32 accumulation; each dx element is written once (deterministic).
//
// Covers: strides 1 and 2 (2 with dilation 1), any padding within the copy engine's box,
// dilation, asymmetric filters, groups with K/G % 8 == 0 and C/G >= 8 when grouped, tails.
// sm_90 targets only. Axes, validity and defaults: those of TunaHopperTmaFwd (TB_M over dx
// pixels, TB_N over C/G), on the plan above (gpu_hopper_tma.h). Workspace: C * R * S * K/G halves
// (w'). Thread-safe and stateless.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna::solver {

class HopperTmaBwdSolver : public hopper_tma::TmaSolver {
 public:
  std::string_view Name() const override { return "TunaHopperTmaBwd"; }
  std::vector<Direction> Directions() const override { return {Direction::kBackwardData}; }
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  hopper_tma::ConvPlan PlanOf(const Problem& problem) const override;
  absl::Status Admits(const Problem& problem) const override;
};

}  // namespace tuna::solver
