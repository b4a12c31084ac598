// Hopper (sm_90a) tensor-core backward-weights convolution, FP16/BF16, NHWC, grouped, for the
// solver TunaHopperWrw (tuner_core/solver/conv/gpu_hopper_wrw.cc).
//
//   GEMM per group g:  M = K/G (output channels)   N = R*S*C/G (filter columns, c fastest)
//                      reduction over the N*Ho*Wo output pixels
//   A = dy as (pixel, K/G) rows: M-major (the channels are contiguous)
//   B = im2col(x) as (pixel, R*S*C/G) rows, gathered on the fly: N-major
//   dw (K, R, S, C/G) = A^T B, FP32 accumulate.
//
// Both operands have the reduction (pixels) as their strided dimension, so wgmma reads them
// transposed (imm-trans-a = imm-trans-b = 1) from shared tiles in the MN-major 128-byte-swizzle
// layout: per 64-element slab of M (or N), 64 pixel rows of 128 bytes, 16-byte chunk j of row r
// at j ^ (r % 8); a slab is 8 KiB (the descriptor's leading byte offset: the stride between
// 64-element slabs along M or N) and an 8-row group 1 KiB (its stride byte offset). Each wgmma is
// m64nTB_Nk16: one slab of A against all TB_N/64 slabs of B.
//
// A block computes a TB_M x TB_N tile of dw with WG_M consumer warpgroups (warpgroup i owns rows
// [i*TB_M/WG_M, (i+1)*TB_M/WG_M)); every thread also loads 16-byte cp.async chunks (zero-filled
// for padding and tails) into a STAGES-deep ring, as in hopper_fwd.cu: wait for a tile, fence it
// into the async proxy, barrier, start the loads STAGES-2 tiles ahead, issue the wgmmas, commit,
// keep one group in flight.
//
// Split-K (gridDim.z = splits, a run-time argument): split z reduces pixel tiles
// [z*per, (z+1)*per) and writes its FP32 tile into workspace slice z; tuna_hopper_wrw_reduce sums
// the slices in slice order (deterministic: re-runs give identical bits) and rounds once. With one
// split (and no channel padding) the block rounds and writes dw itself.
//
// Thin inputs (C % 8 != 0, ungrouped: the 3-channel stem) run on a copy of x with its channels
// padded (tuna_pad_channels) to 4 (CHUNK 8: a 16-byte chunk of B is two 8-byte pieces, one tap
// each) or to a multiple of 8; the kernel then writes FP32 partials of the padded dw and the reduce
// drops the padding channels.
//
// Sizes are run-time arguments: one build serves every problem with the same options.
// Options: TB_M (64, 128), TB_N (64, 128, 256), WG_M (1, 2), STAGES (3..6), TUNA_DTYPE (1 fp16,
//          2 bf16), CHUNK (16: C/G % 8 == 0; 8: C == 4). Needs K/G % 8 == 0.
// Arguments: x, dy (dense NHWC), out: dw (K R S C/G) or the FP32 workspace; x's and out's element
// offsets in their buffers; the sizes as int32 (C: the channels x has, padded or not); the number
// of splits; whether to write FP32 partials (1) or dw (0).
#include "common/portability.h"
#include "conv/async_copy.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "hopper_wrw.cu needs CUDA sm_90a (wgmma, cp.async)"
#endif

#include "conv/wgmma_ops.h"
#include "conv/hopper_ops.h"
#include "conv/pad_channels.h"
#include "conv/wrw_reduce.h"

#ifndef CHUNK
#define CHUNK 16
#endif

constexpr int kTbM = TB_M;
constexpr int kTbN = TB_N;
constexpr int kTbK = 64;  // pixels per stage
constexpr int kWgM = WG_M;
constexpr int kStages = STAGES;
constexpr int kThreads = 128 * kWgM;
constexpr int kWgRows = kTbM / kWgM;
constexpr int kMRep = kWgRows / 64;  // A slabs per warpgroup
constexpr int kSlabBytes = kTbK * 128;
constexpr int kStageA = kTbM / 64 * kSlabBytes;
constexpr int kStageB = kTbN / 64 * kSlabBytes;
constexpr int kStageBytes = kStageA + kStageB;
constexpr int kAChunks = kTbM / 8;  // 16-byte chunks per pixel row of A
constexpr int kBChunks = kTbN / 8;
constexpr int kARowStep = kThreads / kAChunks;
constexpr int kBRowStep = kThreads / kBChunks;
constexpr int kAIters = kTbK / kARowStep;
constexpr int kBIters = kTbK / kBRowStep;
static_assert(kWgRows % 64 == 0, "each warpgroup owns whole m64 slabs");
static_assert(kTbN % 64 == 0 && kTbM % 64 == 0, "tiles are whole slabs");
static_assert(kThreads % kAChunks == 0 && kThreads % kBChunks == 0, "chunk split");
static_assert(kAIters >= 1 && kBIters >= 1 && kTbK % kARowStep == 0 && kTbK % kBRowStep == 0, "row split");
static_assert(kStages >= 3, "the ring keeps one tile in the tensor cores and one being issued");
constexpr int kAcc = kTbN / 2;  // FP32 accumulators per thread of one m64 wgmma
// Two resident blocks where the registers allow (at most 256 threads with <= 64 accumulators).
constexpr int kMinBlocks = kThreads <= 256 && kMRep * kAcc <= 64 ? 2 : 1;

