// Hopper (sm_90a) warp-specialised, persistent implicit-GEMM forward convolution fed by the
// tensor memory accelerator, FP16/BF16, NHWC, grouped, for the solver TunaHopperTmaFwd
// (tuner_core/solver/conv/gpu_hopper_tma_fwd.cc).
//
//   GEMM per group g:  M = N*Ho*Wo (pixels)   N = K/G (output channels)   K = R*S*C/G (c fastest)
//
// The grid is persistent: block b computes output tiles b, b + gridDim.x, ... of the
// groups x M-tiles x N-tiles sequence (N-tiles fastest, so the blocks resident at one time share
// their A rows and every B row through L2). A block is one producer warpgroup and WG_M consumer
// warpgroups:
//   * one producer thread (its warpgroup's registers handed to the consumers by setmaxnreg)
//     issues, per k-tile, an im2col TMA copy of A (TB_M output pixels x 64 channels of one
//     filter tap, gathered from x with padding, strides and dilation by the copy engine) and a
//     tiled TMA copy of B (TB_N rows x 64 of w), into a STAGES-deep ring of 128-byte swizzled
//     shared tiles, both completing on the slot's `full` mbarrier; it runs ahead across tile
//     boundaries, bounded by the slots' `empty` mbarriers;
//   * each consumer warpgroup owns TB_M/WG_M rows of the tile: it waits on `full`, issues the
//     k-tile's wgmmas, and once the wgmmas of the previous k-tile have retired (wait_group 1)
//     arrives on that slot's `empty` mbarrier. After a tile's last k-tile each warp writes its 16
//     rows through a private shared staging slab as 16-byte coalesced stores, while the producer
//     already fills the ring for the next tile.
// No block-wide barrier after the start; no workspace; each output element is written once by
// one thread, so results are deterministic.
//
// Needs C/G % 64 == 0 (a k-tile is one filter tap); other shapes go to hopper_fwd.cu.
// Sizes are run-time arguments: one build serves every problem with the same options.
// Options: TB_M (64, 128, 256), TB_N (64, 128, 256), WG_M (1, 2), STAGES (3..8), TUNA_DTYPE (1 fp16,
//          2 bf16).
// Arguments: the two tensor maps (see tuna_hopper_tma_fwd), y, then the sizes as int32.
// Launch: gridDim.x = min(tiles, multiprocessors), blockDim.x = 128 * (WG_M + 1); dynamic shared
// memory = 1024 (alignment) + STAGES * (TB_M + TB_N) * 128 (ring) + WG_M * 4 * 16 * 72 * 2
// (epilogue slabs) + 16 * STAGES (mbarriers).
#include "common/portability.h"
#include "conv/async_copy.h"  // tuna_smem_u32

#if !defined(TUNA_BACKEND_CUDA)
#error "hopper_tma_fwd.cu needs CUDA sm_90a (wgmma, TMA, mbarrier, setmaxnreg)"
#endif

#include "conv/wgmma_ops.h"
#include "conv/hopper_ops.h"


constexpr int kTbM = TB_M;
constexpr int kTbN = TB_N;
constexpr int kTbK = 64;  // halves per row: one 128-byte swizzle row
constexpr int kWgM = WG_M;
constexpr int kStages = STAGES;
constexpr int kThreads = 128 * (kWgM + 1);
constexpr int kWgRows = kTbM / kWgM;
constexpr int kMRep = kWgRows / 64;
constexpr int kAcc = kTbN / 2;  // FP32 accumulators per thread of one m64 wgmma
constexpr int kRowBytes = kTbK * 2;
constexpr int kStageA = kTbM * kRowBytes;
constexpr int kStageBytes = kStageA + kTbN * kRowBytes;
constexpr int kRingBytes = kStages * kStageBytes;
constexpr int kEpiCols = 64;       // columns a warp stages at a time
constexpr int kEpiPitch = kEpiCols + 8;  // halves per staged row: conflict-free pair writes
constexpr int kEpiWarpBytes = 16 * kEpiPitch * 2;
constexpr int kEpiBytes = kWgM * 4 * kEpiWarpBytes;
// Register split (setmaxnreg) for WG_M == 2: 384 threads x 168 at entry = 128 x 40 + 256 x 232.
#if WG_M == 2
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 232;
#endif
static_assert(kWgRows % 64 == 0, "each consumer warpgroup owns whole m64 slabs");
static_assert(kTbN == 64 || kTbN == 128 || kTbN == 256, "wgmma N");
static_assert(kTbN % kEpiCols == 0, "epilogue slabs");
static_assert(kStages >= 3, "one slot in the tensor cores, one released late, one filling");


