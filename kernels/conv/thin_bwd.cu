// Backward data for thin inputs (C/G <= 4 channels per group, e.g. a network's RGB stem), for the
// solver TunaThinBwd (tuner_core/solver/conv/gpu_thin_bwd.cc).
//
// dx[n][g*CG + c][h][w] = sum_{k < K/G} sum_{r,s} dy[n][g*KG + k][q][p] * w[g*KG + k][c][r][s] with
// h + PH - r*DH = q*SH and w + PW - s*DW = p*SW. As an implicit GEMM this has N = C/G <= 4 columns,
// which wastes most of any tensor-core or SIMT tile; directly, each dy value feeds every channel
// of every tap that reaches it. A thread owns THREAD_H x THREAD_W dx pixels (aligned to the
// stride, so every pixel's taps are compile-time) of all CG channels. Per output channel k it
// loads the dy window its tile reads into registers once (branch-free, zero outside), then walks
// the taps: one 16-byte shared-memory load of the tap's CG weights (padded to 4) feeds the
// THREAD_H*THREAD_W/(SH*SW) pixels of the tap's phase. The block stages K_CHUNK output channels'
// weights at a time in shared memory ([K_CHUNK][R*S][4] floats).
//
// Grid: x = thread tiles of one image / TB_THREADS (column strips fastest), y = N * G.
// Options: axes THREAD_H, THREAD_W, K_CHUNK, TB_THREADS; derived TUNA_DTYPE, TUNA_CG, TUNA_FR,
// TUNA_FS, TUNA_SH, TUNA_SW, TUNA_DH, TUNA_DW, TUNA_PH, TUNA_PW. Sizes and strides are arguments.
#include "conv/tuna_conv_common.h"

constexpr int kCg = TUNA_CG;
constexpr int kR = TUNA_FR, kS = TUNA_FS;
constexpr int kSH = TUNA_SH, kSW = TUNA_SW, kDH = TUNA_DH, kDW = TUNA_DW;
constexpr int kPH = TUNA_PH, kPW = TUNA_PW;
constexpr int kTh = THREAD_H, kTw = THREAD_W, kKc = K_CHUNK, kThreads = TB_THREADS;
static_assert(kCg >= 1 && kCg <= 4, "TUNA_CG must be 1..4");
static_assert(kTh % kSH == 0 && kTw % kSW == 0, "the thread tile must be a multiple of the stride");

