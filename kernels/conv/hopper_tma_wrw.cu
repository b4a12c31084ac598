// Hopper (sm_90a) warp-specialised, persistent backward-weights convolution fed by the tensor
// memory accelerator, FP16/BF16, NHWC, grouped, for the solver TunaHopperTmaWrw
// (tuner_core/solver/conv/gpu_hopper_tma_wrw.cc).
//
//   GEMM per group g:  M = K/G (output channels)   N = R*S*chunks*64 (filter columns: per tap,
//                      C/G channels rounded up to 64-channel chunks)
//                      reduction over the P = N*Ho*Wo output pixels
//   dw (K, R, S, C/G) = dy^T im2col(x), FP32 accumulate.
//
// Both operands have the pixels as their strided dimension, so wgmma reads them transposed
// (imm-trans-a = imm-trans-b = 1) from MN-major 128-byte-swizzle slabs: 64 pixel rows of 64
// elements (128 bytes), 8 KiB per slab — exactly the box layout of the copy engine with the
// 128-byte swizzle:
//   * A (dy): a tiled map of dy as (K, P), box 64 channels x 64 pixels: one slab per 64 rows of M;
//   * B (x): the im2col map of x (as the forward kernel's), box 64 channels x 64 pixels of one
//     filter tap (offsets r*dil_h, s*dil_w), walking the output pixels with the strides and
//     padding; one slab per 64 columns of N. Channels past C/G in a last partial chunk are read
//     (the next group's, or zeros past C) but their columns are never written.
// Rows past P, channels past K and taps outside x arrive as zeros from the copy engine.
//
// Work units: groups x splits x M-tiles x N-tiles (N-tiles fastest, so the blocks resident at one
// time share one dy pixel range through L2). The grid is persistent: block b runs units b,
// b + gridDim.x, ... One producer thread issues, per 64-pixel stage, the TB_M/64 dy boxes and the
// TB_N/64 im2col boxes into a STAGES-deep ring completing on the slot's `full` mbarrier, running
// ahead across units bounded by the slots' `empty` mbarriers; WG_M consumer warpgroups (each
// TB_M/WG_M rows of the tile) issue the stage's wgmmas and release the previous stage's slot once
// its wgmmas retired, then write the tile straight from the accumulators while the producer
// already fills the ring for the next unit.
//
// Clusters (CLUSTER_N 2): the two blocks of a cluster take N-tiles 2j and 2j+1 of the same unit
// row and share its dy tile: each loads half of the TB_M/64 dy slabs and multicasts them into
// both blocks' rings (a stage's `full` barrier expects the whole dy tile plus its own x slabs), so
// L2 serves a third less per stage. A slot is refilled only when the consumers of both blocks
// released it: every consumer warp arrives on the `empty` barrier of each block of the cluster.
//
// Split-K (splits, a run-time argument): split z reduces pixel tiles [z*per, (z+1)*per) and writes
// FP32 partials into workspace slice z (partials = 1); tuna_hopper_wrw_reduce (wrw_reduce.h) sums
// the slices in slice order — deterministic, re-runs give identical bits — and rounds once. With one
// split the block rounds and writes dw itself (partials = 0). Each output element is written once.
//
// Stream-K (STREAM_K 1; no splits, no clusters): the tiles x pixel-tile iterations are dealt in
// equal contiguous ranges to the gridDim.x persistent blocks (at most one per SM, all resident), so
// the last wave is as full as the others. A block's range is a run of segments: a tile's middle or
// tail (its first segment only: the FP32 partial goes to the block's workspace slot, then the
// block's flag is set), whole tiles (written to dw) and a tile's head (its last segment: the block
// owns that tile; it waits for the flags of the later blocks that hold the rest, adds their partials
// in block order — deterministic for a given grid — and writes dw). An owner only waits for blocks
// with higher indices, whose partials come first in their ranges and never wait: no cycle.
// tuna_hopper_wrw_clear zeroes the flags before each run.
//
// Needs C/G % 8 == 0 and K/G % 8 == 0 (16-byte aligned rows of each group for the copy engine).
// Sizes are run-time arguments: one build serves every problem with the same options.
// Options: TB_M (64, 128, 256), TB_N (64, 128, 256), WG_M (1, 2), STAGES (3..8), CLUSTER_N (1, 2;
//          2 needs TB_M >= 128), STREAM_K (0, 1; with CLUSTER_N 1 and splits 1), X_TILED (0, 1: 1x1
//          filters, stride 1, no padding: x read by a tiled map of the (C, P) matrix, which the copy
//          engine serves ~25 % faster than im2col rows — ResNet-50's 1x1 layers, H200), TMA_3D (0, 1
//          with CLUSTER_N 1 where K/G and, with X_TILED, C/G are multiples of 64: tmap_dy (and the
//          tiled tmap_x) are (64, P, rows / 64) views whose boxes hold a stage's TB_M / 64 (TB_N / 64)
//          slabs, one copy each per stage), TUNA_DTYPE (1 fp16, 2 bf16), NCHW_1X1 (0, 1: a 1x1,
//          stride-1, unpadded NCHW problem: dw = sum over images of dy_n (K x P) x_n^T (P x C/G),
//          P = Ho*Wo; a pixel tile is 64 pixels of one image (the last one of an image partial:
//          zeros), and both operands arrive K-major — per slab 64 channel rows of 64 pixels (128
//          bytes) in the 128-byte swizzle, read with imm-trans 0 — through tiled maps of dy and x
//          as (P, channels, N); not with X_TILED, TMA_3D, HALO or CLUSTER_N 2), SPATIAL3 (0, 1: a 3-D
//          problem of NDHWC tensors: P = N*Do*Ho*Wo, x through a 5-D im2col map (dims C, W, H, D, N;
//          box offsets w, h, d), the filter's taps (T, R, S) in that order, dw (K, T, R, S, C/G); not
//          with X_TILED, HALO or NCHW_1X1).
// Arguments (NCHW_1X1: tmap_x and tmap_dy tiled maps of (Ho*Wo, C or K, N), box 64 x 64 x 1, 128-byte
// swizzle): tmap_x (im2col of x: dims C, W, H, N; bounding box and element strides of the
//          forward convolution; 64 channels x 64 pixels; 128-byte swizzle; with X_TILED a tiled map
//          of x as (C, P), box 64 x 64, 128-byte swizzle), tmap_dy (tiled, dims
//          K, P; box 64 x 64; 128-byte swizzle), out (dw, or the FP32 workspace), out_off (its
//          element offset), then the sizes as int32 (see the kernel); with STREAM_K the workspace
//          (gridDim.x slots of TB_M x TB_N floats, then gridDim.x int flags) and its element offset.
// Launch: gridDim.x = CLUSTER_N * min(unit rows, multiprocessors / CLUSTER_N) (STREAM_K: min(multiprocessors,
// tiles x pixel tiles), after tuna_hopper_wrw_clear over the flags), blockDim.x = 128 * (WG_M + 1); dynamic shared
// memory = 1024 (alignment) + STAGES * (TB_M + TB_N) * 128 (ring) + 16 * STAGES (mbarriers).
#include "common/portability.h"
#include "conv/async_copy.h"  // tuna_smem_u32

