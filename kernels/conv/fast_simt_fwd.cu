// FP32 SIMT implicit-GEMM convolution, NCHW (CUDA sm_80+: cp.async), for the solvers
// TunaFastSimtFwd and TunaFastSimtBwd (tuner_core/solver/conv/gpu_fast_simt*.cc). No layout
// transform:
//
//   GEMM  M = N*Ho*Wo (output pixels)   N = K (filter rows, KCRS dense)   K = C*R*S
//   as in every tuna forward solver; this kernel computes it transposed (y is NCHW: a row of
//   output channels, pixels contiguous), so its shared tile "A" holds w (TB_N rows) and "B"
//   im2col(x) (TB_M pixel columns, gathered on the fly), C^T -> y.
//
// A block computes a TB_N x TB_M tile of y (channels x pixels) with (TB_N/8)*(TB_M/8) threads,
// each an 8x8 register micro-tile split in two 4-wide halves per dimension (rows ty*4.. and
// TB_N/2+ty*4.., likewise columns), so shared-memory reads are 128-bit and conflict-free. K
// advances by TB_K through a STAGES-deep ring of shared tiles filled by cp.async: 4-byte copies
// with zero-fill (padding, tails), or 16-byte copies of 4 pixels for 1x1 / stride 1 / pad 0
// convolutions with H*W % 4 == 0 (TUNA_VEC4_B). A is stored transposed (k-major) with rows
// padded by 4 floats, which makes its 4-byte scatter stores conflict-free.
//
// Backward data runs on the same kernel as dx = dy (*) w' (TunaFastSimtBwd): tuna_simt_bwd_filter
// writes w' (taps rotated, K and C swapped, one sub-filter per sub-pixel phase of the stride) and
// each phase is one launch whose output pixel (i, j) lands at dx row out_a + out_sh * i, column
// out_b + out_sw * j (TUNA_PHASED; a forward launch has out_sh = out_sw = 1, out_a = out_b = 0);
// dx rows no tap reaches are zeroed before the launches.
//
// Options: the solver's axes TB_M, TB_N, TB_K, STAGES (named as its perf config); TUNA_FR,
// TUNA_FS (the filter's taps, 1 for 1x1 filters; 0: taps as run-time arguments, filter_taps.h),
// TUNA_VEC4_B, TUNA_PHASED (0: y is dense Ho x Wo and takes 16-byte stores when H*W % 4 == 0).
// Arguments: x, w, y, w's offset in floats, then the sizes as int32, then the output placement,
// then the taps (R*S, S and their magic numbers, read only when TUNA_FR is 0), then x's and y's
// offsets and the x / w / y strides between the convolutions of a batch (grid.z; in floats, int64).
#include "common/portability.h"
#include "conv/async_copy.h"
#include "conv/filter_taps.h"
#include "conv/simt_mainloop.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "fast_simt_fwd.cu needs CUDA (cp.async)"
#endif

constexpr int kTbM = TB_M;  // pixels per block (GEMM M)
constexpr int kTbN = TB_N;  // output channels per block (GEMM N)
constexpr int kTbK = TB_K;
constexpr int kStages = STAGES;
constexpr int kTX = kTbM / 8;
constexpr int kTY = kTbN / 8;
constexpr int kThreads = kTX * kTY;
constexpr int kLdA = kTbN + 4;
constexpr int kLdB = kTbM;
constexpr int kStageFloats = kTbK * (kLdA + kLdB);
constexpr int kAIters = kTbN * kTbK / kThreads;
static_assert(kTbN * kTbK % kThreads == 0, "A split");
// B (gather path): a thread owns kBCols pixel columns, kThreads apart (more than one only in a
// thin tile, TB_N = 8, whose block has fewer threads than pixel columns), and steps through the
// K rows by kBRowStep.
constexpr int kBCols = kThreads < kTbM ? kTbM / kThreads : 1;
constexpr int kBRowStep = kThreads < kTbM ? 1 : kThreads / kTbM;
static_assert(kThreads < kTbM ? kTbM % kThreads == 0 : kThreads % kTbM == 0, "B split");
constexpr int kBRows = kTbK / kBRowStep;
constexpr int kB4PerRow = kTbM / 4;
#if TUNA_VEC4_B
static_assert(kThreads % kB4PerRow == 0, "vector B split");
#endif
constexpr int kB4Iters = kTbK * kB4PerRow / kThreads;
static_assert(kStages >= 2, "at least two stages");
#ifndef TUNA_PHASED
#define TUNA_PHASED 0
#endif


TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(kThreads)
    tuna_fast_simt_fwd(const float* TUNA_RESTRICT x, const float* TUNA_RESTRICT w, float* TUNA_RESTRICT y,
                       int w_off, int n_img, int C, int H, int W, int K, int Ho, int Wo, int pad_h, int pad_w,
                       int stride_h, int stride_w, int dil_h, int dil_w, int out_h, int out_w, int out_a,
                       int out_b, int out_sh, int out_sw, int taps_rs, int taps_s, unsigned rs_mul,
                       unsigned rs_shr, unsigned s_mul, unsigned s_shr, long long x_off, long long y_off,
                       long long zx, long long zw, long long zy) {
  TUNA_DYNAMIC_SHARED(float, smem);
  // grid.z > 1: a batch of independent convolutions (Winograd's 16 GEMMs), z-th at these strides.
  x += x_off + TUNA_BID_Z * zx;
  w += w_off + TUNA_BID_Z * zw;
  y += y_off + TUNA_BID_Z * zy;
  const int tid = TUNA_TID_X;
  const int tx = tid % kTX;
  const int ty = tid / kTX;
  const int HWo = Ho * Wo;
  const int P = n_img * HWo;
  const TunaTaps taps = {taps_rs, taps_s, rs_mul, rs_shr, s_mul, s_shr};
  const int Kg = C * tuna_taps_rs(taps);
  const int HW = H * W;
  const int m0 = TUNA_BID_Y * kTbN;  // output channels
  const int p0 = TUNA_BID_X * kTbM;  // pixels
  const unsigned smem_base = tuna_smem_u32(smem);

  // B (gather path): this thread's pixel columns are fixed; its K rows step by kBRowStep.
  const int b_col = tid % kTbM;
  const int b_row0 = tid / kTbM;
  long long b_base[kBCols];
  int b_h0[kBCols], b_w0[kBCols];
#pragma unroll
  for (int j = 0; j < kBCols; ++j) {
    const int p = p0 + b_col + j * kThreads;
    if (p < P) {
      const int img = p / HWo;
      const int rem = p - img * HWo;
      const int ho = rem / Wo;
      const int wo = rem - ho * Wo;
      b_base[j] = (long long)img * C * HW;
      b_h0[j] = ho * stride_h - pad_h;
      b_w0[j] = wo * stride_w - pad_w;
    } else {
      b_base[j] = -1;
      b_h0[j] = b_w0[j] = 0;
    }
  }
  // B (vector path): 4 pixels per copy, same image (H*W % 4 == 0), input offset = output's.
  const int b4_col = (tid % kB4PerRow) * 4;
  const int b4_row0 = tid / kB4PerRow;
  constexpr int kB4RowStep = kThreads / kB4PerRow;
  long long b4_base;
  {
    const int p = p0 + b4_col;
    if (p < P) {
      const int img = p / HWo;
      b4_base = (long long)img * C * HW + (p - img * HWo);
    } else {
      b4_base = -1;
    }
  }

  const int k_tiles = (Kg + kTbK - 1) / kTbK;
  auto load_tile = [&](int stage, int kt) {
    const unsigned a_s = smem_base + (unsigned)(stage * kStageFloats) * 4u;
    const unsigned b_s = a_s + (unsigned)(kTbK * kLdA) * 4u;
    const int k0 = kt * kTbK;
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int e = tid + i * kThreads;
      const int m = e / kTbK;
      const int kk = e - m * kTbK;
      const bool v = m0 + m < K && k0 + kk < Kg;
      const float* src = v ? w + (long long)(m0 + m) * Kg + k0 + kk : w;
      tuna_cp_async4(a_s + (unsigned)(kk * kLdA + m) * 4u, src, v ? 4 : 0);
    }
#if TUNA_VEC4_B
#pragma unroll
    for (int i = 0; i < kB4Iters; ++i) {
      const int kr = b4_row0 + i * kB4RowStep;
      const int c = k0 + kr;
      const bool v = b4_base >= 0 && c < Kg;
      const float* src = v ? x + b4_base + (long long)c * HW : x;
      tuna_cp_async16(b_s + (unsigned)(kr * kLdB + b4_col) * 4u, src, v ? 16 : 0);
    }
#else
#pragma unroll
    for (int i = 0; i < kBRows; ++i) {
      const int kr = b_row0 + i * kBRowStep;
      const int k = k0 + kr;
      int c, r, s;
      tuna_split_taps(taps, k, c, r, s);
#pragma unroll
      for (int j = 0; j < kBCols; ++j) {
        const int hi = b_h0[j] + r * dil_h;
        const int wi = b_w0[j] + s * dil_w;
        const bool v = b_base[j] >= 0 && k < Kg && (unsigned)hi < (unsigned)H && (unsigned)wi < (unsigned)W;
        const float* src = v ? x + b_base[j] + (long long)c * HW + hi * W + wi : x;
        tuna_cp_async4(b_s + (unsigned)(kr * kLdB + b_col + j * kThreads) * 4u, src, v ? 4 : 0);
      }
    }
#endif
  };

  float acc[8][8];
  tuna_simt_mainloop<kTbK, kStages, kLdA, kLdB, kTbN, kTbM>(smem, k_tiles, tx, ty, load_tile, acc);

  // Epilogue: rows are output channels, columns pixels. A thread's own pixels are 4 apart, so
  // storing them directly puts one float in each 32-byte sector unless four of them are one
  // 16-byte vector (dense output, H*W % 4 == 0). Otherwise each warp stages its rows through
  // shared memory (the ring is free now) and consecutive lanes store consecutive pixels.
  const bool vec_out = !TUNA_PHASED && (HWo & 3) == 0;
  if (vec_out) {  // p % 4 == 0 and HWo % 4 == 0: four pixels of one image, 16-byte aligned
#pragma unroll
    for (int jh = 0; jh < 2; ++jh) {
      const int p = p0 + jh * (kTbM / 2) + tx * 4;
      if (p >= P) continue;
      const int img = p / HWo;
      float* ybase = y + (long long)img * K * HWo + (p - img * HWo);
#pragma unroll
      for (int ih = 0; ih < 2; ++ih)
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int m = m0 + ih * (kTbN / 2) + ty * 4 + i;
          const float* v = acc[ih * 4 + i] + jh * 4;
          if (m < K) *reinterpret_cast<float4*>(ybase + (long long)m * HWo) = make_float4(v[0], v[1], v[2], v[3]);
        }
    }
    return;
  }
  // Pixel (img, i, j) of this launch lands at y (img, out_a + out_sh * i, out_b + out_sw * j).
  static_assert(kThreads * 32 <= kStages * kStageFloats * 4, "staging fits in the ring");
  static_assert(32 % kTX == 0 && kTbM % 32 == 0, "a warp holds whole rows of pixels");
  constexpr int kWarpRows = 32 / kTX;  // ty rows per warp
  constexpr int kQ = kTbM / 32;        // pixels per lane and row
  TUNA_SYNC();
  const int lane = tid % 32;
  const int warp_ty0 = (tid / 32) * kWarpRows;
  float* stage = smem + (tid / 32) * (kWarpRows * kTbM);
  const long long out_hw = (long long)out_h * out_w;
  long long pix_off[kQ];
