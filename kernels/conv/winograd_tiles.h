// The memory side of tuna's Winograd F(m x m, 3x3) forward / backward-data transforms, shared by
// conv/winograd_f2x3.cu (m = 2) and conv/winograd_f4x3.cu (m = 4): which filter, input tile and
// output pixels a thread reads and writes, and the layout of the transformed points in the
// workspace. The arithmetic is W's (conv/winograd_math.h). Each body is the work of thread `e`
// of its launch (the entries below pass the global thread index), so the CPU twin
// (tests/solver/winograd_error_test.cc) runs these same bodies for every e on the host; they use
// only winograd_math.h's macros. The entries need common/portability.h first.
//
// Layouts (floats; A = W::kA, P = A * A points, xi = i * A + j the point of row i, column j):
//   U[xi][ko][ci]  filter transforms                       plane KO * CI
//   V[xi][ci][t]   input tile t (stride m, A x A, padded)  plane C * T4
//   M[xi][k][t]    the GEMMs' results                      plane K * T4
// Tiles t run over (image, tile row, tile column); T4 is their count rounded up to 4 (the
// GEMM's 16-byte loads): V's columns past the last tile are zeros, M's are never read.
// Backward data is the forward over dy with g = the filter rotated and K, C swapped (flip = 1),
// padding 2 - pad.
#pragma once

#include "conv/winograd_math.h"

// Point xi = i * A + j of element e in a workspace of `plane`-strided points (the layouts above).
template <class W>
TUNA_WINO_FN void wino_store_points(const float t[W::kA][W::kA], float* TUNA_WINO_RESTRICT dst, long long plane,
                                     long long e) {
  TUNA_WINO_UNROLL
  for (int i = 0; i < W::kA; ++i)
    TUNA_WINO_UNROLL
    for (int j = 0; j < W::kA; ++j) dst[(i * W::kA + j) * plane + e] = t[i][j];
}
template <class W>
TUNA_WINO_FN void wino_load_points(const float* TUNA_WINO_RESTRICT src, long long plane, long long e,
                                    float t[W::kA][W::kA]) {
  TUNA_WINO_UNROLL
  for (int i = 0; i < W::kA; ++i)
    TUNA_WINO_UNROLL
    for (int j = 0; j < W::kA; ++j) t[i][j] = src[(i * W::kA + j) * plane + e];
}

// One thread per (ko, ci): U[xi][ko][ci] for every xi. flip: g[r][s] = w[ci][ko][2-r][2-s].
template <class W>
TUNA_WINO_FN void wino_filter_body(int e, const float* TUNA_WINO_RESTRICT w, float* TUNA_WINO_RESTRICT u, int KO, int CI,
                                    int flip) {
  if (e >= KO * CI) return;
  const int ko = e / CI, ci = e - ko * CI;
  float g[3][3];
  TUNA_WINO_UNROLL
  for (int r = 0; r < 3; ++r)
    TUNA_WINO_UNROLL
    for (int s = 0; s < 3; ++s)
      g[r][s] = flip ? w[((long long)ci * KO + ko) * 9 + (2 - r) * 3 + (2 - s)] : w[(long long)e * 9 + r * 3 + s];
  float t[W::kA][W::kA];
  wino_filter_tile<W>(g, t);
  wino_store_points<W>(t, u, (long long)KO * CI, e);
}