#if !defined(TUNA_BACKEND_CUDA)
#error "hopper_tma_wrw.cu needs CUDA sm_90a (wgmma, TMA, mbarrier, setmaxnreg)"
#endif

#include "conv/wgmma_ops.h"
#include "conv/hopper_ops.h"
#include "conv/wrw_reduce.h"

#ifndef CLUSTER_N
#define CLUSTER_N 1
#endif
#ifndef STREAM_K
#define STREAM_K 0
#endif
#ifndef X_TILED
#define X_TILED 0
#endif
#ifndef TMA_3D
#define TMA_3D 0
#endif
#ifndef NCHW_1X1
#define NCHW_1X1 0
#endif
#ifndef SPATIAL3
#define SPATIAL3 0
#endif
#ifndef HALO
#define HALO 0  // 1: TunaHopperHaloWrw (stride 1): pixel tiles of TILE_H x TILE_W, x's halo copied once per stage
#endif
#if HALO
// Row classes (stride u = stride_h in 1, 2; tmap_x reads every u-th row and v-th column from any
// start): filter row r reads x rows u (oh + q_r) + rho_r where r dil_h + lower_h = u q_r + rho_r;
// the rows of one residue rho form one class, copied as one box of HALO_ROWS rows. Class 0 holds
// r = 0, r_step, 2 r_step, ... (HALO_N0 / 64 rows), class 1 (stride 2 with an odd dilation only)
// r = 1, 3, ... (HALO_N1 / 64 rows); r_step = 2 there, else 1. Consecutive rows of a class are
// q_step = r_step dil_h / u box rows apart. Stride 1: one class of all R rows, q_step = dil_h.
#ifndef HALO_N0
#define HALO_N0 TB_N  // one class: every filter row
#endif
#ifndef HALO_N1
#define HALO_N1 0
#endif
constexpr int kTileW = TILE_W;
constexpr int kTileH = 64 / TILE_W;
constexpr int kHaloRows = HALO_ROWS;  // TILE_H + (HALO_N0 / 64 - 1) * q_step: rows of one class's box
constexpr int kTaps0 = HALO_N0 / 64, kTaps1 = HALO_N1 / 64;
constexpr int kClasses = kTaps1 > 0 ? 2 : 1;
constexpr int kHaloBytes = kHaloRows * kTileW * 128;
static_assert(kTileW % 8 == 0 && 64 % kTileW == 0, "tap rows shift by whole 8-row swizzle atoms");
static_assert(TB_N == HALO_N0 + HALO_N1 && HALO_N0 % 64 == 0 && HALO_N1 % 64 == 0, "64 columns per filter row");
static_assert(!STREAM_K && CLUSTER_N == 1 && !TMA_3D && !X_TILED, "the halo walk has no stream-K, clusters or 3-D copies");
#endif