// Byte offset of 16-byte chunk `chunk` (8 elements along M or N) of pixel row `row` in a tile.
TUNA_DEVICE unsigned tuna_mn_chunk_offset(int row, int chunk) {
  return static_cast<unsigned>((chunk >> 3) * kSlabBytes + row * 128 + (((chunk & 7) ^ (row & 7)) << 4));
}

TUNA_GLOBAL void __launch_bounds__(kThreads, kMinBlocks)
    tuna_hopper_wrw(const tuna_u16* TUNA_RESTRICT x, const tuna_u16* TUNA_RESTRICT dy, void* TUNA_RESTRICT out,
                    long long x_off, long long out_off, int n_img, int C, int H, int W, int K, int Ho, int Wo, int R,
                    int S, int pad_h, int pad_w, int stride_h, int stride_w, int dil_h, int dil_w, int groups,
                    int splits, int partials) {
  x += x_off;
  TUNA_DYNAMIC_SHARED(unsigned char, smem_raw);
  const unsigned raw_addr = tuna_smem_u32(smem_raw);
  const unsigned pad = (1024 - (raw_addr & 1023)) & 1023;
  const unsigned smem_addr = raw_addr + pad;

  const int tid = TUNA_TID_X;
  const int wg = tid >> 7;
  const int warp_in_wg = (tid >> 5) & 3;
  const int lane = tid & 31;
  const int Cg = C / groups;
  const int Kpg = K / groups;
  const int g = TUNA_BID_Y;
  const int pixels = n_img * Ho * Wo;
  const int Kg = R * S * Cg;
  const int n_tiles = (Kg + kTbN - 1) / kTbN;
  const int m0 = (TUNA_BID_X / n_tiles) * kTbM;
  const int n0 = (TUNA_BID_X % n_tiles) * kTbN;
  const int p_tiles_all = (pixels + kTbK - 1) / kTbK;
  const int per = (p_tiles_all + splits - 1) / splits;
  const int pt_begin = TUNA_BID_Z * per;
  const int p_tiles = max(0, min(p_tiles_all, pt_begin + per) - pt_begin);

  // A: this thread's chunk column of dy (fixed) and its rows.
  const int a_chunk = tid % kAChunks;
  const int a_row0 = tid / kAChunks;
  const int a_m = m0 + a_chunk * 8;
  const bool a_ok = a_m < Kpg;
  const tuna_u16* dy_g = dy + static_cast<long long>(g) * Kpg + (a_ok ? a_m : 0);
  // B: this thread's filter columns (tap and channel of each 16-byte piece, or of each of the two
  // 8-byte pieces with CHUNK 8, fixed) and its rows.
  constexpr int kPieces = CHUNK == 8 ? 2 : 1;
  constexpr int kPieceCols = 8 / kPieces;
  const int b_chunk = tid % kBChunks;
  const int b_row0 = tid / kBChunks;
  bool b_ok[kPieces];
  int b_c[kPieces], dh[kPieces], dw[kPieces];
#pragma unroll
  for (int q = 0; q < kPieces; ++q) {
    const int n = n0 + b_chunk * 8 + q * kPieceCols;
    b_ok[q] = n < Kg;
    const int tap = b_ok[q] ? n / Cg : 0;
    b_c[q] = (b_ok[q] ? n - tap * Cg : 0) + g * Cg;
    const int tap_r = tap / S;
    dh[q] = tap_r * dil_h - pad_h;
    dw[q] = (tap - tap_r * S) * dil_w - pad_w;
  }
  const int hw = Ho * Wo;

  auto load_tile = [&](int slot, int pt_local) {
    const unsigned a_base = smem_addr + slot * kStageBytes;
    const unsigned b_base = a_base + kStageA;
    const int p0 = (pt_begin + pt_local) * kTbK;
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int row = a_row0 + i * kARowStep;
      const int pix = p0 + row;
      const bool ok = a_ok && pix < pixels;
      const tuna_u16* src = ok ? dy_g + static_cast<long long>(pix) * K : dy;
      tuna_cp_async16(a_base + tuna_mn_chunk_offset(row, a_chunk), src, ok ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int row = b_row0 + i * kBRowStep;
      const int pix = p0 + row;
      const int img = pix / hw;
      const int rem = pix - img * hw;
      const int oh = rem / Wo;
      const int ow = rem - oh * Wo;
      const unsigned dst = b_base + tuna_mn_chunk_offset(row, b_chunk);
#pragma unroll
      for (int q = 0; q < kPieces; ++q) {
        const int h = oh * stride_h + dh[q];
        const int w = ow * stride_w + dw[q];
        const bool ok = b_ok[q] && pix < pixels && static_cast<unsigned>(h) < static_cast<unsigned>(H) &&
                        static_cast<unsigned>(w) < static_cast<unsigned>(W);
        const tuna_u16* src = ok ? x + ((static_cast<long long>(img) * H + h) * W + w) * C + b_c[q] : x;
#if CHUNK == 8
        tuna_cp_async8(dst + 8 * q, src, ok ? 8 : 0);
#else
        tuna_cp_async16(dst, src, ok ? 16 : 0);
#endif
      }
    }
  };

  float acc[kMRep][kAcc];
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
    for (int j = 0; j < kAcc; ++j) acc[mr][j] = 0.f;
  }
  auto fence_all = [&]() {
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) tuna_fence_acc_all(acc[mr]);
  };

