// MFMA implicit-GEMM forward convolution, FP16/BF16, NHWC, for AMD CDNA gfx908 / gfx90a (HIP
// only), for the solver TunaMfmaFwd (tuner_core/solver/conv/gpu_mfma.cc).
//
// COMPILE-ONLY, UNVERIFIED ON HARDWARE: no AMD GPU has run this kernel, so no result of it has
// been checked. What is checked (tests/solver/gpu_mfma_compile_test.cc): hiprtc (ROCm 5.2) builds
// it for gfx908 and gfx90a (every valid config of a ResNet-50 layer, no scratch), and a CPU model
// transcribing its loops, with the MFMA replaced by the layout below, matches a direct
// convolution. The gather and the epilogue mirror fast_tc_fwd.cu (verified on NVIDIA GPUs); the
// lane layout is taken from AMD's documentation, not from a run.
//
//   GEMM (per group g)  M = N*Ho*Wo (rows of y)   N = K/G   Kdim = R*S*C/G (c fastest)
//   A = im2col(x) gathered on the fly, B = w (K, R, S, C/G) rows, D -> y (fp32 accumulate,
//   rounded to fp16/bf16 on store). grid = (ceil(M/TB_M), ceil((K/G)/TB_N), G).
//
// A block computes a TB_M x TB_N tile of y with (TB_M/WARP_M) x (TB_N/WARP_N) wavefronts of 64
// lanes, each owning a WARP_M x WARP_N tile as (WARP_M/32) x (WARP_N/32) 32x32 MFMA
// accumulators (16 FP32 per lane each). K advances in steps of TB_K through STAGES (1 or 2)
// shared-memory (LDS) tiles; every thread loads 16-byte chunks (8 elements of Kdim) of a fixed
// chunk column of A and B rows into registers (the next tile's global loads are issued before
// the current tile's MFMAs), then writes them to LDS. Rows are TB_K + 4 elements (the 8-byte pad is
// meant to spread the 32 rows one fragment read touches over the banks: not measured); LDS is
// written and read in aligned 8-byte pieces.
//
// MFMA operand and result layout (AMD Matrix Instruction Calculator, github.com/ROCm/
// amd_matrix_instruction_calculator, `matrix_calculator.py -a CDNA2 -i v_mfma_f32_32x32x8f16` with
// its register-layout output; the CDNA1/CDNA2 ISA guides' MFMA operand tables; the same D layout is
// in AMD's Matrix Core blog examples: C[lane%32 + 128*(lane/32) + 256*q + 32*r] = d[4*q + r] for a
// row-major 32x32 C). One block, cbsz = abid = blgp = 0; lane l in 0..63:
//   A (32 x k, M x K):   lane l holds A[i = l % 32][k = kE*(l / 32) + e], e = 0..kE-1
//   B (k x 32, K x N):   lane l holds B[k = kE*(l / 32) + e][j = l % 32]
//   D (32 x 32, FP32):   lane l holds 16 values, 4 groups of 4 rows:
//                        d[4*q + r] = D[i = 8*q + 4*(l / 32) + r][j = l % 32], q, r = 0..3
// with kE = 4 elements per lane for v_mfma_f32_32x32x8f16 (FP16) and v_mfma_f32_32x32x8bf16_1k
// (BF16 on gfx90a), and kE = 2 for v_mfma_f32_32x32x4bf16 (BF16 on gfx908, which lacks the _1k
// forms; k = 4 per instruction, so a step of 8 is two instructions). D's layout is the same for
// all three. Here i is the GEMM M (an output pixel) and j the GEMM N (an output channel), so both
// A and B fragments are kE consecutive elements of one LDS row (a pixel's or a filter's Kdim).
//
// Options: the solver's axes TB_M, TB_N, TB_K, WARP_M, WARP_N, STAGES (named as its perf config);
//   TUNA_DTYPE (1 fp16, 2 bf16),
//   TUNA_VEC8 1: C/G % 8 == 0, so an 8-element chunk of Kdim is one contiguous, 16-byte aligned
//             load of one filter tap; 0: chunks are gathered element by element (C = 3).
// Arguments: x, w, y (dense NHWC / KRSC / NHWC), then the sizes as int32 (C and K are totals).
#include "common/portability.h"