constexpr int kTbM = TB_M;
constexpr int kTbN = TB_N;
constexpr int kPix = 64;  // pixels per stage: the reduction extent of one k-tile
constexpr int kWgM = WG_M;
constexpr int kStages = STAGES;
constexpr int kThreads = 128 * (kWgM + 1);
constexpr int kWgRows = kTbM / kWgM;
constexpr int kMRep = kWgRows / 64;  // A slabs per consumer warpgroup
constexpr int kSlabBytes = kPix * 128;
constexpr int kASlabs = kTbM / 64;
constexpr int kBSlabs = kTbN / 64;
constexpr int kStageA = kASlabs * kSlabBytes;
#if HALO
constexpr int kStageBytes = kStageA + kClasses * kHaloBytes;  // dy slabs, then one halo box per row class
static_assert(kHaloBytes % 1024 == 0, "ring slots on swizzle-atom boundaries");
#else
constexpr int kStageBytes = (kASlabs + kBSlabs) * kSlabBytes;
#endif
constexpr int kRingBytes = kStages * kStageBytes;
constexpr int kAcc = kTbN / 2;  // FP32 accumulators per thread of one m64 wgmma
constexpr int kCluster = CLUSTER_N;
constexpr int kASlabsOwn = kASlabs / kCluster;  // dy slabs this block loads (and multicasts); TMA_3D: all, in one copy
#if WG_M == 2
// Register split (setmaxnreg): 384 threads x 168 at entry = 128 x 40 + 256 x 232 (SPATIAL3: the
// producer's 5-D walk spills at 40; 128 x 56 + 256 x 224 leaves 1,024 unused).
constexpr int kProducerRegs = SPATIAL3 ? 56 : 40;
constexpr int kConsumerRegs = SPATIAL3 ? 224 : 232;
#endif
static_assert(kWgRows % 64 == 0, "each consumer warpgroup owns whole m64 slabs");
static_assert(kTbN == 64 || kTbN == 128 || kTbN == 256 || (HALO && kTbN % 64 == 0 && kTbN <= 256), "wgmma N");
static_assert(kMRep * kAcc <= 128, "at most 128 accumulators per thread");
static_assert(kStages >= 3, "one slot in the tensor cores, one released late, one filling");
static_assert(kCluster == 1 || (kCluster == 2 && kASlabs % 2 == 0), "a cluster pair splits the dy slabs evenly");
static_assert(!STREAM_K || kCluster == 1, "stream-K deals whole iteration ranges to single blocks");
static_assert(!TMA_3D || kCluster == 1, "one 3-D copy of the whole dy tile per block: no multicast halves");
static_assert(!NCHW_1X1 || (!X_TILED && !TMA_3D && !HALO && kCluster == 1), "NCHW_1X1: its own copies, one block a unit");
static_assert(!SPATIAL3 || (!X_TILED && !HALO && !NCHW_1X1), "SPATIAL3: x through the 5-D im2col map");

// The problem as the kernel walks it.
struct TunaWrwGeom {
  int pixels, hw, Wo;                  // P = N*Ho*Wo, Ho*Wo, Wo (SPATIAL3: N*Do*Ho*Wo, Do*Ho*Wo, Wo)
  int lower_h, lower_w, stride_h, stride_w, dil_h, dil_w, S;
  int Ho, lower_d, stride_d, dil_d, RS;  // SPATIAL3: the depth's box origin, stride and dilation; R*S
  int Cg, Kpg, K, taps, chunks, groups, splits;
  int p_tiles;                         // pixel tiles: ceil(P / 64); HALO: N x tiles_h x tiles_w
  int tiles_w, tiles_hw;               // HALO: pixel tiles per image row and per image; NCHW_1X1: tiles_hw only
  int halo_r_step, halo_q_step;        // HALO: filter rows and box rows between a class's rows
};

// One work unit: group, split, tile origin and its pixel-tile range. With clusters a unit's N-tile
// may lie past the last one (its block only loads and multicasts its half of dy).
struct TunaWrwUnit {
  int g, z, m0, slab0, pt0, pt_end;
  int kind, tile;  // STREAM_K: kWhole, kOwner or kPartial; the tile's index
};
enum TunaWrwKind { kWhole, kOwner, kPartial };
// Units are numbered per cluster: groups x splits x M-tiles x N-tile groups of CLUSTER_N; block
// rank r of a cluster takes N-tile CLUSTER_N * j + r of unit j.
struct TunaWrwGrid {
  int m_tiles, n_groups, units, per;
  TUNA_DEVICE explicit TunaWrwGrid(const TunaWrwGeom& q) {
    m_tiles = (q.Kpg + kTbM - 1) / kTbM;
#if HALO
    const int n_tiles = q.S * q.chunks;  // one filter column s and 64-channel chunk: all R filter rows
#else
    const int n_tiles = (q.taps * q.chunks + kBSlabs - 1) / kBSlabs;
#endif
    n_groups = (n_tiles + kCluster - 1) / kCluster;
    units = q.groups * q.splits * m_tiles * n_groups;
    per = (q.p_tiles + q.splits - 1) / q.splits;
  }
  TUNA_DEVICE TunaWrwUnit Decode(const TunaWrwGeom& q, int u, int rank) const {
    TunaWrwUnit t;
    const int nt = (u % n_groups) * kCluster + rank;
    u /= n_groups;
    const int mt = u % m_tiles;
    u /= m_tiles;
    t.z = u % q.splits;
    t.g = u / q.splits;
    t.m0 = mt * kTbM;
    t.slab0 = HALO ? nt : nt * kBSlabs;  // HALO: the N-tile's (s, chunk) index
    t.pt0 = min(q.p_tiles, t.z * per);
    t.pt_end = min(q.p_tiles, t.pt0 + per);
    t.kind = kWhole;
    return t;
  }
};

