// Hopper (sm_90a) forward convolution for thin inputs (stride 1, dilation 1, one group, a filter
// that fits in shared memory), FP16/BF16, NHWC, for the solver TunaHopperHaloFwd
// (tuner_core/solver/conv/gpu_hopper_halo.cc): wgmma fed by tiled TMA copies of x's halo, each
// copied pixel read by all R filter rows from shared memory, where the im2col kernel
// (hopper_tma_fwd.cu) copies every pixel R x S times.
//
//   GEMM per tile: M = TB_M output pixels (TILE_H rows x TILE_W columns of one image, row-major),
//   N = K output channels (all in one tile, TB_N >= K), reduction = R x S taps x C channels in
//   KB = ceil(C / TB_K) blocks of TB_K.
//
// Shared memory holds the whole filter (KB blocks x R*S taps x TB_N rows x TB_K channels, copied
// once per block) and a ring of `stages` channel blocks of copies. Copy s of a tile holds
// x[img][oh0 - pad_h + h][ow0 - pad_w + s + w][kb * TB_K + c] for h < TILE_H + R - 1, w < TILE_W,
// c < TB_K, per channel block kb (one tiled TMA box each; zeros outside x and past C), stored
// row-major with one pixel per TB_K * 2-byte row (32, 64 or 128 bytes, in the swizzle of that
// width). Output pixel m = i * TILE_W + j of the tile and tap (r, s) then read row m + r * TILE_W
// of copy s: each tap's A operand is a K-major tile at a whole-8-row offset (TILE_W % 8 == 0), so
// wgmma reads it in place; blocks of 16 channels (32-byte rows) keep C = 48 or 80 unpadded.
// A block is one producer warpgroup (one thread issues the copies; its registers handed to the
// consumers by setmaxnreg) and WG_M consumer warpgroups splitting the tile's rows, or with
// PINGPONG 1 two consumer warpgroups taking alternate tiles whole (one's epilogue overlaps the
// other's wgmmas). A consumer issues a copy block's R * TB_K / 16 wgmmas per m64 slab, releases
// the block before once those have retired, and writes its rows through a shared staging slab as
// 16-byte coalesced stores. Persistent: block b takes tiles b, b + gridDim.x, ... (img, tile
// row, tile column; columns fastest). Deterministic: each output element is written once by one
// thread. Sizes are run-time arguments (one build per tile config, TB_N and TB_K).
// Options: TB_M (128, 256), TILE_W (8, 16, 32, 64; TILE_H = TB_M / TILE_W), WG_M (1, 2),
//          PINGPONG (0; 1 with WG_M 1), TB_N (K rounded up to 32, <= 256; the wgmma N), TB_K (16,
//          32 or 64 channels per block), TUNA_DTYPE (1 fp16, 2 bf16), VEC_OUT (1: K % 8 == 0).
// Arguments: tmap_x (tiled, dims C, W, H, N; box TB_K x TILE_W x (TILE_H + R - 1) x 1), tmap_w
// (tiled, dims C, K, R*S with strides R*S*C and C elements; box TB_K x TB_N x R*S), y, then int32
// n_img, Ho, Wo, K, R, S, pad_h, pad_w, tiles_h (ceil(Ho / TILE_H)), tiles_w (ceil(Wo / TILE_W)),
// kb (channel blocks), stages (copy blocks in the ring, 2..8; with PINGPONG 4..8, half per consumer).
// Launch: gridDim.x = min(tiles, multiprocessors), blockDim.x = 128 * (WG_M + PINGPONG + 1),
// dynamic shared memory = 1024 + KB*R*S*TB_N*TB_K*2 (filter) + stages * TILE_W*(TILE_H+R-1)*TB_K*2
// (ring) + (WG_M + PINGPONG) * 4 * 16 * (E + 8) * 2 (epilogue slabs, E = 64 or 32) + 136
// (mbarriers).
#include "common/portability.h"
#include "conv/async_copy.h"  // tuna_smem_u32

