// Tensor-core implicit-GEMM forward convolution, FP16/BF16, NHWC (CUDA sm_80+ only), for the
// solver TunaFastTcFwd (tuner_core/solver/conv/gpu_fast_tc.cc).
//
//   GEMM  M = N*Ho*Wo (rows of y, each K contiguous)   N = K   Kdim = R*S*C (c fastest)
//   A = im2col(x) gathered on the fly, B = w (K, R, S, C) rows, C -> y (fp32 accumulate).
//
// A block computes a TB_M x TB_N tile of y with (TB_M/WARP_M) x (TB_N/WARP_N) warps, each owning
// a WARP_M x WARP_N tile as (WARP_M/16) x (WARP_N/8) mma.sync.m16n8k16 accumulators
// (in the code: kBM = TB_M, kWM = WARP_M, ...). K advances in steps of BK = 32
// through a STAGES-deep ring of shared-memory tiles filled by cp.async (16-byte chunks with
// zero-fill for padding and tails); fragments are read with ldmatrix.x4. Shared rows are
// padded to BK + 8 halves (80 bytes), which puts the 8 rows of every ldmatrix 8x8 matrix
// (and every 8 consecutive cp.async chunks) on distinct bank groups: no conflicts.
//
// Options: the solver's axes TB_M, TB_N, WARP_M, WARP_N, STAGES (named as its perf config);
//   TUNA_DTYPE (1 fp16, 2 bf16),
//   TUNA_VEC8 1: C % 8 == 0, so an 8-element chunk of Kdim is one contiguous 16-byte load of
//             one filter tap (cp.async); 0: chunks are gathered element by element (C = 3).
// Arguments: x, w, y (dense NHWC / KRSC / NHWC), then the sizes as int32.
#include "common/portability.h"
#include "conv/async_copy.h"
#include "conv/mma_sync_ops.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "fast_tc_fwd.cu needs CUDA (mma.sync, ldmatrix, cp.async)"
#endif

constexpr int kBM = TB_M;
constexpr int kBN = TB_N;
constexpr int kBK = 32;
constexpr int kWM = WARP_M;
constexpr int kWN = WARP_N;
constexpr int kStages = STAGES;
constexpr int kWarpsM = kBM / kWM;
constexpr int kWarpsN = kBN / kWN;
constexpr int kThreads = kWarpsM * kWarpsN * 32;
constexpr int kLds = kBK + 8;  // halves per shared row
constexpr int kMT = kWM / 16;
constexpr int kNT = kWN / 8;
constexpr int kKChunks = kBK / 8;  // 16-byte chunks per row
constexpr int kAIters = kBM * kKChunks / kThreads;
constexpr int kBIters = kBN * kKChunks / kThreads;
constexpr int kStageHalves = (kBM + kBN) * kLds;
static_assert(kBM % kWM == 0 && kBN % kWN == 0, "block tile not divisible by warp tile");
static_assert(kWM % 16 == 0 && kWN % 16 == 0, "warp tile must be a multiple of 16");
static_assert(kBM * kKChunks % kThreads == 0 && kBN * kKChunks % kThreads == 0, "chunk split");
static_assert(kThreads % kKChunks == 0, "threads must cover whole rows");
static_assert(kStages >= 2, "at least two stages");

TUNA_DEVICE void tuna_ldmatrix_x4(unsigned (&r)[4], unsigned saddr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(saddr));
}

TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(kThreads)
    tuna_fast_tc_fwd(const tuna_u16* TUNA_RESTRICT x, const tuna_u16* TUNA_RESTRICT w, tuna_u16* TUNA_RESTRICT y,
                     int n_img, int C, int H, int W, int K, int Ho, int Wo, int R, int S, int pad_h, int pad_w,
                     int stride_h, int stride_w, int dil_h, int dil_w) {
  TUNA_DYNAMIC_SHARED(tuna_u16, smem);
  const int tid = TUNA_TID_X;
  const int lane = tid & 31;
  const int warp = tid >> 5;
  const int warp_m = warp % kWarpsM;
  const int warp_n = warp / kWarpsM;
  const int M = n_img * Ho * Wo;
  const int Kg = R * S * C;
  const int m0 = TUNA_BID_X * kBM;
  const int n0 = TUNA_BID_Y * kBN;
  const int kc = tid % kKChunks;      // this thread's chunk column (fixed)
  const int row_base = tid / kKChunks;  // first row it loads; then every kThreads / kKChunks
  constexpr int kRowStep = kThreads / kKChunks;

  // Per A row: image base offset (-1 for rows past M) and the top-left input coordinate.
  long long a_base[kAIters];
  int a_h[kAIters], a_w[kAIters];
#pragma unroll
  for (int i = 0; i < kAIters; ++i) {
    const int m = m0 + row_base + i * kRowStep;
    if (m < M) {
      const int hw = Ho * Wo;
      const int img = m / hw;
      const int rem = m - img * hw;
      const int ho = rem / Wo;
      const int wo = rem - ho * Wo;
      a_base[i] = (long long)img * H * W * C;
      a_h[i] = ho * stride_h - pad_h;
      a_w[i] = wo * stride_w - pad_w;
    } else {
      a_base[i] = -1;
      a_h[i] = 0;
      a_w[i] = 0;
    }
  }
  const unsigned smem_base = tuna_smem_u32(smem);
  const int k_tiles = (Kg + kBK - 1) / kBK;

  auto load_tile = [&](int stage, int kt) {
    const unsigned a_s = smem_base + (unsigned)(stage * kStageHalves) * 2u;
    const unsigned b_s = a_s + (unsigned)(kBM * kLds) * 2u;
    const int k = kt * kBK + kc * 8;
#if TUNA_VEC8
    const bool kvalid = k < Kg;
    const int rs = k / C;
    const int c = k - rs * C;
    const int r = rs / S;
    const int s = rs - r * S;
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int row = row_base + i * kRowStep;
      const int hi = a_h[i] + r * dil_h;
      const int wi = a_w[i] + s * dil_w;
      const bool v = kvalid && a_base[i] >= 0 && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
      const tuna_u16* src = v ? x + a_base[i] + ((long long)hi * W + wi) * C + c : x;
      tuna_cp_async16(a_s + (unsigned)(row * kLds + kc * 8) * 2u, src, v ? 16 : 0);
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int row = row_base + i * kRowStep;
      const bool v = kvalid && n0 + row < K;
      const tuna_u16* src = v ? w + (long long)(n0 + row) * Kg + k : w;
      tuna_cp_async16(b_s + (unsigned)(row * kLds + kc * 8) * 2u, src, v ? 16 : 0);
    }
#else
    // Gather path: each of the 8 elements of a chunk may belong to another tap.
    int e_c[8], e_r[8], e_s[8];
    bool e_ok[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int kk = k + e;
      e_ok[e] = kk < Kg;
      const int rs = kk / C;
      e_c[e] = kk - rs * C;
      e_r[e] = rs / S;
      e_s[e] = rs - e_r[e] * S;
    }
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int row = row_base + i * kRowStep;
      unsigned packed[4];
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        unsigned lohi[2];
#pragma unroll
        for (int q = 0; q < 2; ++q) {
          const int hi = a_h[i] + e_r[e + q] * dil_h;
          const int wi = a_w[i] + e_s[e + q] * dil_w;
          const bool v = e_ok[e + q] && a_base[i] >= 0 && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
          lohi[q] = v ? (unsigned)x[a_base[i] + ((long long)hi * W + wi) * C + e_c[e + q]] : 0u;
        }
        packed[e / 2] = lohi[0] | (lohi[1] << 16);
      }
      asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(a_s + (unsigned)(row * kLds + kc * 8) * 2u),
                   "r"(packed[0]), "r"(packed[1]), "r"(packed[2]), "r"(packed[3]));
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int row = row_base + i * kRowStep;
      const bool vrow = n0 + row < K;
      unsigned packed[4];