// The units a block walks, in order: every gridDim.x / CLUSTER_N-th unit of the grid, or with
// STREAM_K the segments of its iteration range [begin, end) of tiles x pixel tiles.
struct TunaWrwWalk {
  const TunaWrwGeom& q;
  const TunaWrwGrid& grid;
  int rank, u;
  long long it, end, total;
  int p_tiles;
  TUNA_DEVICE TunaWrwWalk(const TunaWrwGeom& q_, const TunaWrwGrid& g_, int rank_) : q(q_), grid(g_), rank(rank_) {
    u = TUNA_BID_X / kCluster;
    p_tiles = q.p_tiles;
    total = static_cast<long long>(grid.units) * p_tiles;  // STREAM_K: splits 1, so units = tiles
    it = total * TUNA_BID_X / TUNA_GDIM_X;
    end = total * (TUNA_BID_X + 1) / TUNA_GDIM_X;
  }
  // The block holding iteration i (the largest b with begin(b) <= i).
  TUNA_DEVICE int BlockOf(long long i) const {
    return static_cast<int>(((i + 1) * TUNA_GDIM_X + total - 1) / total) - 1;
  }
  TUNA_DEVICE bool Next(TunaWrwUnit& t) {
#if STREAM_K
    if (it >= end) return false;
    const int tile = static_cast<int>(it / p_tiles);
    const int p0 = static_cast<int>(it - static_cast<long long>(tile) * p_tiles);
    const int p1 = static_cast<int>(min(static_cast<long long>(p_tiles), p0 + (end - it)));
    t = grid.Decode(q, tile, 0);
    t.pt0 = p0, t.pt_end = p1, t.tile = tile;
    t.kind = p0 > 0 ? kPartial : p1 < p_tiles ? kOwner : kWhole;
    it += p1 - p0;
    return true;
#else
    if (u >= grid.units) return false;
    t = grid.Decode(q, u, rank);
    u += TUNA_GDIM_X / kCluster;
    return true;
#endif
  }
};