#if !defined(TUNA_BACKEND_CUDA)
#error "hopper_halo_fwd.cu needs CUDA sm_90a (wgmma, TMA, mbarrier, setmaxnreg)"
#endif

#include "conv/wgmma_ops.h"
#include "conv/hopper_ops.h"

#ifndef PINGPONG
#define PINGPONG 0
#endif
#ifndef VEC_OUT
#define VEC_OUT 0
#endif
#define TUNA_TWO_CONSUMERS (WG_M == 2 || PINGPONG)

constexpr int kTbM = TB_M;
constexpr int kTileW = TILE_W;
constexpr int kTileH = TB_M / TILE_W;
constexpr int kTbN = TB_N;
constexpr int kTbK = TB_K;
constexpr int kWgM = WG_M;
constexpr int kConsumers = kWgM + PINGPONG;
constexpr int kThreads = 128 * (kConsumers + 1);
constexpr int kWgRows = PINGPONG ? kTbM : kTbM / kWgM;
constexpr int kMRep = kWgRows / 64;
constexpr int kAcc = kTbN / 2;
constexpr int kRowBytes = kTbK * 2;  // one pixel's channels of a block: a 32-, 64- or 128-byte swizzle row
constexpr int kMaxStages = 8;        // copy blocks in the ring, at most
constexpr int kEpiCols = kTbN % 64 == 0 ? 64 : 32;
constexpr int kEpiPitch = kEpiCols + 8;
constexpr int kEpiChunks = kEpiCols / 8;
constexpr int kEpiRowsPerPass = 32 / kEpiChunks;
constexpr int kEpiPasses = 16 / kEpiRowsPerPass;
constexpr int kEpiWarpBytes = 16 * kEpiPitch * 2;
#if TUNA_TWO_CONSUMERS
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
#endif
static_assert(kTbM == 128 || kTbM == 256, "TB_M");
static_assert(kTileW % 8 == 0 && kTbM % kTileW == 0, "TILE_W: whole 8-row groups, whole tile rows");
static_assert(kWgRows % 64 == 0, "each consumer warpgroup owns whole m64 slabs");
static_assert(!PINGPONG || kWgM == 1, "ping-pong: each consumer warpgroup owns whole tiles");
static_assert(kTbN % 32 == 0 && kTbN <= 256, "wgmma N");
static_assert(kTbK == 16 || kTbK == 32 || kTbK == 64, "one 32-, 64- or 128-byte swizzle row per pixel");
static_assert(kMRep * kAcc <= 128, "accumulators per thread");

// Shared-memory map: the filter, the ring of copies, the epilogue slabs, the mbarriers (w_full,
// then full and empty per ring slot). Sizes that depend on R, S, KB and the ring are run-time.
struct TunaHaloSmem {
  unsigned w, halo, epi, w_full, full, empty;
  unsigned tap_bytes;    // one tap of one channel block of the filter: TB_N rows
  unsigned wblk_bytes;   // one channel block of the filter: R*S taps
  unsigned blk_bytes;    // one channel block of a copy (the ring's unit): TILE_W x (TILE_H + R - 1) rows
  int stages;
  unsigned char* raw;
  unsigned raw_addr;
};
TUNA_DEVICE TunaHaloSmem tuna_halo_smem(unsigned char* smem_raw, int R, int S, int kb, int stages) {
  TunaHaloSmem m;
  m.raw = smem_raw;
  m.raw_addr = tuna_smem_u32(smem_raw);
  m.stages = stages;
  m.tap_bytes = kTbN * kRowBytes;
  m.wblk_bytes = R * S * m.tap_bytes;
  m.blk_bytes = kTileW * (kTileH + R - 1) * kRowBytes;
  m.w = m.raw_addr + ((1024 - (m.raw_addr & 1023)) & 1023);  // the swizzle repeats every 1024 B or less
  // Every part a multiple of its swizzle's 8 rows: TB_N and TILE_W are multiples of 8.
  m.halo = m.w + kb * m.wblk_bytes;
  m.epi = m.halo + stages * m.blk_bytes;
  m.w_full = m.epi + kConsumers * 4 * kEpiWarpBytes;
  m.full = m.w_full + 8;
  m.empty = m.full + kMaxStages * 8;
  return m;
}

