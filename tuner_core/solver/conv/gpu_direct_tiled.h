// TunaDirectTiledFwd: tiled direct forward convolution on GPUs (kernels/conv/tuna_direct_tiled.cu).
// A block computes an output tile (TB_OH x TB_OW pixels, TB_OC output channels) of one image and
// group, staging the input patch (halo included) and the filter slice in shared memory TB_IC
// input channels at a time.
//
// Covers: forward, conv mode, 2D, FP32/FP16/BF16 (FP32 accumulate), any groups / padding /
// stride / dilation, any layout of each tensor. Not applicable to 3D problems, or when even the
// smallest tile's input patch does not fit in shared memory (very large filters/dilations).
//
// Not a GEMM: the axes name convolution dimensions, O = output and I = input (so no axis reads
// as a GEMM's M/N/K). Axes (perf-db params in this order), each the kernel's -D name:
//   TB_OH, TB_OW  output rows x columns per block (was tb_h, tb_w)
//   TB_OC         output channels per block (was tb_k)
//   TB_IC         input channels staged per step, the reduction chunk (was tb_c)
//   THREAD_OC     output channels per thread (was thread_k): threads = TB_OH*TB_OW*TB_OC/THREAD_OC.
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
  bool IsGeneric(const Target&, const Problem&) const override { return true; }
  bool IsDynamic() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory of a config (bytes).
  // tb_h..tb_c are TB_OH, TB_OW, TB_OC, TB_IC.
  static uint64_t SharedBytes(const Problem& problem, int64_t tb_h, int64_t tb_w, int64_t tb_k, int64_t tb_c);
};

}  // namespace tuna::solver