// Producer: the ring's loads for every unit of this block.
TUNA_DEVICE void tuna_wrw_produce(unsigned ring, unsigned full, unsigned empty, const TunaTensorMap* tmap_x,
                                  const TunaTensorMap* tmap_dy, const TunaWrwGeom& q, const TunaWrwGrid& grid,
                                  int rank) {
  const int n_slabs = q.taps * q.chunks;
  int it = 0;
  TunaWrwUnit t;
  for (TunaWrwWalk walk(q, grid, rank); walk.Next(t);) {
#if HALO
    (void)n_slabs, (void)kASlabsOwn;
    const unsigned bytes = static_cast<unsigned>(kStageBytes);
    const int s_tap = t.slab0 / q.chunks, chunk = t.slab0 - s_tap * q.chunks;
#else
    const int b_slabs = max(0, min(kBSlabs, n_slabs - t.slab0));
    const unsigned bytes = static_cast<unsigned>((kASlabs + (TMA_3D && X_TILED ? kBSlabs : b_slabs)) * kSlabBytes);
#endif
    const int m_row = t.g * q.Kpg + t.m0;
    for (int pt = t.pt0; pt < t.pt_end; ++pt, ++it) {
      const int slot = it % kStages;
      if (it >= kStages) tuna_mbar_wait(empty + 8 * slot, ((it / kStages) - 1) & 1);
      const unsigned bar = full + 8 * slot;
      const unsigned dst = ring + slot * kStageBytes;
      tuna_mbar_expect_tx(bar, bytes);
#if HALO
      // Pixel tile pt: image img, output rows oh0.. (TILE_H), columns ow0.. (TILE_W); dy's box
      // zero past Ho and Wo, x's halo box zero in the padding (the copy engine's bounds).
      const int img = pt / q.tiles_hw;
      const int rem = pt - img * q.tiles_hw;
      const int th = rem / q.tiles_w;
      const int oh0 = th * kTileH, ow0 = (rem - th * q.tiles_w) * kTileW;
#pragma unroll
      for (int j = 0; j < kASlabs; ++j) tuna_tma_tile_4d(dst + j * kSlabBytes, tmap_dy, m_row + 64 * j, ow0, oh0, img, bar);
      const int x_col = q.stride_w * ow0 + q.lower_w + s_tap * q.dil_w;
#pragma unroll
      for (int cls = 0; cls < kClasses; ++cls) {  // class 1's first filter row is r = 1
        tuna_tma_tile_4d(dst + kStageA + cls * kHaloBytes, tmap_x, t.g * q.Cg + chunk * 64, x_col,
                         q.stride_h * oh0 + q.lower_h + cls * q.dil_h, img, bar);
      }
#elif NCHW_1X1
      // Pixel tile pt: 64 pixels of image img (zeros past Ho*Wo); dy's rows and x's channels K-major.
      const int img = pt / q.tiles_hw;
      const int p0 = (pt - img * q.tiles_hw) * kPix;
#pragma unroll
      for (int j = 0; j < kASlabs; ++j) tuna_tma_tile_3d(dst + j * kSlabBytes, tmap_dy, p0, m_row + 64 * j, img, bar);
      for (int j = 0; j < b_slabs; ++j) {
        tuna_tma_tile_3d(dst + kStageA + j * kSlabBytes, tmap_x, p0, t.g * q.Cg + (t.slab0 + j) * 64, img, bar);
      }
#else
      const int p0 = pt * kPix;
#if TMA_3D
      static_assert(kASlabsOwn == kASlabs, "one copy of the whole dy tile");
      tuna_tma_tile_3d(dst, tmap_dy, 0, p0, m_row / 64, bar);  // the tile's kASlabs slabs at once
#else
#pragma unroll
      for (int i = 0; i < kASlabsOwn; ++i) {
        const int j = rank * kASlabsOwn + i;
#if CLUSTER_N > 1
        tuna_tma_tile_2d_multicast(dst + j * kSlabBytes, tmap_dy, m_row + 64 * j, p0, bar, (1 << kCluster) - 1);
#else
        tuna_tma_tile_2d(dst + j * kSlabBytes, tmap_dy, m_row + 64 * j, p0, bar);
#endif
      }
#endif
#if X_TILED && TMA_3D
      tuna_tma_tile_3d(dst + kStageA, tmap_x, 0, p0, (t.g * q.Cg) / 64 + t.slab0, bar);
#elif X_TILED
      // 1x1, stride 1, no padding: x is the (C, P) matrix itself; one slab per 64-channel chunk.
      for (int j = 0; j < b_slabs; ++j) {
        tuna_tma_tile_2d(dst + kStageA + j * kSlabBytes, tmap_x, t.g * q.Cg + (t.slab0 + j) * 64, p0, bar);
      }
#else
      const int img = p0 / q.hw;
#if SPATIAL3
      const int rem_d = p0 - img * q.hw;
      const int od = rem_d / (q.Ho * q.Wo);
      const int rem = rem_d - od * q.Ho * q.Wo;
      const int d0 = q.lower_d + q.stride_d * od;
#else
      const int rem = p0 - img * q.hw;
#endif
      const int oh = rem / q.Wo;
      const int h0 = q.lower_h + q.stride_h * oh;
      const int w0 = q.lower_w + q.stride_w * (rem - oh * q.Wo);
      for (int j = 0; j < b_slabs; ++j) {
        const int slab = t.slab0 + j;
        const int tap = slab / q.chunks;
        const int chunk = slab - tap * q.chunks;
#if SPATIAL3
        const int td = tap / q.RS;  // taps in (T, R, S) order
        const int rs = tap - td * q.RS;
        const int r = rs / q.S;
        tuna_tma_im2col_5d(dst + kStageA + j * kSlabBytes, tmap_x, t.g * q.Cg + chunk * 64, w0, h0, d0, img,
                           static_cast<unsigned short>((rs - r * q.S) * q.dil_w),
                           static_cast<unsigned short>(r * q.dil_h), static_cast<unsigned short>(td * q.dil_d), bar);
#else
        const int r = tap / q.S;
        tuna_tma_im2col_4d(dst + kStageA + j * kSlabBytes, tmap_x, t.g * q.Cg + chunk * 64, w0, h0, img,
                           static_cast<unsigned short>((tap - r * q.S) * q.dil_w),
                           static_cast<unsigned short>(r * q.dil_h), bar);
#endif
      }
#endif
#endif  // HALO
    }
  }
}

// Consumer warpgroup (1..WG_M): its rows of every unit's tile, written from the accumulators.
// Accumulator layout of wgmma m64nN: warp w of the warpgroup holds rows 16w + lane/4 (+8); pair j
// covers columns 8j + 2*(lane%4) + {0, 1}; a pair never straddles a 64-column slab or C/G (even).
// Releases ring slot `slot` once this warp's wgmmas that read it retired: one arrival per consumer
// warp on the `empty` barrier of each block of the cluster (lane r signals block r).
TUNA_DEVICE void tuna_wrw_release(unsigned empty, int slot, int lane) {
  __syncwarp();
#if CLUSTER_N > 1
  if (lane < kCluster) tuna_mbar_arrive_remote(tuna_map_rank(empty + 8 * slot, lane));
#else
  if (lane == 0) tuna_mbar_arrive(empty + 8 * slot);
#endif
}

