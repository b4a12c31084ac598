// The arithmetic of tuna's Winograd F(m x m, 3x3) transforms, one tile at a time, shared by the
// GPU kernels (conv/winograd_f2x3.cu, conv/winograd_f4x3.cu, through conv/winograd_tiles.h) and
// by their CPU twin (tests/solver/winograd_error_test.cc, compiled by the host compiler), so the
// twin rounds exactly as the kernels do. Pure functions of registers: no memory, no indices.
// Self-contained (no common/portability.h): it compiles for the host as well.
//
// A variant W provides kM (outputs per tile side), kA = kM + 2 (input tile side = transformed
// points per side) and three 1D transforms, applied to columns then rows:
//   W::G(g[3], u[kA])    filter          U = G g G^T
//   W::Bt(d[kA], v[kA])  input tile      V = B^T d B
//   W::At(m[kA], y[kM])  output tile     Y = A^T M A
// y[i] = sum_r g[r] d[i + r] (correlation, as a convolution layer computes) for every i < kM.
//
// Rounding: every product by a constant that is not a power of two is an explicit fmaf or a
// division, so a compiler that contracts a * b + c into a fused multiply-add (nvcc / NVRTC do by
// default) computes bit for bit what the host computes with contraction off.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define TUNA_WINO_FN __device__ __forceinline__
#define TUNA_WINO_UNROLL _Pragma("unroll")
#else
#include <math.h>
#define TUNA_WINO_FN inline
#define TUNA_WINO_UNROLL
#endif
#define TUNA_WINO_RESTRICT __restrict__

// F(2x2, 3x3) (TunaWinogradF2x3): points 0, 1, -1, infinity (Lavin & Gray's), with
// B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1],
// A^T = [1 1 1 0; 0 1 -1 -1].
struct WinoF2x3 {
  static constexpr int kM = 2, kA = 4;
  static TUNA_WINO_FN void G(const float g[3], float u[4]) {
    u[0] = g[0];
    u[1] = 0.5f * (g[0] + g[1] + g[2]);
    u[2] = 0.5f * (g[0] - g[1] + g[2]);
    u[3] = g[2];
  }
  static TUNA_WINO_FN void Bt(const float d[4], float v[4]) {
    v[0] = d[0] - d[2];
    v[1] = d[1] + d[2];
    v[2] = d[2] - d[1];
    v[3] = d[1] - d[3];
  }
  static TUNA_WINO_FN void At(const float m[4], float y[2]) {
    y[0] = m[0] + m[1] + m[2];
    y[1] = m[1] - m[2] - m[3];
  }
};

// F(4x4, 3x3) (TunaWinogradF4x3): points 0, 1, -1, 2, -1/2, infinity. Of the point sets with
// small coefficients, {0, +-1, 2, -1/2} had the smallest FP32 error in a CPU sweep (max error
// 2.2-2.6x and RMS error 1.5-1.6x below Lavin's {0, +-1, +-2} at C = 64..2048, and below
// {0, +-1, +-1/2}), as Barabasz et al. ("Error analysis and improving the accuracy of Winograd
// convolution", 2020) found for mixed-magnitude points. Scaled so that B^T and A^T are integers
// (the fractions sit in G, applied once per filter):
//   B^T = [2  3 -4 -3  2  0]   G = [ 1/2    0     0  ]   A^T = [1  1  1  1  8  0]
//         [0  2  5  1 -2  0]       [ 1/6   1/6   1/6 ]         [0  1 -1  2 -4  0]
//         [0  2  1 -5  2  0]       [ 1/6  -1/6   1/6 ]         [0  1  1  4  2  0]
//         [0 -1 -2  1  2  0]       [ 1/30  1/15  2/15]         [0  1 -1  8 -1  1]
//         [0 -2  1  2 -1  0]       [ 2/15 -1/15  1/30]
//         [0  2  3 -4 -3  2]       [ 0     0     1/2 ]
struct WinoF4x3 {
  static constexpr int kM = 4, kA = 6;
  static TUNA_WINO_FN void G(const float g[3], float u[6]) {
    const float s = g[0] + g[2];
    u[0] = 0.5f * g[0];
    u[1] = (s + g[1]) / 6.f;
    u[2] = (s - g[1]) / 6.f;
    u[3] = (g[0] + 2.f * g[1] + 4.f * g[2]) / 30.f;
    u[4] = (4.f * g[0] - 2.f * g[1] + g[2]) / 30.f;
    u[5] = 0.5f * g[2];
  }
  static TUNA_WINO_FN void Bt(const float d[6], float v[6]) {
    v[0] = fmaf(3.f, d[1] - d[3], 2.f * (d[0] - 2.f * d[2] + d[4]));
    v[1] = 2.f * (d[1] - d[4]) + fmaf(5.f, d[2], d[3]);
    v[2] = 2.f * (d[1] + d[4]) + fmaf(-5.f, d[3], d[2]);
    v[3] = (d[3] - d[1]) + 2.f * (d[4] - d[2]);
    v[4] = 2.f * (d[3] - d[1]) + (d[2] - d[4]);
    v[5] = fmaf(3.f, d[2] - d[4], 2.f * (d[1] - 2.f * d[3] + d[5]));
  }
  static TUNA_WINO_FN void At(const float m[6], float y[4]) {
    const float p = m[1] + m[2], q = m[1] - m[2];
    y[0] = m[0] + p + m[3] + 8.f * m[4];
    y[1] = q + 2.f * m[3] - 4.f * m[4];
    y[2] = p + 4.f * m[3] + 2.f * m[4];
    y[3] = q + 8.f * m[3] - m[4] + m[5];
  }
};

// The 2D transforms: the 1D one on each column, then on each row of the result.
template <class W>
TUNA_WINO_FN void wino_filter_tile(const float g[3][3], float u[W::kA][W::kA]) {
  float t[W::kA][3];
  TUNA_WINO_UNROLL
  for (int s = 0; s < 3; ++s) {
    const float col[3] = {g[0][s], g[1][s], g[2][s]};
    float o[W::kA];
    W::G(col, o);
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kA; ++i) t[i][s] = o[i];
  }
  TUNA_WINO_UNROLL
  for (int i = 0; i < W::kA; ++i) W::G(t[i], u[i]);
}

template <class W>
TUNA_WINO_FN void wino_input_tile(const float d[W::kA][W::kA], float v[W::kA][W::kA]) {
  float b[W::kA][W::kA];
  TUNA_WINO_UNROLL
  for (int j = 0; j < W::kA; ++j) {
    float col[W::kA], o[W::kA];
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kA; ++i) col[i] = d[i][j];
    W::Bt(col, o);
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kA; ++i) b[i][j] = o[i];
  }
  TUNA_WINO_UNROLL
  for (int i = 0; i < W::kA; ++i) W::Bt(b[i], v[i]);
}

template <class W>
TUNA_WINO_FN void wino_output_tile(const float m[W::kA][W::kA], float y[W::kM][W::kM]) {
  float r[W::kM][W::kA];
  TUNA_WINO_UNROLL
  for (int j = 0; j < W::kA; ++j) {
    float col[W::kA], o[W::kM];
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kA; ++i) col[i] = m[i][j];
    W::At(col, o);
    TUNA_WINO_UNROLL
    for (int i = 0; i < W::kM; ++i) r[i][j] = o[i];
  }
  TUNA_WINO_UNROLL
  for (int i = 0; i < W::kM; ++i) W::At(r[i], y[i]);
}
