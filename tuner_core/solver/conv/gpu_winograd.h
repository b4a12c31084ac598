// The Winograd F(m x m, 3x3) solvers for FP32 NCHW 3x3 stride-1 convolutions, forward and
// backward data: TunaWinogradF2x3 (id 1017, m = 2, kernels/conv/winograd_f2x3.cu) and
// TunaWinogradF4x3 (id 1027, m = 4, kernels/conv/winograd_f4x3.cu). Four launches: filter
// transform U, input transform V ((m+2)x(m+2) tiles at stride m), (m+2)^2 independent GEMMs
// M = U V on TunaFastSimtFwd's kernel (one launch, grid.z = (m+2)^2; its tile axes are these
// solvers'), output transform y = A^T M A. Multiplies against direct: 2.25x fewer (m = 2), 4x
// fewer (m = 4); strict FP32 arithmetic (no TF32). Backward data is the forward over dy with the
// filter rotated and K, C swapped (U built so), padding 2 - pad. The transforms' arithmetic is
// kernels/conv/winograd_math.h (interpolation points and why there), their memory side
// kernels/conv/winograd_tiles.h, both shared by the two sizes.
//
// Accuracy: the transforms add and subtract weighted input values (F(2x2): weights 1 and 1/2;
// F(4x4): up to 5 in B^T, 8 in A^T), so the rounding error against the exact result is larger
// than direct summation's: on the ResNet-50 layers F(4x4)'s max error is 7-8x F(2x2)'s and
// 1.8-3.4x direct FP32's, its RMS error about 4x F(2x2)'s. Measured by
// the CPU twin (tests/solver/winograd_error_test.cc: the kernels' transform code in FP32 against
// FP64 direct on the ResNet-50 3x3 stride-1 layers and edge shapes; table in
// docs/BENCHMARKS.md): F(4x4) max |error| / max |y| <= 6.2e-6 (bound 2e-5 checked there), and
// both sizes within reference/verify.h's FP32 tolerance with at least 2x headroom on its element
// and RMS bounds (F(4x4) uses at most 0.10 and 0.43 of them), which the test enforces. So every
// candidate is verified against the reference like any other, at the FP32 tolerance: no looser
// per-solver tolerance is needed.
//
// Covers: FP32, 2D, groups 1, 3x3 filters, stride 1, dilation 1, padding 0-2, x, w, y dense NCHW.
// CUDA sm_80+. Workspace: P * (K*C + C*T4 + K*T4) floats, P = (m+2)^2, T4 = N * ceil(Ho/m) *
// ceil(Wo/m) rounded up to 4 (for backward data, C and K swap and Ho x Wo is dx's). Thread-safe,
// stateless.
// Axes (perf-db params in this order): TB_N, TB_M, TB_K, STAGES of the GEMM (gpu_fast_simt.h).
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

namespace winograd {
// m x m output tiles per dimension, and the GEMM width: tiles of all images, rounded up to 4.
inline int64_t Tiles(int64_t extent, int64_t m) { return (extent + m - 1) / m; }
inline int64_t T4(int64_t n, int64_t out_h, int64_t out_w, int64_t m) {
  return (n * Tiles(out_h, m) * Tiles(out_w, m) + 3) / 4 * 4;
}
// Transformed points of an (m+2) x (m+2) tile.
inline constexpr int64_t Points(int64_t m) { return (m + 2) * (m + 2); }
// A transform of a Winograd source (solution kernel `kernel`): one thread per element, `threads`
// of them in blocks of 256.
Launch TransformLaunch(int kernel, const char* entry, int64_t threads, std::vector<KernelArg> args);
}  // namespace winograd

// Forward and backward data by F(m x m, 3x3); the two sizes differ only in m and their source.
class WinogradSolver : public Solver {
 public:
  Algorithm Algo() const override { return Algorithm::kWinograd; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward, Direction::kBackwardData}; }

  TUNA_TUNABLE_SOLVER_VERBS

 protected:
  // m: outputs per tile side; source: the kernel file with tuna_wino_{filter,input,output}.
  WinogradSolver(int m, const char* source) : m_(m), source_(source) {}

 private:
  int m_;
  const char* source_;
};

class WinogradF2x3Solver final : public WinogradSolver {
 public:
  WinogradF2x3Solver() : WinogradSolver(2, "conv/winograd_f2x3.cu") {}
  std::string_view Name() const override { return "TunaWinogradF2x3"; }
};

class WinogradF4x3Solver final : public WinogradSolver {
 public:
  WinogradF4x3Solver() : WinogradSolver(4, "conv/winograd_f4x3.cu") {}
  std::string_view Name() const override { return "TunaWinogradF4x3"; }
};

}  // namespace tuna::solver