#if !defined(TUNA_BACKEND_HIP)
#error "mfma_fwd.cu needs HIP (AMD MFMA builtins)"
#endif

// The device pass must be an MFMA target; the host pass of hiprtc (no __gfx*__ macro) only
// needs the declarations.
#if defined(__AMDGCN__) && !defined(__gfx908__) && !defined(__gfx90a__)
#error "mfma_fwd.cu targets gfx908 and gfx90a (MFMA, wave64)"
#endif

#if TUNA_DTYPE != 1 && TUNA_DTYPE != 2
#error "mfma_fwd.cu: TUNA_DTYPE must be 1 (fp16) or 2 (bf16)"
#endif

typedef float tuna_f32x16 __attribute__((ext_vector_type(16)));
#if TUNA_DTYPE == 1
typedef _Float16 tuna_mfma_frag __attribute__((ext_vector_type(4)));
constexpr int kMfmaK = 8;  // v_mfma_f32_32x32x8f16
#elif defined(__gfx908__)
typedef short tuna_mfma_frag __attribute__((ext_vector_type(2)));
constexpr int kMfmaK = 4;  // v_mfma_f32_32x32x4bf16 (gfx908 has no _1k form)
#else
typedef short tuna_mfma_frag __attribute__((ext_vector_type(4)));
constexpr int kMfmaK = 8;  // v_mfma_f32_32x32x8bf16_1k (gfx90a)
#endif

TUNA_DEVICE tuna_f32x16 tuna_mfma_32x32(const tuna_mfma_frag& a, const tuna_mfma_frag& b, const tuna_f32x16& c) {
#if TUNA_DTYPE == 1
  return __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, c, 0, 0, 0);
#elif defined(__gfx908__)
  return __builtin_amdgcn_mfma_f32_32x32x4bf16(a, b, c, 0, 0, 0);
#elif defined(__gfx90a__)
  return __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, b, c, 0, 0, 0);
#else
  (void)a, (void)b;
  return c;  // host pass only (never a device entry)
#endif
}

constexpr int kBM = TB_M;
constexpr int kBN = TB_N;
constexpr int kBK = TB_K;
constexpr int kWM = WARP_M;
constexpr int kWN = WARP_N;
constexpr int kStages = STAGES;
constexpr int kWave = 64;
constexpr int kWarpsM = kBM / kWM;
constexpr int kWarpsN = kBN / kWN;
constexpr int kThreads = kWarpsM * kWarpsN * kWave;
constexpr int kLds = kBK + 4;  // elements per LDS row (8-byte pad)
constexpr int kMT = kWM / 32;
constexpr int kNT = kWN / 32;
constexpr int kE = kMfmaK / 2;       // elements per lane per MFMA operand
constexpr int kKChunks = kBK / 8;    // 16-byte chunks per row
constexpr int kAIters = kBM * kKChunks / kThreads;
constexpr int kBIters = kBN * kKChunks / kThreads;
constexpr int kRowStep = kThreads / kKChunks;
constexpr int kStageElems = (kBM + kBN) * kLds;
static_assert(TUNA_WARP_SIZE == 64, "MFMA kernels run wave64");
static_assert(kBM % kWM == 0 && kBN % kWN == 0, "block tile not divisible by warp tile");
static_assert(kWM % 32 == 0 && kWN % 32 == 0, "warp tile must be a multiple of 32");
static_assert(kBK % 8 == 0 && kBK % kMfmaK == 0, "TB_K must be a multiple of 8");
static_assert(kAIters >= 1 && kBIters >= 1, "fewer chunks than threads");
static_assert(kBM * kKChunks % kThreads == 0 && kBN * kKChunks % kThreads == 0, "chunk split");
static_assert(kThreads % kKChunks == 0, "threads must cover whole rows");
static_assert(kStages == 1 || kStages == 2, "one or two LDS stages");
static_assert(kLds % 4 == 0, "8-byte aligned LDS rows");

