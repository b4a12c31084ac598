// TunaSmallCFwd (1026): forward convolution for thin inputs (C/G <= 8 channels per group: RGB
// stems, thin grouped layers) as a direct kernel (kernels/conv/small_c_fwd.cu). As an implicit GEMM
// such a layer has a reduction of only C/G x R x S, so tensor-core tiles (TunaHopperFwd pads C to
// 4 through a workspace and wastes half of its N tile) compute mostly padding; here a block stages
// its input patch and filter slice as FP32 in shared memory once, and each thread accumulates
// PIX pixels x K_PER_THREAD output channels in FP32 registers.
//
// Contract:
//   Applicable: forward, conv mode, 2D, FP32/FP16/BF16 (FP32 accumulation), 1 <= C/G <= 8, any K,
//     N, groups, filter, stride, dilation and padding (windows inside the padded input), tensors
//     in any layout (strides are arguments; NCHW and NHWC are the tuned ones), sizes and
//     coordinates within 32 bits, and the smallest tile's patch and filter slice within 48 KiB
//     of shared memory. Targets: GPUs (CUDA and HIP: NVRTC / hiprtc) for the registered solver;
//     constructed with SmallCTargets::kGpuAndCpu also the cpu backend, through the kernel's twin
//     kernels/cpu_conv/small_c_fwd.cc (same body, options and launch; the tests use it).
//   Deterministic: every output element is written once, by one thread, with a fixed summation
//     order (taps r, s, then channels); no atomics; workspace 0; one launch.
//   The filter geometry, C/G and the layouts are compile-time (-DTUNA_FR ... -DTUNA_CG): a build
//   serves every N, H, W, K and group count with the same geometry and tile.
//   Thread-safe (const, no state).
//
// Not a GEMM: axes name convolution dimensions (perf-db params in this order; each the kernel's
// -D name):
//   TB_H, TB_W     output pixels of a block (rows x columns of one image)
//   TB_K           output channels of a block (within one group)
//   K_PER_THREAD   output channels per thread (contiguous: one vector store in NHWC)
//   PIX            output pixels per thread (strided by the block's pixel threads)
//   UNROLL_R       1: the filter rows unrolled as well (Specialize, the finishing step, sets it;
//                  the search holds 0, whose builds compile ~10x faster)
// A block has (TB_K / K_PER_THREAD) * (TB_H * TB_W / PIX) threads, 32 to 512.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

enum class SmallCTargets { kGpu, kGpuAndCpu };

class SmallCFwdSolver : public Solver {
 public:
  explicit SmallCFwdSolver(SmallCTargets targets = SmallCTargets::kGpu) : targets_(targets) {}

  std::string_view Name() const override { return "TunaSmallCFwd"; }
  Algorithm Algo() const override { return Algorithm::kDirect; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }

  // Where TunaSmallCTcFwd applies (FP16/BF16 on CUDA sm_80+): it runs the layer on the tensor cores.
  bool IsGeneric(const Target& target, const Problem& problem) const override;
  TUNA_TUNABLE_SOLVER_VERBS
  // UNROLL_R 1 for filters of more than one row.
  std::optional<PerfConfig> Specialize(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 private:
  SmallCTargets targets_;
};

}  // namespace tuna::solver