// Shared-memory map of a block: the ring, the consumers' epilogue slabs, the mbarriers.
struct TunaWsSmem {
  unsigned ring, epi, full, empty;
  unsigned char* raw;
  unsigned raw_addr;
};
TUNA_DEVICE TunaWsSmem tuna_ws_smem(unsigned char* smem_raw) {
  TunaWsSmem m;
  m.raw = smem_raw;
  m.raw_addr = tuna_smem_u32(smem_raw);
  m.ring = m.raw_addr + ((1024 - (m.raw_addr & 1023)) & 1023);  // the 128-byte swizzle repeats every 1024 B
  m.epi = m.ring + kRingBytes;
  m.full = m.epi + kEpiBytes;
  m.empty = m.full + kStages * 8;
  return m;
}

// The output tiles of one launch: groups x M-tiles x N-tiles, N-tiles fastest.
struct TunaTileGrid {
  int M, Kpg, Kg, n_tiles, mn_tiles, tiles, k_tiles;
  TUNA_DEVICE explicit TunaTileGrid(const TunaConvGeom& p) {
    M = p.n_img * p.Ho * p.Wo;
    Kpg = p.K / p.groups;
    Kg = p.R * p.S * (p.C / p.groups);
    n_tiles = (Kpg + kTbN - 1) / kTbN;
    mn_tiles = ((M + kTbM - 1) / kTbM) * n_tiles;
    tiles = mn_tiles * p.groups;
    k_tiles = (Kg + kTbK - 1) / kTbK;
  }
  TUNA_DEVICE void Decode(int tile, int& g, int& m0, int& n0) const {
    g = tile / mn_tiles;
    const int mn = tile - g * mn_tiles;
    m0 = (mn / n_tiles) * kTbM;
    n0 = (mn - (mn / n_tiles) * n_tiles) * kTbN;
  }
};

TUNA_DEVICE void tuna_ws_init_barriers(const TunaWsSmem& sm, unsigned full_count) {
  if (TUNA_TID_X == 0) {
    for (int s = 0; s < kStages; ++s) {
      tuna_mbar_init(sm.full + 8 * s, full_count);
      tuna_mbar_init(sm.empty + 8 * s, 128 * kWgM);  // every consumer thread, once per use
    }
    tuna_fence_mbar_init();
  }
  TUNA_SYNC();
}

