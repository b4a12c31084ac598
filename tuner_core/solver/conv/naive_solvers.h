// ConvDirectNaiveConv{Fwd,Bwd,Wrw} (MIOpen's names, ids 85/86/87): the direct convolution with
// one thread per element of the written tensor, on every backend (kernels/conv/naive_conv.cu for
// CUDA/HIP, kernels/cpu_conv/naive_conv.cc for the CPU). Applicable to every valid conv-mode
// problem of its direction: 2D/3D, any groups, stride, padding, dilation, every layout
// combination, FP32/FP16/BF16, and INT8 forward (int32 output). Not tunable, and dynamic: on a
// GPU one code object per (direction, arch) serves every problem and data type (the entry names
// the type); on the CPU one per (data type, direction). Correctness first: it is also the
// GPU reference for problems too large for the CPU reference.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class NaiveConvSolver : public Solver {
 public:
  explicit NaiveConvSolver(Direction direction) : direction_(direction) {}

  std::string_view Name() const override;
  Algorithm Algo() const override { return Algorithm::kDirect; }
  bool IsTunable() const override { return false; }
  bool IsDynamic() const override { return true; }
  std::vector<Direction> Directions() const override { return {direction_}; }

  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  // Only the empty config is valid (the solver has no tuning space).
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 private:
  Direction direction_;
};

}  // namespace tuna::solver
