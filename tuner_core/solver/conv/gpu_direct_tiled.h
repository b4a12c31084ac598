// TunaDirectTiledFwd: tiled direct forward convolution on GPUs (kernels/conv/tuna_direct_tiled.cu).
// A block computes an output tile (tb_h x tb_w pixels, tb_k output channels) of one image and
// group, staging the input patch (halo included) and the filter slice in shared memory tb_c
// input channels at a time.
//
// Covers: forward, conv mode, 2D, FP32/FP16/BF16 (FP32 accumulate), any groups / padding /
// stride / dilation, any layout of each tensor. Not applicable to 3D problems, or when even the
// smallest tile's input patch does not fit in shared memory (very large filters/dilations).
//
// Axes (perf-db params in this order): tb_h, tb_w, tb_k, tb_c, thread_k (output channels per
// thread, so threads = tb_h * tb_w * tb_k / thread_k).
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class DirectTiledFwdSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaDirectTiledFwd"; }
  Algorithm Algo() const override { return Algorithm::kDirect; }
  bool IsTunable() const override { return true; }
  bool IsDynamic() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }

  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  SearchSpace Space(const Target& target, const Problem& problem) const override;
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;
  absl::Status IsValid(const Target& target, const Problem& problem,
                       const PerfConfig& config) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

  // Dynamic shared memory of a config (bytes).
  static uint64_t SharedBytes(const Problem& problem, int64_t tb_h, int64_t tb_w, int64_t tb_k, int64_t tb_c);
};

}  // namespace tuna::solver