// Consumer warpgroup wg (1..WG_M): its rows of every tile of this block, then the epilogue.
TUNA_DEVICE void tuna_ws_consume(const TunaWsSmem& sm, const TunaConvGeom& p, const TunaTileGrid& tg,
                                 tuna_u16* TUNA_RESTRICT y) {
#if WG_M == 2
  tuna_setmaxnreg_inc<kConsumerRegs>();
#endif
  const int tid = TUNA_TID_X;
  const int cw = (tid >> 7) - 1;
  const int warp_in_wg = (tid >> 5) & 3;
  const int lane = tid & 31;
  const unsigned epi = sm.epi + ((cw * 4 + warp_in_wg) * kEpiWarpBytes);
  tuna_u16* epi_ptr = reinterpret_cast<tuna_u16*>(sm.raw + (epi - sm.raw_addr));
  const bool vec_out = (p.K & 7) == 0 && (tg.Kpg & 7) == 0;
  float acc[kMRep][kAcc];
  int it = 0;
  for (int tile = TUNA_BID_X; tile < tg.tiles; tile += TUNA_GDIM_X) {
    int g, m0, n0;
    tg.Decode(tile, g, m0, n0);
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
      for (int j = 0; j < kAcc; ++j) acc[mr][j] = 0.f;
    }
    for (int kt = 0; kt < tg.k_tiles; ++kt, ++it) {
      const int slot = it % kStages;
      tuna_mbar_wait(sm.full + 8 * slot, (it / kStages) & 1);
      const unsigned a_tile = sm.ring + slot * kStageBytes + cw * kWgRows * kRowBytes;
      const unsigned b_tile = sm.ring + slot * kStageBytes + kStageA;
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
      tuna_wgmma_fence();
#pragma unroll
      for (int k16 = 0; k16 < kTbK / 16; ++k16) {
        const unsigned long long db = tuna_desc_sw128(b_tile + k16 * 32);
#pragma unroll
        for (int mr = 0; mr < kMRep; ++mr) {
          tuna_wgmma(acc[mr], tuna_desc_sw128(a_tile + mr * 64 * kRowBytes + k16 * 32), db);
        }
      }
      tuna_wgmma_commit();
      tuna_wgmma_wait<1>();  // the previous k-tile's wgmmas have retired: release its slot
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
      if (kt > 0) tuna_mbar_arrive(sm.empty + 8 * ((it - 1) % kStages));
    }
    tuna_wgmma_wait<0>();
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
    tuna_mbar_arrive(sm.empty + 8 * ((it - 1) % kStages));

    // Epilogue: accumulator layout of wgmma m64nN: warp w of the warpgroup holds rows
    // 16w + lane/4 (+8); pair j covers columns 8j + 2*(lane%4) + {0, 1}. Each warp stages
    // 16 rows x 64 columns at a time and stores them as 16-byte chunks (8 lanes per row).
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
      const int row0 = m0 + cw * kWgRows + mr * 64 + warp_in_wg * 16;
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
        for (int q = 0; q < 4; ++q) {
          const int idx = lane + 32 * q;
          const int row = idx >> 3;
          const int ch = idx & 7;
          const int m = row0 + row;
          const int n = n0 + cb * kEpiCols + ch * 8;
          if (m < tg.M && n < tg.Kpg) {
            tuna_u16* dst = y + static_cast<long long>(m) * p.K + static_cast<long long>(g) * tg.Kpg + n;
            const tuna_u16* src = epi_ptr + row * kEpiPitch + ch * 8;
            if (vec_out && n + 8 <= tg.Kpg) {
              *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
            } else {
              for (int e = 0; e < 8 && n + e < tg.Kpg; ++e) dst[e] = src[e];
            }
          }
        }
        __syncwarp();
      }
    }
  }
}