#pragma unroll
      for (int e = 0; e < 8; e += 2) {
        const unsigned lo = (vrow && e_ok[e]) ? (unsigned)w[(long long)(n0 + row) * Kg + k + e] : 0u;
        const unsigned hi = (vrow && e_ok[e + 1]) ? (unsigned)w[(long long)(n0 + row) * Kg + k + e + 1] : 0u;
        packed[e / 2] = lo | (hi << 16);
      }
      asm volatile("st.shared.v4.u32 [%0], {%1,%2,%3,%4};\n" ::"r"(b_s + (unsigned)(row * kLds + kc * 8) * 2u),
                   "r"(packed[0]), "r"(packed[1]), "r"(packed[2]), "r"(packed[3]));
    }
#endif
  };

  float acc[kMT][kNT][4];
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[i][j][q] = 0.f;

#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) load_tile(s, s);
    tuna_cp_commit();
  }

  // ldmatrix lane addressing (see the fragment layouts of mma.m16n8k16).
  const int a_row = warp_m * kWM + (lane & 15);
  const int a_col = (lane >> 4) * 8;
  const int b_row = warp_n * kWN + (lane & 7) + ((lane >> 4) << 3);
  const int b_col = ((lane >> 3) & 1) * 8;

  for (int kt = 0; kt < k_tiles; ++kt) {
    tuna_cp_wait<kStages - 2>();
    TUNA_SYNC();
    // Refill the stage every thread finished reading in the previous iteration.
    const int next = kt + kStages - 1;
    if (next < k_tiles) load_tile(next % kStages, next);
    tuna_cp_commit();

    const int stage = kt % kStages;
    const unsigned a_s = smem_base + (unsigned)(stage * kStageHalves) * 2u;
    const unsigned b_s = a_s + (unsigned)(kBM * kLds) * 2u;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      unsigned af[kMT][4];
      unsigned bf[kNT][2];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        tuna_ldmatrix_x4(af[mt], a_s + (unsigned)((a_row + mt * 16) * kLds + kk + a_col) * 2u);
      }
#pragma unroll
      for (int np = 0; np < kNT / 2; ++np) {
        unsigned t[4];
        tuna_ldmatrix_x4(t, b_s + (unsigned)((b_row + np * 16) * kLds + kk + b_col) * 2u);
        bf[2 * np][0] = t[0];
        bf[2 * np][1] = t[1];
        bf[2 * np + 1][0] = t[2];
        bf[2 * np + 1][1] = t[3];
      }
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) tuna_mma(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
    }
  }
  tuna_cp_wait<0>();

  // Epilogue: each thread holds pairs of adjacent output channels of two rows per mma tile.
  const bool k_even = (K & 1) == 0;
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int m = m0 + warp_m * kWM + mt * 16 + (lane >> 2) + hf * 8;
      if (m >= M) continue;
      tuna_u16* yrow = y + (long long)m * K;
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        const int col = n0 + warp_n * kWN + nt * 8 + (lane & 3) * 2;
        const unsigned pk = tuna_pack2(acc[mt][nt][hf * 2], acc[mt][nt][hf * 2 + 1]);
        if (k_even && col + 1 < K) {
          *reinterpret_cast<unsigned*>(yrow + col) = pk;
        } else {
          if (col < K) yrow[col] = (tuna_u16)(pk & 0xffffu);
          if (col + 1 < K) yrow[col + 1] = (tuna_u16)(pk >> 16);
        }
      }
    }
  }
}
