// TunaHopperTmaBwd (id 1014): backward data on Hopper's tensor cores, FP16/BF16 NHWC, as the
// forward convolution dx = dy (*) w' that TunaHopperTmaFwd's kernel runs
// (kernels/conv/hopper_tma_fwd.cu): w' is w with its taps rotated by 180 degrees and K and C/G
// swapped (tuna_flip_filter into the workspace, part of every run), the padding becomes
// dilation*(filter-1) - padding, stride 1. FP32 accumulation; deterministic.
//
// Covers: stride 1 (strided layers fall to the other backward solvers), any padding within the
// copy engine's box, dilation, asymmetric filters, groups with K/G % 64 == 0 and C/G >= 8 when
// grouped, N/H/W tails. sm_90 targets only. Axes, validity and defaults: those of
// TunaHopperTmaFwd (TB_M over N*H*W input pixels, TB_N over C/G), on the forward problem above.
// Workspace: C * R * S * K/G halves (w'). Thread-safe and stateless.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class HopperTmaBwdSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaHopperTmaBwd"; }
  Algorithm Algo() const override { return Algorithm::kImplicitGemm; }
  bool IsTunable() const override { return true; }
  bool IsDynamic() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kBackwardData}; }

  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  SearchSpace Space(const Target& target, const Problem& problem) const override;
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;
  absl::Status IsValid(const Target& target, const Problem& problem,
                       const PerfConfig& config) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

  // The forward convolution over dy that gives dx for a stride-1 backward-data problem.
  static Problem ForwardEquivalent(const Problem& p);
};

}  // namespace tuna::solver