// STREAM_K: block `slot`'s partial of its first segment in fragment order (a float4 per 8-column
// group of each m64 slab, at ((cw * kMRep + mr) * kTbN / 8 + j) * 128 + tid_wg: coalesced), then
// its flag, set once every consumer thread's stores are visible.
TUNA_DEVICE void tuna_wrw_publish(float* ws, int* flags, int slot, const float (&acc)[kMRep][kAcc], int cw, int tid_wg) {
  float4* dst = reinterpret_cast<float4*>(ws + static_cast<long long>(slot) * kTbM * kTbN);
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
    for (int j = 0; j < kTbN / 8; ++j) {
      dst[((cw * kMRep + mr) * (kTbN / 8) + j) * 128 + tid_wg] =
          make_float4(acc[mr][4 * j], acc[mr][4 * j + 1], acc[mr][4 * j + 2], acc[mr][4 * j + 3]);
    }
  }
  __threadfence();
  tuna_named_sync(1, 128 * kWgM);  // every consumer thread's partial is stored and fenced
  if (cw == 0 && tid_wg == 0) asm volatile("st.release.gpu.global.s32 [%0], %1;\n" ::"l"(flags + slot), "r"(1) : "memory");
}

// STREAM_K: the owner of a tile adds the partials of blocks first..last (their flags awaited), in
// block order.
TUNA_DEVICE void tuna_wrw_gather(const float* ws, const int* flags, int first, int last, float (&acc)[kMRep][kAcc],
                                 int cw, int tid_wg) {
  for (int b = first; b <= last; ++b) {
    int ready = 0;
    do {
      asm volatile("ld.acquire.gpu.global.s32 %0, [%1];\n" : "=r"(ready) : "l"(flags + b) : "memory");
    } while (ready == 0);
    const float4* src = reinterpret_cast<const float4*>(ws + static_cast<long long>(b) * kTbM * kTbN);
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
      for (int j = 0; j < kTbN / 8; ++j) {
        const float4 v = src[((cw * kMRep + mr) * (kTbN / 8) + j) * 128 + tid_wg];
        acc[mr][4 * j] += v.x, acc[mr][4 * j + 1] += v.y, acc[mr][4 * j + 2] += v.z, acc[mr][4 * j + 3] += v.w;
      }
    }
  }
}

// The stream-K workspace: gridDim.x partial slots, then the flags.
struct TunaWrwStream {
  float* ws;
  int* flags;
};

TUNA_DEVICE void tuna_wrw_consume(unsigned ring, unsigned full, unsigned empty, const TunaWrwGeom& q,
                                  const TunaWrwGrid& grid, void* TUNA_RESTRICT out, long long out_off,
                                  int partials, int rank, const TunaWrwStream& sk) {
#if WG_M == 2
  tuna_setmaxnreg_inc<kConsumerRegs>();
#endif
  const int tid = TUNA_TID_X;
  const int cw = (tid >> 7) - 1;
  const int warp_in_wg = (tid >> 5) & 3;
  const int lane = tid & 31;
  const long long kg = static_cast<long long>(q.taps) * q.Cg;  // dw columns per output channel
  float acc[kMRep][kAcc];
  int it = 0;
  TunaWrwUnit t;
  for (TunaWrwWalk walk(q, grid, rank); walk.Next(t);) {
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
      for (int j = 0; j < kAcc; ++j) acc[mr][j] = 0.f;
    }
    const int k_tiles = t.pt_end - t.pt0;
    for (int kt = 0; kt < k_tiles; ++kt, ++it) {
      const int slot = it % kStages;
      tuna_mbar_wait(full + 8 * slot, (it / kStages) & 1);
      const unsigned a_tile = ring + slot * kStageBytes + cw * kMRep * kSlabBytes;
      const unsigned b_tile = ring + slot * kStageBytes + kStageA;
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
      tuna_wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < kPix / 16; ++k16) {
#if HALO
        // A class's next filter row views its box q_step rows (whole 8-row atoms) further down: the
        // descriptor's slab stride steps N by 64 columns = one filter row. Class 1's accumulators
        // follow class 0's: together the layout of one wgmma of N = TB_N.
        const unsigned halo_lbo = q.halo_q_step * kTileW * 128;
#pragma unroll
        for (int mr = 0; mr < kMRep; ++mr) {
          const unsigned long long da = tuna_desc_mn_sw128(a_tile + mr * kSlabBytes + k16 * 2048, kSlabBytes);
          TUNA_WGMMA_OF(HALO_N0)<1, 1>(*reinterpret_cast<float(*)[HALO_N0 / 2]>(&acc[mr][0]), da,
                                       tuna_desc_mn_sw128(b_tile + k16 * 2048, halo_lbo));
#if HALO_N1
          TUNA_WGMMA_OF(HALO_N1)<1, 1>(*reinterpret_cast<float(*)[HALO_N1 / 2]>(&acc[mr][HALO_N0 / 2]), da,
                                       tuna_desc_mn_sw128(b_tile + kHaloBytes + k16 * 2048, halo_lbo));
#endif
        }
#elif NCHW_1X1
        const unsigned long long db = tuna_desc_sw128(b_tile + k16 * 32);  // TB_N channel rows, K-major
#pragma unroll
        for (int mr = 0; mr < kMRep; ++mr) {
          TUNA_WGMMA_OF(TB_N)<0, 0>(acc[mr], tuna_desc_sw128(a_tile + mr * kSlabBytes + k16 * 32), db);
        }
#else
        const unsigned long long db = tuna_desc_mn_sw128(b_tile + k16 * 2048, kSlabBytes);
#pragma unroll
        for (int mr = 0; mr < kMRep; ++mr) {
          TUNA_WGMMA_OF(TB_N)<1, 1>(acc[mr], tuna_desc_mn_sw128(a_tile + mr * kSlabBytes + k16 * 2048, kSlabBytes),
                                    db);
        }
#endif
      }
      tuna_wgmma_commit();
      tuna_wgmma_wait<1>();  // the previous stage's wgmmas have retired: release its slot
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
      if (kt > 0) tuna_wrw_release(empty, (it - 1) % kStages, lane);
    }
    // Unconditional wait: on a path where ptxas cannot see the wgmmas retire it inserts its own
    // and serialises every wgmma of the loop (C7517/C7518), as in hopper_tma_fwd.cu.
    tuna_wgmma_wait<0>();
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
    if (k_tiles > 0) tuna_wrw_release(empty, (it - 1) % kStages, lane);
