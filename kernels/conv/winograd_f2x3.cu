// Winograd F(2x2, 3x3) transforms for FP32 NCHW 3x3 stride-1 convolutions (solver
// TunaWinogradF2x3, tuner_core/solver/conv/gpu_winograd.cc), strict FP32 arithmetic:
//
//   U[xi][ko][ci] = (G g G^T)[xi]          filter, 4x4 per (ko, ci)          tuna_wino_filter
//   V[xi][ci][t]  = (B^T d B)[xi]          4x4 input tile t (stride 2)       tuna_wino_input
//   M[xi][ko][t]  = sum_ci U[xi][ko][ci] V[xi][ci][t]   16 GEMMs on fast_simt_fwd.cu's kernel
//   y             = A^T M A                2x2 outputs per tile              tuna_wino_output
//
// with B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
// A^T = [1 1 1 0; 0 1 -1 -1]. Tiles t run over (image, tile row, tile column), padded with zero
// columns to T4 (a multiple of 4) for the GEMM's 16-byte loads. Backward data is the same with
// g = the filter rotated and K, C swapped (flip = 1) over dy, padding 2 - pad. U, V and M live in
// one workspace (v_off, m_off: floats into it).
#include "common/portability.h"

// One thread per (ko, ci): U[xi][ko][ci] for the 16 xi. flip: g[r][s] = w[ci][ko][2-r][2-s].
TUNA_GLOBAL void tuna_wino_filter(const float* TUNA_RESTRICT w, float* TUNA_RESTRICT u, int KO, int CI, int flip) {
  const int e = TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (e >= KO * CI) return;
  const int ko = e / CI, ci = e - ko * CI;
  float g[3][3];
#pragma unroll
  for (int r = 0; r < 3; ++r)
#pragma unroll
    for (int s = 0; s < 3; ++s)
      g[r][s] = flip ? w[((long long)ci * KO + ko) * 9 + (2 - r) * 3 + (2 - s)] : w[(long long)e * 9 + r * 3 + s];
  float t[4][3];  // G g
#pragma unroll
  for (int s = 0; s < 3; ++s) {
    t[0][s] = g[0][s];
    t[1][s] = 0.5f * (g[0][s] + g[1][s] + g[2][s]);
    t[2][s] = 0.5f * (g[0][s] - g[1][s] + g[2][s]);
    t[3][s] = g[2][s];
  }
  const long long plane = (long long)KO * CI;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float v[4] = {t[i][0], 0.5f * (t[i][0] + t[i][1] + t[i][2]), 0.5f * (t[i][0] - t[i][1] + t[i][2]), t[i][2]};
#pragma unroll
    for (int j = 0; j < 4; ++j) u[(i * 4 + j) * plane + e] = v[j];
  }
}

// One thread per (ci, t), t fastest: V[xi][ci][t] for the 16 xi; tiles past T write zeros.
TUNA_GLOBAL void tuna_wino_input(const float* TUNA_RESTRICT x, float* TUNA_RESTRICT v, long long v_off, int N, int C,
                                 int H, int W, int pad_h, int pad_w, int tiles_h, int tiles_w, int T4) {
  v += v_off;
  const long long e = (long long)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (e >= (long long)C * T4) return;
  const int c = (int)(e / T4);
  const int t = (int)(e - (long long)c * T4);
  const int per_img = tiles_h * tiles_w;
  float d[4][4];
  if (t < N * per_img) {
    const int img = t / per_img;
    const int rem = t - img * per_img;
    const int h0 = (rem / tiles_w) * 2 - pad_h;
    const int w0 = (rem % tiles_w) * 2 - pad_w;
    const float* xc = x + ((long long)img * C + c) * H * W;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int h = h0 + i, ww = w0 + j;
        d[i][j] = (unsigned)h < (unsigned)H && (unsigned)ww < (unsigned)W ? xc[h * W + ww] : 0.f;
      }
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) d[i][j] = 0.f;
  }
  float b[4][4];  // B^T d
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    b[0][j] = d[0][j] - d[2][j];
    b[1][j] = d[1][j] + d[2][j];
    b[2][j] = d[2][j] - d[1][j];
    b[3][j] = d[1][j] - d[3][j];
  }
  const long long plane = (long long)C * T4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float o[4] = {b[i][0] - b[i][2], b[i][1] + b[i][2], b[i][2] - b[i][1], b[i][1] - b[i][3]};
#pragma unroll
    for (int j = 0; j < 4; ++j) v[(i * 4 + j) * plane + e] = o[j];
  }
}

