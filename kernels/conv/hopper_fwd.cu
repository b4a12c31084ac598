// Hopper (sm_90a) tensor-core implicit-GEMM forward convolution, FP16/BF16, NHWC, grouped, for
// the solver TunaHopperFwd (tuner_core/solver/conv/gpu_hopper_fwd.cc).
//
//   GEMM per group g:  M = N*Ho*Wo (pixels)   N = K/G (output channels)   K = R*S*C/G (c fastest)
//   A = im2col(x) gathered on the fly (rows of TB_K = 64 halves, 128 bytes)
//   B = w as (K, R, S, C/G) rows, the same K-major shape as A
//   y (FP32 accumulate, rounded once).
//
// A block computes a TB_M x TB_N tile of y with WG_M consumer warpgroups (128 threads each);
// warpgroup i owns rows [i*TB_M/WG_M, (i+1)*TB_M/WG_M) as TB_M/WG_M/64 stacked
// wgmma.m64nTB_Nk16 accumulators. Every thread also loads: 16-byte cp.async chunks (zero-filled
// for padding and tails) into a STAGES-deep ring of shared tiles laid out in the 128-byte
// swizzle that wgmma's matrix descriptors read (chunk j of row r at j ^ (r % 8)). Per k-tile:
// wait for its chunks, fence them into the async proxy, barrier, start the loads STAGES-2 tiles
// ahead into the slot the previous-but-one tile's wgmmas have released, issue 4 x k16 wgmmas,
// commit, and wait until at most the group just issued is in flight. The epilogue stages the
// accumulators through shared memory and writes y in coalesced 16-byte stores.
//
// Split-K (SPLIT_K > 1): the SPLIT_K blocks of one output tile form a thread-block cluster
// (gridDim.z = SPLIT_K); block z reduces its share of the k-tiles, stages its FP32 tile in its
// own shared memory, and after a cluster barrier block z sums rows [z, z+1) * TB_M / SPLIT_K of
// all SPLIT_K tiles through distributed shared memory in the fixed order 0..SPLIT_K-1
// (deterministic: re-runs give identical bits). No workspace, no second launch.
//
// Sizes are run-time arguments: one build serves every problem with the same options.
// Options: TB_M (64, 128, 256), TB_N (64, 128, 256), WG_M (1, 2), STAGES (3..8),
//          TUNA_DTYPE (1 fp16, 2 bf16),
//          CHUNK 16: C/G % 8 == 0, every 16-byte chunk is one aligned cp.async within one tap;
//                 8: C/G == 4, two 8-byte cp.async per chunk, one tap each. Thinner inputs (the
//                 3-channel stem) are first copied with their channels padded to 4 by
//                 tuna_pad_channels into the workspace; the solver then passes that copy.
// Arguments: x, w, y (dense NHWC / K R S C/G / NHWC), the element offset of w within its
// buffer, then the sizes as int32.
#include "common/portability.h"
#include "conv/async_copy.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "hopper_fwd.cu needs CUDA sm_90a (wgmma, cp.async)"
#endif

#include "conv/wgmma_ops.h"
#include "conv/hopper_ops.h"
#include "conv/im2col_tile.h"
#include "conv/pad_channels.h"

#ifndef CHUNK
#define CHUNK 16
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif

constexpr int kTbM = TB_M;
constexpr int kTbN = TB_N;
constexpr int kTbK = 64;  // halves per row: one 128-byte swizzle row
constexpr int kWgM = WG_M;
constexpr int kStages = STAGES;
constexpr int kThreads = 128 * kWgM;
constexpr int kWgRows = kTbM / kWgM;
constexpr int kMRep = kWgRows / 64;
constexpr int kAcc = kTbN / 2;  // FP32 accumulators per thread of one m64 wgmma
constexpr int kRowBytes = kTbK * 2;
constexpr int kStageA = kTbM * kRowBytes;
constexpr int kStageB = kTbN * kRowBytes;
constexpr int kStageBytes = kStageA + kStageB;
constexpr int kRowStep = kThreads / 8;  // rows one pass of the block's chunk loads covers
constexpr int kAIters = kTbM / kRowStep;
constexpr int kBIters = kTbN / kRowStep;
constexpr int kOutPitch = kTbN + 8;  // halves per staged output row (conflict-free writes)
constexpr int kSplitK = SPLIT_K;
constexpr int kPartPitch = kTbN + 8;  // floats per staged FP32 row (split-K)
static_assert(kTbM % (kSplitK * 8) == 0, "each block of a cluster reduces whole row groups");
// Two resident blocks where the accumulators leave room (<= 64 per thread: 128 registers),
// so one block's barriers, prologue and epilogue overlap the other's tensor-core work.
constexpr int kMinBlocks = kMRep * kAcc <= 64 ? 2 : 1;
static_assert(kWgRows % 64 == 0, "each warpgroup owns whole m64 slabs");
static_assert(kTbN == 64 || kTbN == 128 || kTbN == 256, "wgmma N");
static_assert(kTbM % kRowStep == 0 && kTbN % kRowStep == 0, "chunk split");
static_assert(kStages >= 3, "the ring keeps one tile in the tensor cores and one being issued");