#if STREAM_K
    if (t.kind == kPartial) {  // a tile's middle or tail: its owner (a lower block) adds it
      tuna_wrw_publish(sk.ws, sk.flags, TUNA_BID_X, acc, cw, tid & 127);
      continue;
    }
    if (t.kind == kOwner) {  // the tile's head: the later blocks up to the one with its last pixel tile
      const long long tile_end = static_cast<long long>(t.tile + 1) * walk.p_tiles;
      tuna_wrw_gather(sk.ws, sk.flags, TUNA_BID_X + 1, walk.BlockOf(tile_end - 1), acc, cw, tid & 127);
    }
#else
    (void)sk;
#endif
    // A unit without pixels (a split past the last tile) still writes its zero slice.
    float* ws = static_cast<float*>(out) + out_off + static_cast<long long>(t.z) * q.K * kg;
    tuna_u16* dw = static_cast<tuna_u16*>(out) + out_off;
#pragma unroll
    for (int j = 0; j < kTbN / 8; ++j) {
      const int col = 8 * j + 2 * (lane & 3);
#if HALO  // column 64 g + c' of N-tile (s, chunk): the g-th filter row r of the classes, channel chunk * 64 + c'
      const int s_tap = t.slab0 / q.chunks;
      const int g = col / 64;
      const int r = g < kTaps0 ? g * q.halo_r_step : 1 + (g - kTaps0) * q.halo_r_step;
      const int tap = r * q.S + s_tap;
      const int c = (t.slab0 - s_tap * q.chunks) * 64 + (col & 63);
#else
      const int slab = t.slab0 + col / 64;
      const int tap = slab / q.chunks;
      const int c = (slab - tap * q.chunks) * 64 + (col & 63);
#endif
      if (tap >= q.taps || c >= q.Cg) continue;
      const long long col_at = static_cast<long long>(tap) * q.Cg + c;
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) {
        const int r0 = t.m0 + cw * kWgRows + mr * 64 + warp_in_wg * 16 + (lane >> 2);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = r0 + 8 * half;
          if (row >= q.Kpg) continue;
          const long long at = (static_cast<long long>(t.g) * q.Kpg + row) * kg + col_at;
          const float v0 = acc[mr][4 * j + 2 * half], v1 = acc[mr][4 * j + 2 * half + 1];
          if (partials) {
            *reinterpret_cast<float2*>(ws + at) = make_float2(v0, v1);
          } else {
            *reinterpret_cast<unsigned*>(dw + at) = tuna_pack2(v0, v1);
          }
        }
      }
    }
  }
}

