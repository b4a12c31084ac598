// TunaHopperTmaFwd (id 1013): forward convolution on Hopper's warpgroup tensor cores fed by the
// tensor memory accelerator (kernels/conv/hopper_tma_fwd.cu, built for sm_90a): implicit GEMM,
// FP16/BF16 in, FP32 accumulate; a persistent, warp-specialised kernel in which one producer
// thread issues im2col TMA copies of x (padding, strides and dilation done by the copy engine)
// and tiled TMA copies of w into an mbarrier-synchronised ring, and WG_M consumer warpgroups
// issue wgmma and write y. Deterministic (no reduction across blocks).
//
// Covers: conv mode, 2D, x, w and y dense NHWC, any N, H, W, K (tails masked or zero-filled by
// the copy engine), groups, asymmetric filters and padding, dilation, with C/G % 8 == 0 (one
// filter tap per TB_K-channel k-tile; a last partial chunk reads zeros past C/G), strides <= 8, padding and dilation*(filter-1) - padding
// within the copy engine's -128..127 bounding box, every extent below 2^31 elements. sm_90
// targets only; other shapes fall to TunaHopperFwd (1012). Problem sizes are kernel arguments
// and the tensor maps are encoded at launch: one build serves every problem with the same config.
//
// Axes (perf-db params in this order), each equal to the kernel's -D name:
//   TB_M    block tile rows (GEMM M = N*Ho*Wo output pixels, the im2col column): 64, 128, 256
//   TB_N    block tile columns (GEMM N = K/G output channels), also the wgmma N: 32 (K/G <= 32
//           only), 64, 128, 256
//   WG_M    consumer warpgroups splitting TB_M (each owns TB_M/WG_M rows, a multiple of 64)
//   STAGES  depth of the shared-memory ring (one k-tile per stage): 3..8
//   PINGPONG 1: two consumer warpgroups on alternate whole tiles (WG_M 1); absent in old params: 0
//   TB_K    channels of a k-tile (one filter tap): 64 (128-byte swizzle rows) or 32 (64-byte rows,
//           only where C/G % 64 is 1..32, e.g. Inception-v3's C = 32 layers); absent in old
//           params: 64. A solver axis: -DTB_K=32 is passed for 32 only, so TB_K 64 builds keep
//           their options.
//   FIX_SIZES 1: the problem's sizes compiled in (a build for this problem alone). Not searched:
//           the tuner's finishing step (Specialize) times the winner so and keeps the faster
//           (run-time sizes cost ~6 % here). A solver axis; absent in old params: 0.
// Validity is analytic: shared memory, at most 128 FP32 accumulators per thread, no tile twice
// the GEMM extent, rings no shallower than two below the deepest that fits, TB_K 32 and TB_N 32
// only where they move fewer bytes. Thread-safe and stateless.
#pragma once

#include <string_view>
#include <vector>

#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna::solver {

class HopperTmaFwdSolver : public hopper_tma::TmaSolver {
 public:
  std::string_view Name() const override { return "TunaHopperTmaFwd"; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }
  absl::StatusOr<Solution> GetSolution(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;

 protected:
  hopper_tma::ConvPlan PlanOf(const Problem& problem) const override;
  absl::Status Admits(const Problem& problem) const override;
};

}  // namespace tuna::solver