// A position in a ring of `count` slots from slot `first`: the slot, the parity of its current
// use, and whether the ring has wrapped (a slot's first use needs no release). With PINGPONG each
// consumer owns half of the slots, so that no consumer waits on a slot whose previous use belongs
// to the other consumer's tile (an mbarrier's parity tells only the last two phases apart).
struct TunaRing {
  int first, count, slot = 0;
  unsigned phase = 0;
  bool wrapped = false;
  TUNA_DEVICE TunaRing(int first_slot, int slots) : first(first_slot), count(slots) {}
  TUNA_DEVICE int Slot() const { return first + slot; }
  TUNA_DEVICE void Next() {
    if (++slot == count) slot = 0, phase ^= 1, wrapped = true;
  }
};
// Consumer cw's ring (PINGPONG: the half of the slots its tiles use).
TUNA_DEVICE TunaRing tuna_halo_ring(int stages, int cw) {
  return PINGPONG ? TunaRing(cw * (stages / 2), stages / 2) : TunaRing(0, stages);
}

// The tiles of a launch: n_img x tiles_h x tiles_w, columns fastest.
struct TunaHaloGrid {
  int n_img, Ho, Wo, K, R, S, pad_h, pad_w, tiles_h, tiles_w, kb, tiles;
  TUNA_DEVICE void Decode(int tile, int& img, int& oh0, int& ow0) const {
    const int per_img = tiles_h * tiles_w;
    img = tile / per_img;
    const int rem = tile - img * per_img;
    const int th = rem / tiles_w;
    oh0 = th * kTileH;
    ow0 = (rem - th * tiles_w) * kTileW;
  }
};

// One tile's S copies, block by block, each into the next slot of `ring` once the consumers
// released the slot's previous use.
TUNA_DEVICE void tuna_halo_produce_tile(const TunaHaloSmem& sm, const TunaHaloGrid& g, const TunaTensorMap* tmap_x,
                                        int tile, TunaRing& ring) {
  int img, oh0, ow0;
  g.Decode(tile, img, oh0, ow0);
  for (int s = 0; s < g.S; ++s) {
    for (int kb = 0; kb < g.kb; ++kb) {
      const int slot = ring.Slot();
      if (ring.wrapped) tuna_mbar_wait(sm.empty + 8 * slot, ring.phase ^ 1);
      const unsigned bar = sm.full + 8 * slot;
      tuna_mbar_expect_tx(bar, sm.blk_bytes);
      tuna_tma_tile_4d(sm.halo + slot * sm.blk_bytes, tmap_x, kb * kTbK, ow0 - g.pad_w + s, oh0 - g.pad_h, img, bar);
      ring.Next();
    }
  }
}

// The producer thread: the filter once, then the copies of each tile of the block (with PINGPONG,
// alternate tiles into the two consumers' halves of the ring).
TUNA_DEVICE void tuna_halo_produce(const TunaHaloSmem& sm, const TunaHaloGrid& g, const TunaTensorMap* tmap_x,
                                   const TunaTensorMap* tmap_w) {
  tuna_prefetch_tmap(tmap_x);
  tuna_prefetch_tmap(tmap_w);
  tuna_mbar_expect_tx(sm.w_full, g.kb * sm.wblk_bytes);
  for (int kb = 0; kb < g.kb; ++kb) tuna_tma_tile_3d(sm.w + kb * sm.wblk_bytes, tmap_w, kb * kTbK, 0, 0, sm.w_full);
  TunaRing ring0 = tuna_halo_ring(sm.stages, 0), ring1 = tuna_halo_ring(sm.stages, 1);
  for (int tile = TUNA_BID_X, it = 0; tile < g.tiles; tile += TUNA_GDIM_X, ++it) {
    if (PINGPONG && (it & 1)) {
      tuna_halo_produce_tile(sm, g, tmap_x, tile, ring1);
    } else {
      tuna_halo_produce_tile(sm, g, tmap_x, tile, ring0);
    }
  }
}

