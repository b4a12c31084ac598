// TunaThinBwd: backward data for thin inputs (C/G <= 4 channels per group, e.g. an RGB stem) on
// GPUs, a direct gather kernel (kernels/conv/thin_bwd.cu). As an implicit GEMM such a problem has
// N = C/G <= 4 columns, so GEMM tiles compute mostly padding; here each dy value loaded feeds
// every channel of every tap that reaches it, and each tap's weights (one 16-byte shared-memory
// load) feed all of the thread's pixels of that tap's stride phase.
//
// Covers: backward data, conv mode, 2D, FP32/FP16/BF16 (FP32 accumulate), C/G <= 4, any groups,
// filter, padding and dilation, strides 1, 2, 3, 4 and 6, tensors in any layout (strides are
// arguments). The filter geometry and C/G are compile-time (-DTUNA_FR... -DTUNA_CG): a build
// serves every problem size with the same geometry and tile.
//
// Not a GEMM: axes name convolution dimensions (perf-db params in this order; each the kernel's
// -D name):
//   THREAD_H, THREAD_W  dx pixels per thread (rows x columns; the stride times 1, 2, 4 or 8)
//   K_CHUNK             output channels whose weights a block stages in shared memory at a time
//   TB_THREADS          threads per block
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class ThinBwdSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaThinBwd"; }
  Algorithm Algo() const override { return Algorithm::kDirect; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kBackwardData}; }

  TUNA_TUNABLE_SOLVER_VERBS
};

}  // namespace tuna::solver