TUNA_DEVICE float4 tuna_ld_cluster_v4(unsigned addr) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];\n"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(addr));
  return v;
}

#if SPLIT_K > 1
#define TUNA_CLUSTER __cluster_dims__(1, 1, SPLIT_K)
#else
#define TUNA_CLUSTER
#endif

TUNA_GLOBAL void __launch_bounds__(kThreads, kMinBlocks) TUNA_CLUSTER
    tuna_hopper_fwd(const tuna_u16* TUNA_RESTRICT x, const tuna_u16* TUNA_RESTRICT w, tuna_u16* TUNA_RESTRICT y,
                    long long w_offset, int n_img, int C, int H, int W, int K, int Ho, int Wo, int R, int S, int pad_h, int pad_w,
                    int stride_h, int stride_w, int dil_h, int dil_w, int groups) {
  TUNA_DYNAMIC_SHARED(unsigned char, smem_raw);
  // The 128-byte swizzle repeats every 1024 bytes: align the ring to it.
  const unsigned raw_addr = tuna_smem_u32(smem_raw);
  const unsigned pad = (1024 - (raw_addr & 1023)) & 1023;
  unsigned char* smem = smem_raw + pad;
  const unsigned smem_addr = raw_addr + pad;

  const int tid = TUNA_TID_X;
  const int wg = tid >> 7;
  const int warp_in_wg = (tid >> 5) & 3;
  const int lane = tid & 31;
  const int Cg = C / groups;
  const int Kpg = K / groups;
  const int g = TUNA_BID_Y;
  const int M = n_img * Ho * Wo;
  const int Kg = R * S * Cg;
  const int n_tiles = (Kpg + kTbN - 1) / kTbN;
  const int m0 = (TUNA_BID_X / n_tiles) * kTbM;  // neighbouring blocks share an A tile
  const int n0 = (TUNA_BID_X % n_tiles) * kTbN;
  const int k_tiles_all = (Kg + kTbK - 1) / kTbK;
  const int kt_per = (k_tiles_all + kSplitK - 1) / kSplitK;
  const int kt_begin = TUNA_BID_Z * kt_per;
  const int k_tiles = max(0, min(k_tiles_all, kt_begin + kt_per) - kt_begin);
  const int kc = tid & 7;          // this thread's 16-byte chunk column (fixed)
  const int row_base = tid >> 3;   // first row it loads; then every kRowStep
  const unsigned swz = static_cast<unsigned>((kc ^ (row_base & 7)) << 4);

  const TunaConvGeom geom = {n_img, C, H, W, K, Ho, Wo, R, S, pad_h, pad_w, stride_h, stride_w, dil_h, dil_w, groups};
  TunaARows<kAIters> a_rows;
  tuna_a_rows_init<kAIters, kRowStep>(a_rows, geom, m0 + row_base, g);
  const tuna_u16* w_g = w + w_offset + static_cast<long long>(g) * Kpg * Kg;
  auto load_tile = [&](int slot, int kt_local) {
    const unsigned a_dst = smem_addr + slot * kStageBytes + row_base * kRowBytes + swz;
    tuna_load_tile<kAIters, kBIters, kRowStep>(a_dst, a_dst + kStageA, a_rows, x, w_g, geom, kt_begin + kt_local, kc,
                                               n0 + row_base);
  };

  float acc[kMRep][kAcc];
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
    for (int j = 0; j < kAcc; ++j) acc[mr][j] = 0.f;
  }

#pragma unroll
  for (int st = 0; st < kStages - 2; ++st) {
    if (st < k_tiles) load_tile(st, st);
    tuna_cp_commit();
  }

  for (int kt = 0; kt < k_tiles; ++kt) {
    tuna_cp_wait<kStages - 3>();  // this thread's chunks of tile kt have landed
    tuna_fence_proxy_async();
    TUNA_SYNC();  // everyone's chunks of kt landed; every wgmma of tile kt-2 has completed

    const int slot = kt % kStages;
    const unsigned a_tile = smem_addr + slot * kStageBytes + wg * kWgRows * kRowBytes;
    const unsigned b_tile = smem_addr + slot * kStageBytes + kStageA;
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
      for (int j = 0; j < kAcc; ++j) tuna_fence_acc(acc[mr][j]);
    }
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
    // While the tensor cores run tile kt, fill the slot that tile kt-2 released.
    const int next = kt + kStages - 2;
    if (next < k_tiles) load_tile(next % kStages, next);
    tuna_cp_commit();
    tuna_wgmma_wait<1>();
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
      for (int j = 0; j < kAcc; ++j) tuna_fence_acc(acc[mr][j]);
    }
  }
  tuna_wgmma_wait<0>();
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
#pragma unroll
    for (int j = 0; j < kAcc; ++j) tuna_fence_acc(acc[mr][j]);
  }
  tuna_cp_wait<0>();
  TUNA_SYNC();  // the ring is free: stage the output tile in it