// A consumer's wgmmas of one tile: per channel block kb of copy s, taps (r, s) for every r, the
// block before released once they have retired. Leaves the tile's sums in acc.
TUNA_DEVICE void tuna_halo_tile_mma(const TunaHaloSmem& sm, const TunaHaloGrid& g, TunaRing& ring, int row_wg,
                                    float (&acc)[kMRep][kAcc]) {
  int prev = -1;
  for (int s = 0, kb = 0; s < g.S;) {
    const int slot = ring.Slot();
    tuna_mbar_wait(sm.full + 8 * slot, ring.phase);
    const unsigned blk = sm.halo + slot * sm.blk_bytes + row_wg * kWgRows * kRowBytes;
    const unsigned wblk = sm.w + kb * sm.wblk_bytes + s * sm.tap_bytes;
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
    tuna_wgmma_fence();
    for (int r = 0; r < g.R; ++r) {
      tuna_ktile_wgmmas<kRowBytes>(acc, blk + r * kTileW * kRowBytes, wblk + r * g.S * sm.tap_bytes, s + r + kb > 0,
                                   kTbK / 16);
    }
    tuna_wgmma_commit();
    tuna_wgmma_wait<1>();  // the previous copy's wgmmas have retired: release its slot
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
    if (prev >= 0) tuna_mbar_arrive(sm.empty + 8 * prev);
    prev = slot;
    ring.Next();
    if (++kb == g.kb) kb = 0, ++s;
  }
  tuna_wgmma_wait<0>();
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
  tuna_mbar_arrive(sm.empty + 8 * prev);
}