// One thread per (k, t), t fastest: y's 2x2 outputs of tile t from M[xi][k][t].
TUNA_GLOBAL void tuna_wino_output(const float* TUNA_RESTRICT m, long long m_off, float* TUNA_RESTRICT y, int N, int K,
                                  int Ho, int Wo, int tiles_h, int tiles_w, int T4) {
  m += m_off;
  const long long e = (long long)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  const int per_img = tiles_h * tiles_w;
  const int k = (int)(e / T4);
  const int t = (int)(e - (long long)k * T4);
  if (k >= K || t >= N * per_img) return;
  const long long plane = (long long)K * T4;
  float a[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) a[i][j] = m[(i * 4 + j) * plane + e];
  float r[2][4];  // A^T M
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    r[0][j] = a[0][j] + a[1][j] + a[2][j];
    r[1][j] = a[1][j] - a[2][j] - a[3][j];
  }
  const int img = t / per_img;
  const int rem = t - img * per_img;
  const int h0 = (rem / tiles_w) * 2;
  const int w0 = (rem % tiles_w) * 2;
  float* yk = y + ((long long)img * K + k) * Ho * Wo;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    if (h0 + i >= Ho) break;
    const float o0 = r[i][0] + r[i][1] + r[i][2];
    const float o1 = r[i][1] - r[i][2] - r[i][3];
    yk[(h0 + i) * Wo + w0] = o0;
    if (w0 + 1 < Wo) yk[(h0 + i) * Wo + w0 + 1] = o1;
  }
}

// Backward weights (TunaWinogradWrw) by the transposed algorithm F(3x3, 2x2): per 2x2 tile t of
// dy and the 4x4 tile of x under it (tuna_wino_input, tiles over dy, x padded),
//   DY[xi][k][t] = (A z A^T)[xi], A = [1 0; 1 1; 1 -1; 0 -1]       tuna_wino_dy
//   P[xi][k][c]  = sum_t DY[xi][k][t] V[xi][c][t]                   16 GEMMs on fast_simt_wrw.cu
//   dw[k][c]     = G^T P G (3x3), the split-K slices summed first   tuna_wino_wrw_output

// One thread per (k, t), t fastest: DY[xi][k][t]; dy past Ho / Wo and tiles past T are zeros.
TUNA_GLOBAL void tuna_wino_dy(const float* TUNA_RESTRICT dy, float* TUNA_RESTRICT out, long long out_off, int N, int K,
                              int Ho, int Wo, int tiles_h, int tiles_w, int T4) {
  out += out_off;
  const long long e = (long long)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (e >= (long long)K * T4) return;
  const int k = (int)(e / T4);
  const int t = (int)(e - (long long)k * T4);
  const int per_img = tiles_h * tiles_w;
  float z[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
  if (t < N * per_img) {
    const int img = t / per_img;
    const int rem = t - img * per_img;
    const int h0 = (rem / tiles_w) * 2;
    const int w0 = (rem % tiles_w) * 2;
    const float* dk = dy + ((long long)img * K + k) * Ho * Wo;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j)
        if (h0 + i < Ho && w0 + j < Wo) z[i][j] = dk[(h0 + i) * Wo + w0 + j];
  }
  float u[4][2];  // A z
#pragma unroll
  for (int j = 0; j < 2; ++j) {
    u[0][j] = z[0][j];
    u[1][j] = z[0][j] + z[1][j];
    u[2][j] = z[0][j] - z[1][j];
    u[3][j] = -z[1][j];
  }
  const long long plane = (long long)K * T4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float v[4] = {u[i][0], u[i][0] + u[i][1], u[i][0] - u[i][1], -u[i][1]};
#pragma unroll
    for (int j = 0; j < 4; ++j) out[(i * 4 + j) * plane + e] = v[j];
  }
}

// One thread per (k, c): P = the sum of the `splits` slices (slice s, point xi at
// (s * 16 + xi) * K * C), then dw[k][c] = G^T P G, G^T = [1 .5 .5 0; 0 .5 -.5 0; 0 .5 .5 1].
TUNA_GLOBAL void tuna_wino_wrw_output(const float* TUNA_RESTRICT ws, long long p_off, int splits,
                                      float* TUNA_RESTRICT dw, int K, int C) {
  const int e = TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  if (e >= K * C) return;
  const long long plane = (long long)K * C;
  float m[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float sum = 0.f;
      for (int s = 0; s < splits; ++s) sum += ws[p_off + ((long long)s * 16 + i * 4 + j) * plane + e];
      m[i][j] = sum;
    }
  float r[3][4];  // G^T P
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    r[0][j] = m[0][j] + 0.5f * (m[1][j] + m[2][j]);
    r[1][j] = 0.5f * (m[1][j] - m[2][j]);
    r[2][j] = 0.5f * (m[1][j] + m[2][j]) + m[3][j];
  }
#pragma unroll
  for (int i = 0; i < 3; ++i) {
    float* d = dw + (long long)e * 9 + i * 3;
    d[0] = r[i][0] + 0.5f * (r[i][1] + r[i][2]);
    d[1] = 0.5f * (r[i][1] - r[i][2]);
    d[2] = 0.5f * (r[i][1] + r[i][2]) + r[i][3];
  }
}
