// TunaHopperTmaWrw (id 1025): backward weights on Hopper's warpgroup tensor cores fed by the
// tensor memory accelerator (kernels/conv/hopper_tma_wrw.cu, built for sm_90a): implicit GEMM,
// FP16/BF16 in, FP32 accumulate; a persistent, warp-specialised kernel in which one producer
// thread issues tiled TMA copies of dy and im2col TMA copies of x (padding, strides and dilation
// done by the copy engine) into an mbarrier-synchronised ring, and WG_M consumer warpgroups run
// wgmma on both operands transposed (MN-major) and write dw.
//
//   GEMM per group: M = K/G output channels, N = R*S*C/G filter columns (each tap's C/G channels
//   in 64-channel chunks), reduction over the N*Ho*Wo output pixels, 64 per stage.
//
// Split-K is deterministic: with SPLIT_K > 1 each pixel range writes its FP32 partial dw into its
// own workspace slice and tuna_hopper_wrw_reduce sums the slices in slice order, so re-runs give
// identical bits. Workspace: SPLIT_K * K * R * S * C/G floats (0 when SPLIT_K = 1).
//
// Covers: conv mode, 2D, x, dy and dw dense NHWC, any N, H, W, groups, asymmetric filters and
// padding, dilation, strides <= 8, with C/G % 8 == 0 and K/G % 8 == 0, padding and dilated filter
// extent within the copy engine's -128..127 bounding box (the checks of TunaHopperTmaFwd on the
// forward geometry), every extent below 2^31 elements. sm_90 targets only; other shapes are
// TunaHopperWrw's (1019). Also NCHW x and dy of 1x1, stride-1, unpadded, ungrouped layers
// (hopper_tma::NchwGemm; H*W, C and K multiples of 8): dw = sum over images of dy_n x_n^T with both
// operands read K-major by tiled maps of (H*W, channels, N) (-DNCHW_1X1=1, derived; no CLUSTER_N 2),
// no layout copies. Problem sizes (and the split count) are kernel arguments and the tensor
// maps are encoded at launch: one build serves every problem with the same tile config.
//
// Axes (perf-db params in this order), each the kernel's -D name except SPLIT_K:
//   TB_M    block tile rows (GEMM M = K/G output channels): 64, 128, 256
//   TB_N    block tile columns (GEMM N = filter columns), also the wgmma N: 64, 128, 256
//   WG_M    consumer warpgroups splitting TB_M (each owns a multiple of 64 rows): 1, 2
//   STAGES  depth of the shared-memory ring (64 pixels per stage): 3..8
//   SPLIT_K pixel ranges reduced through the workspace (the solver's: a kernel argument): 1..64, any
//           count up to one wave, past it only counts that fill >= 3/4 of the persistent blocks' rounds
//           (132 SMs rarely divide a power of 2)
//   CLUSTER_N blocks per thread-block cluster along N sharing the dy tile by TMA multicast: 1, 2
//   STREAM_K 1: the tiles x pixel-tiles iterations dealt in equal ranges to one persistent block
//           per SM; a tile cut between blocks is summed by the block holding its head from the
//           others' FP32 partials (workspace: a tile per block and a flag per block, zeroed by
//           tuna_hopper_wrw_clear first), in block order. Only with SPLIT_K 1 and CLUSTER_N 1, where
//           whole tiles leave a part-empty last wave (at most four waves), 4+ pixel tiles a block.
//           A solver axis (-DSTREAM_K=1 for 1 only); absent in old params: 0
// 1x1 filters with stride 1 and no padding read x through a tiled map of the (C, P) matrix
// (-DX_TILED=1, derived from the problem): the copy engine serves it faster than im2col rows.
// Where K/G (and, with X_TILED, C/G) are whole 64-channel slabs and CLUSTER_N is 1, a stage's
// slabs of dy (and x) come in one 3-D copy (-DTMA_3D=1, derived).
// The default is the config a cost model times fastest (copies per slab, tensor cores, epilogue
// stores, the split reduce; fitted to every config of ResNet-50's layers on an H200): unclustered,
// without stream-K, the deepest ring.
// Validity is analytic: shared memory, at most 128 FP32 accumulators per thread, no tile twice
// the GEMM extent, rings no shallower than two below the deepest that fits, splits only up to one
// wave or while the work units fill >= 3/4 of every round (8 at most), clusters only with TB_M >= 128 and two or
// more N-tiles. Thread-safe and stateless.
#pragma once

#include <cstdint>
#include <string_view>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class HopperTmaWrwSolver : public gpu::FastSolver {
 public:
  HopperTmaWrwSolver() : HopperTmaWrwSolver("TunaHopperTmaWrw", /*three_d=*/false) {}

  TUNA_TUNABLE_SOLVER_VERBS

  // Dynamic shared memory of a config: 1 KiB of alignment, the ring, two mbarriers per stage.
  static uint64_t SharedBytes(int tb_m, int tb_n, int stages);

 protected:
  HopperTmaWrwSolver(std::string_view name, bool three_d)
      : FastSolver(name, Direction::kBackwardWeights, /*dynamic=*/true), three_d_(three_d) {}

 private:
  bool three_d_;  // 3-D problems only (TunaHopperTmaWrw3d), else 2-D only
};

// TunaHopperTmaWrw3d (id 1042, a candidate: built and compile-tested, not yet run on a GPU):
// TunaHopperTmaWrw's kernel on 3-D backward-weights problems of dense NDHWC tensors (-DSPATIAL3=1):
// x through a 5-D im2col map (the forward's box: padding, strides and dilation in all three
// dimensions, within -16..15 per dimension), the GEMM's N the T*R*S taps' channel chunks, the
// reduction the N*Do*Ho*Wo output pixels; dw (K, T, R, S, C/G). Axes, validity and default those of
// TunaHopperTmaWrw (no X_TILED: 1x1x1 stride-1 layers are 2-D problems, problem/flatten.h).
// Thread-safe and stateless.
class HopperTmaWrw3dSolver : public HopperTmaWrwSolver {
 public:
  HopperTmaWrw3dSolver() : HopperTmaWrwSolver("TunaHopperTmaWrw3d", /*three_d=*/true) {}
};

}  // namespace tuna::solver