typedef tuna_vec<tuna_u16, 8> tuna_chunk;  // 16 bytes: 8 elements of Kdim
typedef tuna_vec<tuna_u16, 4> tuna_half_chunk;

TUNA_DEVICE tuna_u16 tuna_round_out(float v) {
#if TUNA_DTYPE == 2
  return tuna_float_to_bf16(v).bits;
#else
  return tuna_float_to_half(v).bits;
#endif
}

TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(kThreads)
    tuna_mfma_fwd(const tuna_u16* TUNA_RESTRICT x, const tuna_u16* TUNA_RESTRICT w, tuna_u16* TUNA_RESTRICT y,
                  int n_img, int C, int H, int W, int K, int Ho, int Wo, int R, int S, int pad_h, int pad_w,
                  int stride_h, int stride_w, int dil_h, int dil_w, int groups) {
  TUNA_DYNAMIC_SHARED(tuna_u16, smem);
  const int tid = TUNA_TID_X;
  const int lane = tid % kWave;
  const int wave = tid / kWave;
  const int wave_m = wave % kWarpsM;
  const int wave_n = wave / kWarpsM;
  const int Cg = C / groups;
  const int Kg = K / groups;  // this GEMM's N
  const int group = TUNA_BID_Z;
  x += (long long)group * Cg;          // channel offset in every pixel (pixel stride C)
  w += (long long)group * Kg * R * S * Cg;  // the group's filters
  y += (long long)group * Kg;          // channel offset in every output pixel (stride K)
  const int M = n_img * Ho * Wo;
  const int Kd = R * S * Cg;  // this GEMM's K
  const int m0 = TUNA_BID_X * kBM;
  const int n0 = TUNA_BID_Y * kBN;
  const int kc = tid % kKChunks;        // this thread's chunk column (fixed)
  const int row_base = tid / kKChunks;  // first row it loads; then every kRowStep

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
  const int k_tiles = (Kd + kBK - 1) / kBK;

  // The next tile's chunks, held in registers between the global loads and the LDS stores.
  tuna_chunk ra[kAIters], rb[kBIters];

  auto load_global = [&](int kt) {
    const int k = kt * kBK + kc * 8;
#if TUNA_VEC8
    const bool kvalid = k < Kd;  // Kd % 8 == 0: a chunk is all in or all out
    const int rs = k / Cg;
    const int c = k - rs * Cg;
    const int r = rs / S;
    const int s = rs - r * S;
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int hi = a_h[i] + r * dil_h;
      const int wi = a_w[i] + s * dil_w;
      const bool v = kvalid && a_base[i] >= 0 && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
      if (v) {
        ra[i] = tuna_load_vec<tuna_u16, 8>(x + a_base[i] + ((long long)hi * W + wi) * C + c);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) ra[i].v[e] = 0;
      }
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int row = row_base + i * kRowStep;
      const bool v = kvalid && n0 + row < Kg;
      if (v) {
        rb[i] = tuna_load_vec<tuna_u16, 8>(w + (long long)(n0 + row) * Kd + k);
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) rb[i].v[e] = 0;
      }
    }
#else
    // Gather path: each of the 8 elements of a chunk may belong to another tap.
    int e_c[8], e_r[8], e_s[8];
    bool e_ok[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int kk = k + e;
      e_ok[e] = kk < Kd;
      const int rs = kk / Cg;
      e_c[e] = kk - rs * Cg;
      e_r[e] = rs / S;
      e_s[e] = rs - e_r[e] * S;
    }
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int hi = a_h[i] + e_r[e] * dil_h;
        const int wi = a_w[i] + e_s[e] * dil_w;
        const bool v = e_ok[e] && a_base[i] >= 0 && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
        ra[i].v[e] = v ? x[a_base[i] + ((long long)hi * W + wi) * C + e_c[e]] : (tuna_u16)0;
      }
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int row = row_base + i * kRowStep;
      const bool vrow = n0 + row < Kg;
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        rb[i].v[e] = (vrow && e_ok[e]) ? w[(long long)(n0 + row) * Kd + k + e] : (tuna_u16)0;
      }
    }