// The dy window of a thread tile, relative to (h0 / SH, w0 / SW).
constexpr int kE0 = TUNA_FLOORDIV(kPH - (kR - 1) * kDH, kSH), kE1 = TUNA_FLOORDIV(kTh - 1 + kPH, kSH);
constexpr int kF0 = TUNA_FLOORDIV(kPW - (kS - 1) * kDW, kSW), kF1 = TUNA_FLOORDIV(kTw - 1 + kPW, kSW);
constexpr int kRows = kE1 - kE0 + 1, kCols = kF1 - kF0 + 1;

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void tuna_thin_bwd(
    tuna_elem* x, const tuna_elem* w, const tuna_elem* y, int groups, int kg, int hi, int wi, int ho, int wo,
    tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws1, tuna_i64 ws3, tuna_i64 ws4,
    tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4) {
  TUNA_DYNAMIC_SHARED(float, s_w);  // [kKc][kR*kS][4]
  const int strips = (wi + kTw - 1) / kTw, row_tiles = (hi + kTh - 1) / kTh;
  const int tile = TUNA_BID_X * kThreads + TUNA_TID_X;
  const bool active = tile < strips * row_tiles;
  const int h0 = (tile / strips) * kTh, w0 = (tile % strips) * kTw;
  const int q0 = h0 / kSH, p0 = w0 / kSW;
  const int n = TUNA_BID_Y / groups, g = TUNA_BID_Y % groups;
  // Which window rows / columns lie inside dy (a row outside reads as zero).
  bool row_in[kRows], col_in[kCols];
#pragma unroll
  for (int e = 0; e < kRows; ++e) row_in[e] = active && tuna_in_range(q0 + kE0 + e, ho);
#pragma unroll
  for (int f = 0; f < kCols; ++f) col_in[f] = tuna_in_range(p0 + kF0 + f, wo);
  const tuna_elem* yg = y + (tuna_i64)n * ys0 + (tuna_i64)g * kg * ys1 + (tuna_i64)(q0 + kE0) * ys3 +
                        (tuna_i64)(p0 + kF0) * ys4;
  const tuna_elem* wg = w + (tuna_i64)g * kg * ws0;

  float acc[kTh][kTw][kCg];
#pragma unroll
  for (int i = 0; i < kTh; ++i)
#pragma unroll
    for (int j = 0; j < kTw; ++j)
#pragma unroll
      for (int c = 0; c < kCg; ++c) acc[i][j][c] = 0.f;

  for (int k0 = 0; k0 < kg; k0 += kKc) {
    TUNA_SYNC();
    for (int e = TUNA_TID_X; e < kKc * kR * kS * 4; e += kThreads) {
      const int kk = e / (kR * kS * 4), t = (e / 4) % (kR * kS), c = e % 4;
      float v = 0.f;
      if (c < kCg && k0 + kk < kg) v = tuna_to_float(wg[(tuna_i64)(k0 + kk) * ws0 + c * ws1 + (t / kS) * ws3 + (t % kS) * ws4]);
      s_w[e] = v;
    }
    TUNA_SYNC();
    const int kc_end = kg - k0 < kKc ? kg - k0 : kKc;
    for (int kk = 0; kk < kc_end; ++kk) {
      const tuna_elem* yk = yg + (tuna_i64)(k0 + kk) * ys1;
      float win[kRows][kCols];
#pragma unroll
      for (int e = 0; e < kRows; ++e)
#pragma unroll
        for (int f = 0; f < kCols; ++f)
          win[e][f] = row_in[e] && col_in[f] ? tuna_to_float(yk[(tuna_i64)e * ys3 + (tuna_i64)f * ys4]) : 0.f;
      const float4* wk = reinterpret_cast<const float4*>(s_w) + kk * kR * kS;
#pragma unroll
      for (int r = 0; r < kR; ++r)
#pragma unroll
        for (int s = 0; s < kS; ++s) {
          const float4 wt = wk[r * kS + s];
          const float wc[4] = {wt.x, wt.y, wt.z, wt.w};
#pragma unroll
          for (int i = 0; i < kTh; ++i) {
            if ((i + kPH - r * kDH) % kSH != 0) continue;  // tap r does not reach row i's phase
#pragma unroll
            for (int j = 0; j < kTw; ++j) {
              if ((j + kPW - s * kDW) % kSW != 0) continue;
              const int ee = TUNA_FLOORDIV(i + kPH - r * kDH, kSH) - kE0;
              const int ff = TUNA_FLOORDIV(j + kPW - s * kDW, kSW) - kF0;
#pragma unroll
              for (int c = 0; c < kCg; ++c) acc[i][j][c] += win[ee][ff] * wc[c];
            }
          }
        }
    }
  }
  if (!active) return;
  tuna_elem* xn = x + (tuna_i64)n * xs0 + (tuna_i64)g * kCg * xs1;
#pragma unroll
  for (int i = 0; i < kTh; ++i)
#pragma unroll
    for (int j = 0; j < kTw; ++j)
      if (h0 + i < hi && w0 + j < wi) {
#pragma unroll
        for (int c = 0; c < kCg; ++c)
          xn[(tuna_i64)c * xs1 + (tuna_i64)(h0 + i) * xs3 + (tuna_i64)(w0 + j) * xs4] = tuna_from_float<tuna_elem>(acc[i][j][c]);
      }
}