#if SPLIT_K > 1
  {
    // This block's FP32 tile, then rows [z, z+1) * TB_M / SPLIT_K summed over the cluster.
    float* part = reinterpret_cast<float*>(smem);
#pragma unroll
    for (int mr = 0; mr < kMRep; ++mr) {
      const int r0 = wg * kWgRows + mr * 64 + warp_in_wg * 16 + (lane >> 2);
#pragma unroll
      for (int j = 0; j < kTbN / 8; ++j) {
        const int col = 8 * j + 2 * (lane & 3);
        *reinterpret_cast<float2*>(part + r0 * kPartPitch + col) = make_float2(acc[mr][4 * j], acc[mr][4 * j + 1]);
        *reinterpret_cast<float2*>(part + (r0 + 8) * kPartPitch + col) =
            make_float2(acc[mr][4 * j + 2], acc[mr][4 * j + 3]);
      }
    }
    tuna_cluster_sync();  // every block of the cluster has staged its tile
    constexpr int kRows = kTbM / kSplitK;
    constexpr int kQuads = kTbN / 4;
    const int row0 = TUNA_BID_Z * kRows;
    const bool vec = (K & 3) == 0 && (Kpg & 3) == 0;
    for (int idx = tid; idx < kRows * kQuads; idx += kThreads) {
      const int row = row0 + idx / kQuads;
      const int q = idx - (idx / kQuads) * kQuads;
      const unsigned local = smem_addr + static_cast<unsigned>((row * kPartPitch + 4 * q) * 4);
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int z = 0; z < kSplitK; ++z) {
        const float4 v = tuna_ld_cluster_v4(tuna_map_rank(local, z));
        sum.x += v.x, sum.y += v.y, sum.z += v.z, sum.w += v.w;
      }
      const int m = m0 + row;
      const int n = n0 + 4 * q;
      if (m >= M || n >= Kpg) continue;
      tuna_u16* dst = y + static_cast<long long>(m) * K + static_cast<long long>(g) * Kpg + n;
      const unsigned lo = tuna_pack2(sum.x, sum.y), hi = tuna_pack2(sum.z, sum.w);
      if (vec && n + 4 <= Kpg) {
        *reinterpret_cast<uint2*>(dst) = make_uint2(lo, hi);
      } else {
        const unsigned short e[4] = {static_cast<unsigned short>(lo & 0xffff), static_cast<unsigned short>(lo >> 16),
                                     static_cast<unsigned short>(hi & 0xffff), static_cast<unsigned short>(hi >> 16)};
        for (int i = 0; i < 4 && n + i < Kpg; ++i) dst[i] = e[i];
      }
    }
    tuna_cluster_sync();  // no block leaves while others still read its shared memory
    return;
  }
#endif

  // Accumulator layout of wgmma m64nN: warp w of the warpgroup holds rows 16w + lane/4 (+8);
  // pair j covers columns 8j + 2*(lane%4) + {0, 1}.
  tuna_u16* out = reinterpret_cast<tuna_u16*>(smem);
#pragma unroll
  for (int mr = 0; mr < kMRep; ++mr) {
    const int r0 = wg * kWgRows + mr * 64 + warp_in_wg * 16 + (lane >> 2);
#pragma unroll
    for (int j = 0; j < kTbN / 8; ++j) {
      const int col = 8 * j + 2 * (lane & 3);
      *reinterpret_cast<unsigned*>(out + r0 * kOutPitch + col) = tuna_pack2(acc[mr][4 * j], acc[mr][4 * j + 1]);
      *reinterpret_cast<unsigned*>(out + (r0 + 8) * kOutPitch + col) =
          tuna_pack2(acc[mr][4 * j + 2], acc[mr][4 * j + 3]);
    }
  }
  TUNA_SYNC();
  constexpr int kChunksPerRow = kTbN / 8;
  const bool vec_out = (K & 7) == 0 && (Kpg & 7) == 0;
  for (int idx = tid; idx < kTbM * kChunksPerRow; idx += kThreads) {
    const int row = idx / kChunksPerRow;
    const int ch = idx - row * kChunksPerRow;
    const int m = m0 + row;
    const int n = n0 + ch * 8;
    if (m >= M || n >= Kpg) continue;
    tuna_u16* dst = y + static_cast<long long>(m) * K + static_cast<long long>(g) * Kpg + n;
    const tuna_u16* src = out + row * kOutPitch + ch * 8;
    if (vec_out && n + 8 <= Kpg) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int e = 0; e < 8 && n + e < Kpg; ++e) dst[e] = src[e];
    }
  }
}