#endif
  };

  // Registers -> LDS stage, as two aligned 8-byte halves per chunk (rows are 8-byte aligned).
  auto store_lds = [&](int stage) {
    tuna_u16* a_s = smem + stage * kStageElems;
    tuna_u16* b_s = a_s + kBM * kLds;
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      tuna_u16* dst = a_s + (row_base + i * kRowStep) * kLds + kc * 8;
      tuna_half_chunk lo, hi;
#pragma unroll
      for (int e = 0; e < 4; ++e) lo.v[e] = ra[i].v[e], hi.v[e] = ra[i].v[e + 4];
      tuna_store_vec<tuna_u16, 4>(dst, lo);
      tuna_store_vec<tuna_u16, 4>(dst + 4, hi);
    }
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      tuna_u16* dst = b_s + (row_base + i * kRowStep) * kLds + kc * 8;
      tuna_half_chunk lo, hi;
#pragma unroll
      for (int e = 0; e < 4; ++e) lo.v[e] = rb[i].v[e], hi.v[e] = rb[i].v[e + 4];
      tuna_store_vec<tuna_u16, 4>(dst, lo);
      tuna_store_vec<tuna_u16, 4>(dst + 4, hi);
    }
  };

  tuna_f32x16 acc[kMT][kNT];
#pragma unroll
  for (int i = 0; i < kMT; ++i)
#pragma unroll
    for (int j = 0; j < kNT; ++j)
#pragma unroll
      for (int q = 0; q < 16; ++q) acc[i][j][q] = 0.f;

  // Fragment rows (see the layout above): lane l reads row l % 32 of its 32-row slice, kE
  // elements from column kE * (l / 32) of each MFMA's k step.
  const int a_row = wave_m * kWM + (lane & 31);
  const int b_row = wave_n * kWN + (lane & 31);
  const int k_off = (lane >> 5) * kE;

  load_global(0);
  store_lds(0);
  TUNA_SYNC();
  for (int kt = 0; kt < k_tiles; ++kt) {
    const int stage = kStages == 1 ? 0 : (kt & 1);
    const bool has_next = kt + 1 < k_tiles;  // uniform over the block
    if (has_next) load_global(kt + 1);       // in flight during the MFMAs
    const tuna_u16* a_s = smem + stage * kStageElems;
    const tuna_u16* b_s = a_s + kBM * kLds;
#pragma unroll
    for (int kk = 0; kk < kBK; kk += kMfmaK) {
      tuna_mfma_frag af[kMT], bf[kNT];
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        af[mt] = *reinterpret_cast<const tuna_mfma_frag*>(a_s + (a_row + mt * 32) * kLds + kk + k_off);
      }
#pragma unroll
      for (int nt = 0; nt < kNT; ++nt) {
        bf[nt] = *reinterpret_cast<const tuna_mfma_frag*>(b_s + (b_row + nt * 32) * kLds + kk + k_off);
      }
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) acc[mt][nt] = tuna_mfma_32x32(af[mt], bf[nt], acc[mt][nt]);
    }
    if (has_next) {
      if (kStages == 1) TUNA_SYNC();  // everyone done reading the only stage
      store_lds(kStages == 1 ? 0 : (stage ^ 1));
      TUNA_SYNC();
    }
  }

  // Epilogue: d[4*q + r] of tile (mt, nt) is row 8*q + 4*(lane/32) + r, column lane % 32; the
  // 32 lanes of a half-wave store 32 consecutive channels of one output pixel.
  const int col0 = n0 + wave_n * kWN + (lane & 31);
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int q = 0; q < 4; ++q) {
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int m = m0 + wave_m * kWM + mt * 32 + 8 * q + 4 * (lane >> 5) + r;
        if (m >= M) continue;
        tuna_u16* yrow = y + (long long)m * K;
#pragma unroll
        for (int nt = 0; nt < kNT; ++nt) {
          const int col = col0 + nt * 32;
          if (col < Kg) yrow[col] = tuna_round_out(acc[mt][nt][4 * q + r]);
        }
      }
    }
  }
}