// One thread per (ci, t), t fastest: V[xi][ci][t] for every xi; tiles past T write zeros.
template <class W>
TUNA_WINO_FN void wino_input_body(long long e, const float* TUNA_WINO_RESTRICT x, float* TUNA_WINO_RESTRICT v,
                                   long long v_off, int N, int C, int H, int Wd, int pad_h, int pad_w, int tiles_h,
                                   int tiles_w, int T4) {
  v += v_off;
  if (e >= (long long)C * T4) return;
  const int c = (int)(e / T4);
  const int t = (int)(e - (long long)c * T4);
  const int per_img = tiles_h * tiles_w;
  float d[W::kA][W::kA];
  if (t < N * per_img) {
    const int img = t / per_img;
    const int rem = t - img * per_img;
    const int h0 = (rem / tiles_w) * W::kM - pad_h;
    const int w0 = (rem % tiles_w) * W::kM - pad_w;
    const float* xc = x + ((long long)img * C + c) * H * Wd;
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kA; ++i)
      TUNA_WINO_UNROLL
      for (int j = 0; j < W::kA; ++j) {
        const int h = h0 + i, ww = w0 + j;
        d[i][j] = (unsigned)h < (unsigned)H && (unsigned)ww < (unsigned)Wd ? xc[h * Wd + ww] : 0.f;
      }
  } else {
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kA; ++i)
      TUNA_WINO_UNROLL
      for (int j = 0; j < W::kA; ++j) d[i][j] = 0.f;
  }
  float o[W::kA][W::kA];
  wino_input_tile<W>(d, o);
  wino_store_points<W>(o, v, (long long)C * T4, e);
}

// One thread per (k, t), t fastest: y's m x m outputs of tile t from M[xi][k][t] (those inside
// Ho x Wo).
template <class W>
TUNA_WINO_FN void wino_output_body(long long e, const float* TUNA_WINO_RESTRICT m, long long m_off,
                                    float* TUNA_WINO_RESTRICT y, int N, int K, int Ho, int Wo, int tiles_h, int tiles_w,
                                    int T4) {
  m += m_off;
  const int per_img = tiles_h * tiles_w;
  const int k = (int)(e / T4);
  const int t = (int)(e - (long long)k * T4);
  if (k >= K || t >= N * per_img) return;
  float a[W::kA][W::kA];
  wino_load_points<W>(m, (long long)K * T4, e, a);
  float o[W::kM][W::kM];
  wino_output_tile<W>(a, o);
  const int img = t / per_img;
  const int rem = t - img * per_img;
  const int h0 = (rem / tiles_w) * W::kM;
  const int w0 = (rem % tiles_w) * W::kM;
  float* yk = y + ((long long)img * K + k) * Ho * Wo;
  TUNA_WINO_UNROLL
  for (int i = 0; i < W::kM; ++i) {
    if (h0 + i >= Ho) break;
    TUNA_WINO_UNROLL
    for (int j = 0; j < W::kM; ++j)
      if (w0 + j < Wo) yk[(h0 + i) * Wo + w0 + j] = o[i][j];
  }
}

// The three entries of a variant's source, under the names the solver launches (arguments in
// the order gpu_winograd.cc passes them).
#define TUNA_WINO_ENTRIES(W)                                                                                       \
  TUNA_GLOBAL void tuna_wino_filter(const float* TUNA_RESTRICT w, float* TUNA_RESTRICT u, int KO, int CI, int flip) { \
    wino_filter_body<W>(TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X, w, u, KO, CI, flip);                                  \
  }                                                                                                                  \
  TUNA_GLOBAL void tuna_wino_input(const float* TUNA_RESTRICT x, float* TUNA_RESTRICT v, long long v_off, int N,      \
                                   int C, int H, int Wd, int pad_h, int pad_w, int tiles_h, int tiles_w, int T4) {   \
    wino_input_body<W>((long long)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X, x, v, v_off, N, C, H, Wd, pad_h, pad_w,     \
                       tiles_h, tiles_w, T4);                                                                        \
  }                                                                                                                  \
  TUNA_GLOBAL void tuna_wino_output(const float* TUNA_RESTRICT m, long long m_off, float* TUNA_RESTRICT y, int N,     \
                                    int K, int Ho, int Wo, int tiles_h, int tiles_w, int T4) {                       \
    wino_output_body<W>((long long)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X, m, m_off, y, N, K, Ho, Wo, tiles_h,        \
                        tiles_w, T4);                                                                                \
  }