// Consumer warpgroup cw + 1: its rows of every tile of the block (with PINGPONG, every other tile,
// whole), each followed by its epilogue.
TUNA_DEVICE void tuna_halo_consume(const TunaHaloSmem& sm, const TunaHaloGrid& g, tuna_u16* TUNA_RESTRICT y) {
#if TUNA_TWO_CONSUMERS
  tuna_setmaxnreg_inc<kConsumerRegs>();
#endif
  const int tid = TUNA_TID_X;
  const int cw = (tid >> 7) - 1;
  const int row_wg = PINGPONG ? 0 : cw;
  const int warp_in_wg = (tid >> 5) & 3;
  const int lane = tid & 31;
  tuna_u16* epi_ptr =
      reinterpret_cast<tuna_u16*>(sm.raw + (sm.epi + (cw * 4 + warp_in_wg) * kEpiWarpBytes - sm.raw_addr));
#if VEC_OUT  // the solver's promise: K % 8 == 0
  constexpr bool vec_out = true;
#else
  const bool vec_out = (g.K & 7) == 0;
#endif
  float acc[kMRep][kAcc];
  tuna_mbar_wait(sm.w_full, 0);
  TunaRing ring = tuna_halo_ring(sm.stages, cw);
  for (int tile = TUNA_BID_X + (PINGPONG ? cw : 0) * TUNA_GDIM_X; tile < g.tiles;
       tile += (PINGPONG ? 2 : 1) * TUNA_GDIM_X) {
    int img, oh0, ow0;
    g.Decode(tile, img, oh0, ow0);
    tuna_halo_tile_mma(sm, g, ring, row_wg, acc);

    // Epilogue (the wgmma m64nN accumulator layout, as in hopper_tma_fwd.cu): each warp stages 16
    // rows x kEpiCols columns at a time and stores them as 16-byte chunks; tile row m is output
    // pixel (oh0 + m / TILE_W, ow0 + m % TILE_W), written where it lies inside y.
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
      const int row0 = row_wg * kWgRows + mr * 64 + warp_in_wg * 16;
      long long pix[kEpiPasses];
#pragma unroll
      for (int qq = 0; qq < kEpiPasses; ++qq) {
        const int m = row0 + lane / kEpiChunks + kEpiRowsPerPass * qq;
        const int oh = oh0 + m / kTileW, ow = ow0 + m % kTileW;
        pix[qq] = oh < g.Ho && ow < g.Wo ? (static_cast<long long>(img) * g.Ho + oh) * g.Wo + ow : -1;
      }
#pragma unroll
      for (int cb = 0; cb < kTbN / kEpiCols; ++cb) {
#pragma unroll
        for (int jj = 0; jj < kEpiCols / 8; ++jj) {
          const int j = cb * (kEpiCols / 8) + jj;
          const int col = 8 * jj + 2 * (lane & 3);
          const int r = lane >> 2;
          *reinterpret_cast<unsigned*>(epi_ptr + r * kEpiPitch + col) = tuna_pack2(acc[mr][4 * j], acc[mr][4 * j + 1]);
          *reinterpret_cast<unsigned*>(epi_ptr + (r + 8) * kEpiPitch + col) =
              tuna_pack2(acc[mr][4 * j + 2], acc[mr][4 * j + 3]);
        }
        __syncwarp();
#pragma unroll
        for (int qq = 0; qq < kEpiPasses; ++qq) {
          const int row = lane / kEpiChunks + kEpiRowsPerPass * qq;
          const int n = cb * kEpiCols + (lane % kEpiChunks) * 8;
          if (pix[qq] >= 0 && n < g.K) {
            tuna_u16* dst = y + pix[qq] * g.K + n;
            const tuna_u16* src = epi_ptr + row * kEpiPitch + (lane % kEpiChunks) * 8;
            if (vec_out && (VEC_OUT || n + 8 <= g.K)) {
              *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
            } else {
              for (int e = 0; e < 8 && n + e < g.K; ++e) dst[e] = src[e];
            }
          }
        }
        __syncwarp();
      }
    }
  }
}

TUNA_GLOBAL void __launch_bounds__(kThreads, 1)
    tuna_hopper_halo_fwd(const __grid_constant__ TunaTensorMap tmap_x, const __grid_constant__ TunaTensorMap tmap_w,
                         tuna_u16* TUNA_RESTRICT y, int n_img, int Ho, int Wo, int K, int R, int S, int pad_h,
                         int pad_w, int tiles_h, int tiles_w, int kb, int stages) {
  TUNA_DYNAMIC_SHARED(unsigned char, smem_raw);
  const TunaHaloSmem sm = tuna_halo_smem(smem_raw, R, S, kb, stages);
  const TunaHaloGrid g{n_img, Ho, Wo, K, R, S, pad_h, pad_w, tiles_h, tiles_w, kb, n_img * tiles_h * tiles_w};
  if (TUNA_TID_X == 0) {
    tuna_mbar_init(sm.w_full, 1);
    for (int s = 0; s < stages; ++s) {
      tuna_mbar_init(sm.full + 8 * s, 1);
      tuna_mbar_init(sm.empty + 8 * s, 128 * kWgM);  // the warpgroups reading a slot, once per use
    }
    tuna_fence_mbar_init();
  }
  TUNA_SYNC();
  if (TUNA_TID_X >= 128) {
    tuna_halo_consume(sm, g, y);
  } else {
#if TUNA_TWO_CONSUMERS
    tuna_setmaxnreg_dec<kProducerRegs>();
#endif
    if (TUNA_TID_X == 0) tuna_halo_produce(sm, g, &tmap_x, &tmap_w);
  }
}
