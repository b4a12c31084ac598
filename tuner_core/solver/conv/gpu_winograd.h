// TunaWinogradF2x3 (id 1017): FP32 NCHW 3x3 stride-1 convolutions, forward and backward data, by
// Winograd F(2x2, 3x3) in four launches (kernels/conv/winograd_f2x3.cu): filter transform U,
// input transform V (4x4 tiles at stride 2), 16 independent GEMMs M = U V on TunaFastSimtFwd's
// kernel (one launch, grid.z = 16; its tile axes are this solver's), output transform y = A^T M A.
// 2.25x fewer multiplies than direct; strict FP32 arithmetic (no TF32). Its rounding error
// against the exact result is larger than direct summation's (the transforms add and subtract
// up to 16 products of the input with 0.5 / 0.25 weights): every candidate is verified against
// the reference like any other, within the FP32 tolerance (tuner_core/reference/verify.h).
// Backward data is the forward over dy with the filter rotated and K, C swapped (U built so),
// padding 2 - pad.
//
// Covers: FP32, 2D, groups 1, 3x3 filters, stride 1, dilation 1, padding 0-2, x, w, y dense NCHW.
// CUDA sm_80+. Workspace: 16 * (K*C + C*T4 + K*T4) floats, T4 = N * ceil(Ho/2) * ceil(Wo/2)
// rounded up to 4 (for backward data, C and K swap and Ho x Wo is dx's). Thread-safe, stateless.
// Axes (perf-db params in this order): TB_N, TB_M, TB_K, STAGES of the GEMM (gpu_fast_simt.h).
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

namespace winograd {
// 2x2 output tiles per dimension, and the GEMM width: tiles of all images, rounded up to 4.
inline int64_t Tiles(int64_t extent) { return (extent + 1) / 2; }
inline int64_t T4(int64_t n, int64_t out_h, int64_t out_w) { return (n * Tiles(out_h) * Tiles(out_w) + 3) / 4 * 4; }
inline constexpr int64_t kPoints = 16;  // transformed points of a 4x4 tile
// A transform of kernels/conv/winograd_f2x3.cu (solution kernel `kernel`): one thread per
// element, `threads` of them in blocks of 256.
Launch TransformLaunch(int kernel, const char* entry, int64_t threads, std::vector<KernelArg> args);
}  // namespace winograd

class WinogradF2x3Solver : public Solver {
 public:
  std::string_view Name() const override { return "TunaWinogradF2x3"; }
  Algorithm Algo() const override { return Algorithm::kWinograd; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward, Direction::kBackwardData}; }

  absl::Status IsApplicable(const Target& target, const Problem& problem) const override;
  SearchSpace Space(const Target& target, const Problem& problem) const override;
  PerfConfig DefaultConfig(const Target& target, const Problem& problem) const override;
  absl::Status IsValid(const Target& target, const Problem& problem,
                       const PerfConfig& config) const override;
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;
};

}  // namespace tuna::solver