#pragma unroll
  for (int st = 0; st < kStages - 2; ++st) {
    if (st < p_tiles) load_tile(st, st);
    tuna_cp_commit();
  }

  for (int pt = 0; pt < p_tiles; ++pt) {
    tuna_cp_wait<kStages - 3>();  // this thread's chunks of tile pt have landed
    tuna_fence_proxy_async();
    TUNA_SYNC();  // everyone's chunks landed; every wgmma of tile pt-2 has completed

    const int slot = pt % kStages;
    const unsigned a_tile = smem_addr + slot * kStageBytes + wg * kMRep * kSlabBytes;
    const unsigned b_tile = smem_addr + slot * kStageBytes + kStageA;
    fence_all();
    tuna_wgmma_fence();
#pragma unroll
    for (int k16 = 0; k16 < kTbK / 16; ++k16) {
      const unsigned long long db = tuna_desc_mn_sw128(b_tile + k16 * 2048, kSlabBytes);
#pragma unroll
      for (int mr = 0; mr < kMRep; ++mr) {
        TUNA_WGMMA_OF(TB_N)<1, 1>(acc[mr], tuna_desc_mn_sw128(a_tile + mr * kSlabBytes + k16 * 2048, kSlabBytes), db);
      }
    }
    tuna_wgmma_commit();
    const int next = pt + kStages - 2;
    if (next < p_tiles) load_tile(next % kStages, next);
    tuna_cp_commit();
    tuna_wgmma_wait<1>();
    fence_all();
  }
  tuna_wgmma_wait<0>();
  fence_all();
  tuna_cp_wait<0>();

  // Accumulator layout of wgmma m64nN: warp w of the warpgroup holds rows 16w + lane/4 (+8);
  // pair j covers columns 8j + 2*(lane%4) + {0, 1}. Kg is even: pairs never straddle it.
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
    const int r0 = m0 + wg * kWgRows + mr * 64 + warp_in_wg * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < kTbN / 8; ++j) {
      const int col = n0 + 8 * j + 2 * (lane & 3);
      if (col >= Kg) continue;
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = r0 + 8 * half;
        if (row >= Kpg) continue;
        const long long at = (static_cast<long long>(g) * Kpg + row) * Kg + col;
        const float v0 = acc[mr][4 * j + 2 * half], v1 = acc[mr][4 * j + 2 * half + 1];
        if (!partials) {
          *reinterpret_cast<unsigned*>(static_cast<tuna_u16*>(out) + out_off + at) = tuna_pack2(v0, v1);
        } else {
          float* ws = static_cast<float*>(out) + out_off + static_cast<long long>(TUNA_BID_Z) * K * Kg;
          *reinterpret_cast<float2*>(ws + at) = make_float2(v0, v1);
        }
      }
    }
  }
}
