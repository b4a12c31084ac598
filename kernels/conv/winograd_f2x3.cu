// Winograd F(2x2, 3x3) transforms for FP32 NCHW 3x3 stride-1 convolutions (solver
// TunaWinogradF2x3, tuner_core/solver/conv/gpu_winograd.cc), strict FP32 arithmetic:
//
//   U[xi][ko][ci] = (G g G^T)[xi]          filter, 4x4 per (ko, ci)          tuna_wino_filter
//   V[xi][ci][t]  = (B^T d B)[xi]          4x4 input tile t (stride 2)       tuna_wino_input
//   M[xi][ko][t]  = sum_ci U[xi][ko][ci] V[xi][ci][t]   16 GEMMs on fast_simt_fwd.cu's kernel
//   y             = A^T M A                2x2 outputs per tile              tuna_wino_output
//
// with the matrices of WinoF2x3 (conv/winograd_math.h); the tiles, the workspace layout and the
// backward-data rotation are conv/winograd_tiles.h's, shared with F(4x4, 3x3)
// (conv/winograd_f4x3.cu). This file also holds the backward-weights transforms below.
#include "common/portability.h"
#include "conv/winograd_tiles.h"

TUNA_WINO_ENTRIES(WinoF2x3)

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
