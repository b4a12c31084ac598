// TunaDepthwise{Fwd,Bwd,Wrw}: depthwise convolution (groups = C, K = C * multiplier) on GPUs,
// one direct kernel per direction (kernels/conv/depthwise.cu). Depthwise layers move ~R*S
// multiply-adds per element, so these kernels are built to stream memory: each input element is
// read from DRAM once, windows are unrolled at compile time, NHWC loads are 16-byte vectors.
//
// Covers: 2D, conv mode, FP32/FP16/BF16 (FP32 accumulate), C/G = 1 with any channel multiplier
// K/C <= 8, any filter, padding, stride and dilation (backward data: strides 1, 2, 3, 4 and 6),
// tensors in any layout (NCHW and NHWC are the tuned ones: THREAD_C and TB_CV > 1 need NHWC).
// The filter geometry and the multiplier are compile-time (-DTUNA_FR... -DTUNA_MULT): a build
// serves every problem size with the same filter geometry, multiplier, layout and tile.
//
// Not a GEMM: the axes name convolution dimensions, per thread or per block.
//   Fwd/Bwd (perf-db params in this order; each the kernel's -D name):
//     THREAD_H, THREAD_W  output pixels per thread (rows x columns; Bwd: the stride times 1, 2, 4, 8)
//     THREAD_C            channels per thread (a vector along C in NHWC)
//     STEPS_H             solver only (a kernel argument): thread tiles each thread walks downwards
//                         (its weights stay in registers)
//     TB_THREADS          threads per block
//   Wrw:
//     THREAD_H, THREAD_W  output pixels per pixel tile (rows x columns; product 2..8)
//     THREAD_C            channels per thread (NHWC vector)
//     TB_CV               channel-vector lanes per block (NHWC); TB_THREADS / TB_CV pixel threads
//     TB_THREADS          threads per block
//     SPLIT               solver only: pixel shares (grid.y); > 1 writes FP32 workspace slices
//                         [SPLIT][K][R*S] summed in slice order by a second launch
// Backward weights is deterministic: the pixel threads of a block are summed by a fixed tree and
// the slices in slice order, so re-runs give identical bits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class DepthwiseSolver : public Solver {
 public:
  explicit DepthwiseSolver(Direction direction);

  std::string_view Name() const override { return name_; }
  Algorithm Algo() const override { return Algorithm::kDirect; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {direction_}; }

  TUNA_TUNABLE_SOLVER_VERBS

 private:
  Direction direction_;
  std::string name_;
};

}  // namespace tuna::solver