// Sizes: n_img, Ho, Wo (dy's), the forward im2col box origin (lower_h, lower_w = -pad), strides,
// dilations, R, S, C/G, K, groups, chunks = ceil(C/G / 64), splits; partials: 1 writes FP32 slices;
// with SPATIAL3 then Do, the depth's origin (lower_d = -pad_d), stride, dilation and taps T.
#if STREAM_K
#define TUNA_WRW_SK_ARGS , float* TUNA_RESTRICT sk_ws, long long sk_off
#else
#define TUNA_WRW_SK_ARGS
#endif
#if SPATIAL3
#define TUNA_WRW_3D_ARGS , int Do, int lower_d, int stride_d, int dil_d, int T
#else
#define TUNA_WRW_3D_ARGS
#endif
#if CLUSTER_N > 1
#define TUNA_WRW_CLUSTER __cluster_dims__(CLUSTER_N, 1, 1)
#else
#define TUNA_WRW_CLUSTER
#endif
TUNA_GLOBAL void __launch_bounds__(kThreads, 1) TUNA_WRW_CLUSTER
    tuna_hopper_tma_wrw(const __grid_constant__ TunaTensorMap tmap_x, const __grid_constant__ TunaTensorMap tmap_dy,
                        void* TUNA_RESTRICT out, long long out_off, int n_img, int Ho, int Wo, int lower_h,
                        int lower_w, int stride_h, int stride_w, int dil_h, int dil_w, int R, int S, int Cg, int K,
                        int groups, int chunks, int splits, int partials TUNA_WRW_SK_ARGS TUNA_WRW_3D_ARGS) {
  TUNA_DYNAMIC_SHARED(unsigned char, smem_raw);
  const unsigned raw_addr = tuna_smem_u32(smem_raw);
  const unsigned ring = raw_addr + ((1024 - (raw_addr & 1023)) & 1023);  // the swizzle repeats every 1024 B
  const unsigned full = ring + kRingBytes;
  const unsigned empty = full + 8 * kStages;
  TunaWrwGeom q;
  q.pixels = n_img * Ho * Wo, q.hw = Ho * Wo, q.Wo = Wo;
  q.lower_h = lower_h, q.lower_w = lower_w, q.stride_h = stride_h, q.stride_w = stride_w;
  q.dil_h = dil_h, q.dil_w = dil_w, q.S = S;
  q.Cg = Cg, q.K = K, q.Kpg = K / groups, q.taps = R * S, q.chunks = chunks, q.groups = groups, q.splits = splits;
  q.Ho = Ho, q.RS = R * S;
#if SPATIAL3
  q.pixels *= Do, q.hw *= Do, q.taps *= T;
  q.lower_d = lower_d, q.stride_d = stride_d, q.dil_d = dil_d;
#else
  q.lower_d = 0, q.stride_d = q.dil_d = 1;
#endif
#if HALO
  q.halo_r_step = stride_h == 2 && (dil_h & 1) ? 2 : 1;
  q.halo_q_step = q.halo_r_step * dil_h / stride_h;
  q.tiles_w = (Wo + kTileW - 1) / kTileW;
  q.tiles_hw = q.tiles_w * ((Ho + kTileH - 1) / kTileH);
  q.p_tiles = n_img * q.tiles_hw;
#elif NCHW_1X1
  q.tiles_w = q.halo_r_step = q.halo_q_step = 0;
  q.tiles_hw = (q.hw + kPix - 1) / kPix;
  q.p_tiles = n_img * q.tiles_hw;
#else
  q.tiles_w = q.tiles_hw = q.halo_r_step = q.halo_q_step = 0;
  q.p_tiles = (q.pixels + kPix - 1) / kPix;
#endif
  const TunaWrwGrid grid(q);
  const int rank = kCluster > 1 ? static_cast<int>(tuna_cluster_rank()) : 0;
  if (TUNA_TID_X == 0) {
    for (int s = 0; s < kStages; ++s) {
      tuna_mbar_init(full + 8 * s, 1);
      tuna_mbar_init(empty + 8 * s, 4 * kWgM * kCluster);  // every consumer warp of the cluster, once per use
    }
    tuna_fence_mbar_init();
  }
#if CLUSTER_N > 1
  tuna_cluster_sync();  // the peer's barriers are initialised before anything lands in them
#else
  TUNA_SYNC();
#endif
  if (TUNA_TID_X >= 128) {
#if STREAM_K
    const TunaWrwStream sk{sk_ws + sk_off,
                           reinterpret_cast<int*>(sk_ws + sk_off + static_cast<long long>(TUNA_GDIM_X) * kTbM * kTbN)};
#else
    const TunaWrwStream sk{nullptr, nullptr};
#endif
    tuna_wrw_consume(ring, full, empty, q, grid, out, out_off, partials, rank, sk);
  } else {
#if WG_M == 2
    tuna_setmaxnreg_dec<kProducerRegs>();
#endif
    if (TUNA_TID_X == 0) {
      tuna_prefetch_tmap(&tmap_x);
      tuna_prefetch_tmap(&tmap_dy);
      tuna_wrw_produce(ring, full, empty, &tmap_x, &tmap_dy, q, grid, rank);
    }
  }
#if CLUSTER_N > 1
  __syncwarp();
  tuna_cluster_sync();  // no block leaves while its peer may still multicast into it or arrive on its barriers
#endif
}

#if STREAM_K
// Zeroes the n flags that follow the partial slots (`off` 4-byte words into the workspace) before a run.
TUNA_GLOBAL void __launch_bounds__(256) tuna_hopper_wrw_clear(int* TUNA_RESTRICT flags, long long off, int n) {
  const int i = TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (i < n) flags[off + i] = 0;
}
#endif
