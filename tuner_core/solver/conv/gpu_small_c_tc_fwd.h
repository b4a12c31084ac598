// TunaSmallCTcFwd (1028): forward convolution for thin inputs (C/G <= 8: RGB stems, thin grouped
// layers) on the tensor cores, FP16/BF16 with FP32 accumulation (kernels/conv/small_c_tc_fwd.cu,
// mma.sync m16n8k16, CUDA sm_80+). As a GEMM the reduction is R x S x C/G taps, padded to 16 as a
// whole (a 7x7 RGB stem: 147 -> 160, where an implicit GEMM pads every tap's channels to 8: 392):
// a block stages its input patch channels-last in shared memory once and reads A fragments from
// it through a table of tap offsets; the filter slice is staged once per persistent block.
//
// Contract:
//   Applicable: CUDA sm_80+, forward, conv mode, 2D, FP16/BF16, 1 <= C/G <= 8, any K, N, groups,
//     filter, stride, dilation and padding (windows inside the padded input), tensors in any
//     layout (strides are arguments; 16-byte stores where y is channels-last and K/G % 8 == 0),
//     one image of x and of y below 2^31 elements, and the smallest tile within the target's
//     shared memory and 64 patch elements per thread (the next tile's loads wait in registers).
//   Deterministic: each output element is written once by one thread, the reduction in a fixed
//     order; no atomics; workspace 0; one launch.
//   The filter geometry, C/G and the layouts are compile-time (-DTUNA_FR ... -DTUNA_CG), the other
//     sizes run-time: a build serves every N, H, W, K and group count with the same geometry.
//   Thread-safe (const, no state).
//
// Axes (perf-db params in this order; each the kernel's -D name):
//   TB_H, TB_W     output pixels of a tile (rows x columns of one image): the GEMM's M = TB_H x TB_W
//   TB_N           output channels of a block (within one group)
//   WARP_M         pixels of a warp (a multiple of 16)
//   WARP_N         channels of a warp (a multiple of 8)
//   A_PAIRS        1: the patch staged as 32-bit pairs of neighbouring elements, each filter row's
//                  taps padded to even, so an A register is one 4-byte load, not two 2-byte loads
//                  (needs undilated filter columns or an even C/G)
// A block has (TB_H * TB_W / WARP_M) * (TB_N / WARP_N) warps, 32 to 512 threads.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class SmallCTcFwdSolver : public Solver {
 public:
  std::string_view Name() const override { return "TunaSmallCTcFwd"; }
  Algorithm Algo() const override { return Algorithm::kDirect; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }

  TUNA_TUNABLE_SOLVER_VERBS
};

}  // namespace tuna::solver
