// TunaHopperHaloFwd (id 1029): forward convolution for thin inputs on Hopper's warpgroup tensor
// cores (kernels/conv/hopper_halo_fwd.cu, built for sm_90a), FP16/BF16 NHWC, FP32 accumulation.
// Where TunaHopperTmaFwd (1013) copies every input pixel R x S times (one im2col box per tap),
// this kernel copies a tile's input rows once per filter column s (a tiled TMA box of TILE_H +
// R - 1 rows x TILE_W pixels, shifted by s) and reads each copy for all R filter rows in shared
// memory: ~R times fewer bytes from L2 for 3x3 and 5x5 layers whose C/G is too small for a k-tile
// of their own to pay (Inception-v3's C = 32 and C = 48 layers). The whole filter stays in shared
// memory, in blocks of 16, 32 or 64 channels (C = 48: three 16-channel blocks, no padding).
//
// Covers: conv mode, 2D, dense NHWC x, w and y, one group, stride 1, dilation 1, any padding,
// C % 8 == 0, K <= 256 (one N tile holds every output channel), R * S <= 256, every extent below
// 2^31 elements, the filter and two copy blocks within shared memory (C x K x R x S up to ~100 K
// elements: C = 48, K = 64, 5x5 fits in 16-channel blocks). sm_90 targets only.
// Sizes are kernel arguments: one build per tile config and (TB_N, TB_K).
//
// Axes (perf-db params in this order), each equal to the kernel's -D name:
//   TB_M      output pixels per tile (the GEMM M): 128, 256
//   TILE_W    of them per tile row (TILE_H = TB_M / TILE_W rows): 8, 16, 32, 64
//   WG_M      consumer warpgroups splitting a tile's rows: 1, 2
//   PINGPONG  1 (with WG_M 1): two consumer warpgroups on alternate whole tiles
// Derived options: TB_N (K rounded up to 32: the wgmma N), TB_K (16, 32 or 64: the channels of a
// shared-memory row, in the 32-, 64- or 128-byte swizzle). The ring's depth (2..8 copy blocks, as
// many as fit) is a kernel argument.
// Validity is analytic: shared memory (filter, two copy blocks, epilogue slabs), at most 128 FP32
// accumulators per thread, no tile row twice Wo's width or tile column twice Ho's height (the
// smallest stays), PINGPONG only with two or more tiles per block. Thread-safe and stateless.
#pragma once

#include <cstdint>

#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/solver.h"

namespace tuna::solver {

namespace hopper_halo {

// The axes by name (the one place a config is decoded), and the derived tile sizes.
struct HaloParams {
  int tb_m, tile_w, wg_m, pingpong;
  static HaloParams Of(const SearchSpace& s, const PerfConfig& c);
  PerfConfig Config(const SearchSpace& s) const;
  int TileH() const { return tb_m / tile_w; }
  int Consumers() const { return wg_m + pingpong; }
  int Threads() const { return 128 * (Consumers() + 1); }
};

SearchSpace Space();

// Copy blocks the kernel's ring holds at most (its mbarriers are laid out for this many).
inline constexpr int kMaxStages = 8;

// The kernel's TB_N (K rounded up to 32), TB_K (channels per block: the widest of 64, 32, 16 that
// pads C no more than 16-channel blocks would) and KB = ceil(C / TB_K) for problem `p`.
int TbN(const Problem& p);
int TbK(const Problem& p);
int KBlocks(const Problem& p);

// Dynamic shared memory of `t` on `p` with a ring of `stages` copy blocks: 1 KiB of alignment, the
// filter (KB x R*S x TB_N x TB_K halves), the ring (blocks of TILE_W x (TILE_H + R - 1) pixels of
// TB_K halves), the consumers' epilogue slabs (4 warps x 16 rows x (E + 8) halves, E = 64 where
// TB_N % 64 == 0, else 32) and 1 + 2 x kMaxStages mbarriers.
uint64_t SharedBytes(const Problem& p, const HaloParams& t, int stages);

// The ring the kernel gets: as many copy blocks as fit in `shared_limit` bytes, at most
// kMaxStages (fewer than 2: `t` does not fit).
int Stages(const Problem& p, const HaloParams& t, uint64_t shared_limit);

}  // namespace hopper_halo

class HopperHaloFwdSolver : public gpu::FastSolver {
 public:
  HopperHaloFwdSolver() : FastSolver("TunaHopperHaloFwd", Direction::kForward, /*dynamic=*/true) {}
  TUNA_TUNABLE_SOLVER_VERBS
};

}  // namespace tuna::solver
