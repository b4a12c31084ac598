// FP32 SIMT implicit-GEMM backward weights, NCHW (CUDA sm_80+: cp.async), for the solver
// TunaFastSimtWrw (tuner_core/solver/conv/gpu_fast_simt_wrw.cc):
//
//   GEMM  M = K (dw rows)   N = C*R*S (dw columns, KCRS dense)   K = N*Ho*Wo (pixels)
//
// A block computes a TB_M x TB_N tile of dw over one split_k-th of the pixels with
// (TB_M/8)*(TB_N/8) threads, each an 8x8 register micro-tile split in two 4-wide halves per
// dimension, so shared-memory reads are 128-bit and conflict-free. Both operands are pixel-major
// in memory (dy rows, im2col(x) columns), so each thread keeps one pixel of the TB_K-pixel step
// (decomposed once per step) and copies 4-byte elements with cp.async into k-major tiles whose
// rows are padded by 4 floats (conflict-free scatter); zero-fill covers padding and tails. K
// advances through a STAGES-deep ring.
//
// split_k > 1: block z writes its partial tile into the workspace slice z; tuna_simt_wrw_reduce
// then sums the slices in slice order into dw, so re-runs give identical bits (no atomics).
//
// Options: the solver's axes TB_M, TB_N, TB_K, STAGES; TUNA_FR, TUNA_FS (the filter's taps, 1
// for 1x1 filters; 0: taps as run-time arguments, filter_taps.h). The solver's SPLIT_K axis is a
// run-time argument: it only sets each block's share of the pixel steps (a few integer
// operations per block), so one build serves every split.
// Arguments: x, dy, out (dw, or the workspace when split_k > 1), then the sizes as int32, then
// the taps (R*S, S and their magic numbers, read only when TUNA_FR is 0), then the offsets and
// strides of a batch (floats, int64), its size and split_k (grid.z = batch *
// split_k).
#include "common/portability.h"
#include "conv/async_copy.h"
#include "conv/filter_taps.h"
#include "conv/simt_mainloop.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "fast_simt_wrw.cu needs CUDA (cp.async)"
#endif

constexpr int kTbM = TB_M;  // output channels per block
constexpr int kTbN = TB_N;  // filter columns (c, r, s) per block
constexpr int kTbK = TB_K;  // pixels per step
constexpr int kStages = STAGES;
constexpr int kTX = kTbN / 8;
constexpr int kTY = kTbM / 8;
constexpr int kThreads = kTX * kTY;
constexpr int kLdA = kTbM + 4;
constexpr int kLdB = kTbN + 4;
constexpr int kStageFloats = kTbK * (kLdA + kLdB);
static_assert(kThreads % kTbK == 0, "each thread keeps one pixel of the step");
constexpr int kRowStep = kThreads / kTbK;  // rows (A) / columns (B) between a thread's copies
constexpr int kAIters = kTbM / kRowStep;
constexpr int kBIters = kTbN / kRowStep;
static_assert(kTbM % kRowStep == 0 && kTbN % kRowStep == 0, "copy split");
static_assert(kStages >= 2, "at least two stages");

TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(kThreads)
    tuna_fast_simt_wrw(const float* TUNA_RESTRICT x, const float* TUNA_RESTRICT dy, float* TUNA_RESTRICT out,
                       int n_img, int C, int H, int W, int K, int Ho, int Wo, int pad_h, int pad_w, int stride_h,
                       int stride_w, int dil_h, int dil_w, int taps_rs, int taps_s, unsigned rs_mul,
                       unsigned rs_shr, unsigned s_mul, unsigned s_shr, long long x_off, long long dy_off,
                       long long out_off, long long zx, long long zdy, int batch, int split_k) {
  TUNA_DYNAMIC_SHARED(float, smem);
  // grid.z = batch * split_k: convolution b of a batch (Winograd's 16 GEMMs) reads x and dy at
  // these strides; its split s writes slice s * batch + b.
  const int split = TUNA_BID_Z % split_k;
  const int b = TUNA_BID_Z / split_k;
  x += x_off + b * zx;
  dy += dy_off + b * zdy;
  const int tid = TUNA_TID_X;
  const int tx = tid % kTX;
  const int ty = tid / kTX;
  const int HWo = Ho * Wo;
  const int HW = H * W;
  const int P = n_img * HWo;
  const TunaTaps taps = {taps_rs, taps_s, rs_mul, rs_shr, s_mul, s_shr};
  const int CRS = C * tuna_taps_rs(taps);
  const int n0 = TUNA_BID_X * kTbN;  // filter columns
  const int m0 = TUNA_BID_Y * kTbM;  // output channels
  const unsigned smem_base = tuna_smem_u32(smem);

  // This block's pixel steps: an equal share of them per split.
  const int steps_all = (P + kTbK - 1) / kTbK;
  const int steps_per = (steps_all + split_k - 1) / split_k;
  const int step0 = split * steps_per;
  const int steps = max(0, min(steps_all, step0 + steps_per) - step0);

  // The thread's pixel of each step and its rows / columns.
  const int kk = tid % kTbK;
  const int row0 = tid / kTbK;
  int col_off[kBIters], col_h[kBIters], col_w[kBIters];  // per column: c*HW + r*dil*W + s*dil, r*dil, s*dil
#pragma unroll
  for (int i = 0; i < kBIters; ++i) {
    const int n = n0 + row0 + i * kRowStep;
    int c, r, s;
    tuna_split_taps(taps, n, c, r, s);
    const bool in = n < CRS;
    col_h[i] = in ? r * dil_h : -(1 << 30);  // out of range: never inside the image
    col_w[i] = s * dil_w;
    col_off[i] = in ? c * HW + col_h[i] * W + col_w[i] : 0;
  }

  auto load_tile = [&](int stage, int step) {
    const unsigned a_s = smem_base + (unsigned)(stage * kStageFloats) * 4u;
    const unsigned b_s = a_s + (unsigned)(kTbK * kLdA) * 4u;
    const int p = (step0 + step) * kTbK + kk;
    const bool pv = p < P;
    int img = 0, ho = 0, wo = 0;
    if (pv) {
      img = p / HWo;
      const int rem = p - img * HWo;
      ho = rem / Wo;
      wo = rem - ho * Wo;
    }
    const float* dy_p = dy + (long long)img * K * HWo + ho * Wo + wo;
#pragma unroll
    for (int i = 0; i < kAIters; ++i) {
      const int m = row0 + i * kRowStep;
      const bool v = pv && m0 + m < K;
      tuna_cp_async4(a_s + (unsigned)(kk * kLdA + m) * 4u, v ? dy_p + (long long)(m0 + m) * HWo : dy, v ? 4 : 0);
    }
    const int hi0 = ho * stride_h - pad_h;
    const int wi0 = wo * stride_w - pad_w;
    const float* x_p = x + (long long)img * C * HW + hi0 * W + wi0;
#pragma unroll
    for (int i = 0; i < kBIters; ++i) {
      const int n = row0 + i * kRowStep;
      const bool v = pv && (unsigned)(hi0 + col_h[i]) < (unsigned)H && (unsigned)(wi0 + col_w[i]) < (unsigned)W;
      tuna_cp_async4(b_s + (unsigned)(kk * kLdB + n) * 4u, v ? x_p + col_off[i] : x, v ? 4 : 0);
    }
  };

  float acc[8][8];
  tuna_simt_mainloop<kTbK, kStages, kLdA, kLdB, kTbM, kTbN>(smem, steps, tx, ty, load_tile, acc);

  // Epilogue: rows are output channels, columns filter columns (contiguous); slice z of the
  // workspace when split.
  // (split and b again from the block index: kept live across the main loop they cost registers)
  float* dst = out + out_off + ((long long)(TUNA_BID_Z % split_k) * batch + TUNA_BID_Z / split_k) * K * CRS;
  const bool vec_out = (CRS & 3) == 0;
#pragma unroll
  for (int ih = 0; ih < 2; ++ih) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = m0 + ih * (kTbM / 2) + ty * 4 + i;
      if (m >= K) continue;
#pragma unroll
      for (int jh = 0; jh < 2; ++jh) {
        const int n = n0 + jh * (kTbN / 2) + tx * 4;
        if (n >= CRS) continue;
        const float* v = acc[ih * 4 + i] + jh * 4;
        float* d = dst + (long long)m * CRS + n;
        if (vec_out) {
          *reinterpret_cast<float4*>(d) = make_float4(v[0], v[1], v[2], v[3]);
        } else {
#pragma unroll
          for (int j = 0; j < 4; ++j)
            if (n + j < CRS) d[j] = v[j];
        }
      }
    }
  }
}

// dw[i] = sum over the split_k workspace slices of ws[z][i], in slice order.
TUNA_GLOBAL void tuna_simt_wrw_reduce(const float* TUNA_RESTRICT ws, float* TUNA_RESTRICT dw, int count,
                                      int split_k) {
  const int i = TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (i >= count) return;
  float sum = 0.f;
#pragma unroll 4
  for (int z = 0; z < split_k; ++z) sum += ws[(long long)z * count + i];
  dw[i] = sum;
}