#pragma unroll
  for (int q = 0; q < kQ; ++q) {
    const int p = p0 + lane + 32 * q;
    pix_off[q] = -1;
    if (p < P) {
      const int img = p / HWo;
      const int rem = p - img * HWo;
      const int i = rem / Wo;
      const int j = rem - i * Wo;
      pix_off[q] = (long long)img * K * out_hw + (long long)(out_a + out_sh * i) * out_w + out_b + out_sw * j;
    }
  }
#pragma unroll
  for (int ih = 0; ih < 2; ++ih) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      float* srow = stage + (ty - warp_ty0) * kTbM;
      const float* v = acc[ih * 4 + i];
      *reinterpret_cast<float4*>(srow + tx * 4) = make_float4(v[0], v[1], v[2], v[3]);
      *reinterpret_cast<float4*>(srow + kTbM / 2 + tx * 4) = make_float4(v[4], v[5], v[6], v[7]);
      __syncwarp();
#pragma unroll
      for (int rr = 0; rr < kWarpRows; ++rr) {
        const int m = m0 + ih * (kTbN / 2) + (warp_ty0 + rr) * 4 + i;
        if (m >= K) continue;
#pragma unroll
        for (int q = 0; q < kQ; ++q)
          if (pix_off[q] >= 0) y[pix_off[q] + (long long)m * out_hw] = stage[rr * kTbM + lane + 32 * q];
      }
      __syncwarp();
    }
  }
}

// Taps of residue `a` of a stride-`st` sub-pixel decomposition (backward data): the filter rows r
// with r = (a + pad) mod st (mod st), i.e. r0, r0 + st, ... below `extent`.
TUNA_DEVICE int tuna_phase_taps(int a, int pad, int st, int extent) {
  const int r0 = ((a + pad) % st + st) % st;
  return r0 < extent ? (extent - r0 + st - 1) / st : 0;
}

// w' for backward data: w (K, C, R, S) -> one sub-filter per phase (a, b) (a-major), each
// (C, K, taps_h, taps_w) with its taps in reverse order (the rotation), phase after phase.
// A thread per element of w; phases of a stride-1 dimension are one (the whole filter rotated).
TUNA_GLOBAL void tuna_simt_bwd_filter(const float* TUNA_RESTRICT w, float* TUNA_RESTRICT wt, int K, int C, int R,
                                      int S, int pad_h, int pad_w, int stride_h, int stride_w) {
  const long long e = (long long)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  const long long total = (long long)K * C * R * S;
  if (e >= total) return;
  const int s = (int)(e % S);
  const int r = (int)(e / S % R);
  const int c = (int)(e / ((long long)S * R) % C);
  const int k = (int)(e / ((long long)S * R * C));
  const int a = ((r - pad_h) % stride_h + stride_h) % stride_h;
  const int b = ((s - pad_w) % stride_w + stride_w) % stride_w;
  const int th = tuna_phase_taps(a, pad_h, stride_h, R);
  const int tw = tuna_phase_taps(b, pad_w, stride_w, S);
  long long before = 0;  // taps of the phases before (a, b)
  for (int i = 0; i < a; ++i) before += (long long)tuna_phase_taps(i, pad_h, stride_h, R) * S;
  for (int j = 0; j < b; ++j) before += (long long)th * tuna_phase_taps(j, pad_w, stride_w, S);
  const int t = th - 1 - r / stride_h;
  const int u = tw - 1 - s / stride_w;
  wt[before * K * C + (((long long)c * K + k) * th + t) * tw + u] = w[e];
}