// tmap_x: im2col map of x (dims C, W, H, N; bounding box corners {-pad, pad - dil*(filter-1)};
// element strides {1, stride_w, stride_h, 1}; 64 channels x TB_M pixels; 128-byte swizzle).
// tmap_w: tiled map of w (dims R*S*C/G, K; box 64 x TB_N; 128-byte swizzle).
TUNA_GLOBAL void __launch_bounds__(kThreads, 1)
    tuna_hopper_tma_fwd(const __grid_constant__ TunaTensorMap tmap_x, const __grid_constant__ TunaTensorMap tmap_w,
                        tuna_u16* TUNA_RESTRICT y, int n_img, int C, int H, int W, int K, int Ho, int Wo, int R,
                        int S, int pad_h, int pad_w, int stride_h, int stride_w, int dil_h, int dil_w, int groups) {
  TUNA_DYNAMIC_SHARED(unsigned char, smem_raw);
  const TunaWsSmem sm = tuna_ws_smem(smem_raw);
  const TunaConvGeom geom = {n_img, C, H, W, K, Ho, Wo, R, S, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups};
  const TunaTileGrid tg(geom);
  tuna_ws_init_barriers(sm, 1);
  if (TUNA_TID_X >= 128) {
    tuna_ws_consume(sm, geom, tg, y);
    return;
  }
#if WG_M == 2
  tuna_setmaxnreg_dec<kProducerRegs>();
#endif
  if (TUNA_TID_X != 0) return;
  tuna_prefetch_tmap(&tmap_x);
  tuna_prefetch_tmap(&tmap_w);
  const int cg = C / groups;
  const int c_chunks = cg / kTbK;
  const int hw = Ho * Wo;
  int it = 0;
  for (int tile = TUNA_BID_X; tile < tg.tiles; tile += TUNA_GDIM_X) {
    int g, m0, n0;
    tg.Decode(tile, g, m0, n0);
    const int img = m0 / hw;
    const int oh = (m0 - img * hw) / Wo;
    const int ow = m0 - img * hw - oh * Wo;
    const int h0 = oh * stride_h - pad_h;
    const int w0 = ow * stride_w - pad_w;
    int tap = 0, cc = 0, r = 0, s = 0;
    for (int kt = 0; kt < tg.k_tiles; ++kt, ++it) {
      const int slot = it % kStages;
      if (it >= kStages) tuna_mbar_wait(sm.empty + 8 * slot, ((it / kStages) - 1) & 1);
      const unsigned bar = sm.full + 8 * slot;
      const unsigned dst = sm.ring + slot * kStageBytes;
      tuna_mbar_expect_tx(bar, kStageBytes);
      tuna_tma_im2col_4d(dst, &tmap_x, g * cg + cc * kTbK, w0, h0, img, static_cast<unsigned short>(s * dil_w),
                         static_cast<unsigned short>(r * dil_h), bar);
      tuna_tma_tile_2d(dst + kStageA, &tmap_w, kt * kTbK, g * tg.Kpg + n0, bar);
      if (++cc == c_chunks) {  // next filter tap
        cc = 0;
        ++tap;
        if (++s == S) s = 0, ++r;
      }
    }
  }
}

// Backward data as a forward convolution (TunaHopperTmaBwd): the filter with its taps rotated
// by 180 degrees and K and C/G swapped, w'[g*C/G + c][R-1-r][S-1-s][k] = w[g*K/G + k][r][s][c],
// written `out_offset` elements into `out`. 32 x 32 tiles through shared memory so reads and
// writes are both coalesced. Launch: grid (ceil(C/G / 32), ceil(K/G / 32), G*R*S), block (32, 8).
TUNA_GLOBAL void __launch_bounds__(256)
    tuna_flip_filter(const tuna_u16* TUNA_RESTRICT w, tuna_u16* TUNA_RESTRICT out, long long out_offset, int K, int C,
                     int R, int S, int groups) {
  __shared__ tuna_u16 tile[32][33];
  const int kpg = K / groups, cg = C / groups, taps = R * S;
  const int g = TUNA_BID_Z / taps, tap = TUNA_BID_Z - g * taps;
  const int r = tap / S, s = tap - r * S;
  const int flipped = (R - 1 - r) * S + (S - 1 - s);
  const int c0 = TUNA_BID_X * 32, k0 = TUNA_BID_Y * 32;
  for (int j = TUNA_TID_Y; j < 32; j += 8) {
    const int k = k0 + j, c = c0 + TUNA_TID_X;
    if (k < kpg && c < cg) tile[j][TUNA_TID_X] = w[(static_cast<long long>(g * kpg + k) * taps + tap) * cg + c];
  }
  TUNA_SYNC();
  for (int j = TUNA_TID_Y; j < 32; j += 8) {
    const int c = c0 + j, k = k0 + TUNA_TID_X;
    if (k < kpg && c < cg) {
      out[out_offset + (static_cast<long long>(g * cg + c) * taps + flipped) * kpg + k] = tile[TUNA_TID_X][j];
    }
  }
}
