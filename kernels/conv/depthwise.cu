// Depthwise convolution (2D, groups = C, K = C * TUNA_MULT) in all three directions, for the
// solvers TunaDepthwise{Fwd,Bwd,Wrw} (tuner_core/solver/conv/gpu_depthwise.cc).
//
// Depthwise layers do ~R*S multiply-adds per element moved, so they are bound by memory, not
// arithmetic: the kernels read every input element from DRAM once (overlapping windows are served
// by registers and L1) and spend few instructions per element. The filter geometry (TUNA_FR/FS,
// TUNA_SH/SW stride, TUNA_DH/DW dilation, TUNA_PH/PW padding) and the channel multiplier
// TUNA_MULT are compile-time, so each thread's window is fully unrolled: which input position
// feeds which output and tap is decided by the compiler, and no position is loaded twice by a
// thread. Sizes (N, C, H, W) and the element strides of x, w, y are arguments: one build serves
// every problem with the same filter geometry and tile. TUNA_NHWC picks the thread order (below)
// and vector loads along channels; any layout is correct with THREAD_C = 1.
//
// Forward and backward data (TUNA_DIR 0 / 1): a thread owns THREAD_H x THREAD_W output pixels of
// THREAD_C channels and walks loop_h = STEPS_H * THREAD_H rows downwards in THREAD_H steps, keeping its THREAD_C x R x S
// weights in registers. NHWC threads are ordered channel vector fastest (a warp reads contiguous
// pixels' channels: 16-byte loads, full sectors), NCHW threads column fastest (a warp reads a row).
// Backward data gathers: dx pixel (h, w) takes dy(q, .) where h + PH - r*DH = q*SH, so a thread's
// tile is aligned to the stride (THREAD_H % SH == 0, THREAD_W % SW == 0) and each of its output
// positions knows its taps at compile time; phases no tap reaches get zeros.
//
// Backward weights (TUNA_DIR 2): dw[k][r][s] = sum over N*Ho*Wo of dy[k] * x[k / MULT] at the tap.
// A block is TB_CV lanes of THREAD_C channels by TB_THREADS / TB_CV pixel threads; each pixel
// thread accumulates THREAD_H x THREAD_W output tiles (strided by the block's pixel threads) over the
// block's share of the pixels (grid.y of them), then the pixel threads are summed by a fixed
// shared-memory tree. With grid.y = 1 the block writes dw; else each writes its FP32 slice of the
// workspace [grid.y][K][R*S] and tuna_dw_wrw_reduce sums the slices in slice order. Both orders
// are fixed, so re-runs give identical bits.
//
// Options: axes THREAD_H, THREAD_W, THREAD_C, TB_THREADS (F/B; STEPS_H is the loop_h argument);
// THREAD_H, THREAD_W, THREAD_C, TB_CV, TB_THREADS (W; SPLIT is the grid's y, chosen by the
// solver); derived TUNA_DIR, TUNA_DTYPE, TUNA_NHWC, TUNA_MULT, TUNA_FR, TUNA_FS, TUNA_SH,
// TUNA_SW, TUNA_DH, TUNA_DW, TUNA_PH, TUNA_PW.
#include "conv/tuna_conv_common.h"

constexpr int kR = TUNA_FR, kS = TUNA_FS;
constexpr int kSH = TUNA_SH, kSW = TUNA_SW, kDH = TUNA_DH, kDW = TUNA_DW;
constexpr int kPH = TUNA_PH, kPW = TUNA_PW;
constexpr int kMult = TUNA_MULT;
constexpr int kTw = THREAD_W, kTc = THREAD_C;
constexpr int kThreads = TB_THREADS;
constexpr int kTh = THREAD_H;
static_assert(kTc == 1 || TUNA_NHWC, "THREAD_C > 1 needs channels-last tensors");


// THREAD_C consecutive channels at p (channel stride cs) as floats: one vector load when the
// channels are contiguous (NHWC, p aligned to the vector), else one load each.
TUNA_DEVICE void dw_load(const tuna_elem* p, tuna_i64 cs, float* out) {
#if TUNA_NHWC
  (void)cs;
  tuna_load_floats<kTc>(p, out);
#else
#pragma unroll
  for (int v = 0; v < kTc; ++v) out[v] = tuna_to_float(p[v * cs]);
#endif
}

TUNA_DEVICE void dw_store(tuna_elem* p, tuna_i64 cs, const float* in) {
#if TUNA_NHWC
  (void)cs;
  if (kTc == 1) {
    p[0] = tuna_from_float<tuna_elem>(in[0]);
  } else {
    tuna_vec<tuna_elem, kTc> v;
#pragma unroll
    for (int i = 0; i < kTc; ++i) v.v[i] = tuna_from_float<tuna_elem>(in[i]);
    tuna_store_vec<tuna_elem, kTc>(p, v);
  }
#else
#pragma unroll
  for (int v = 0; v < kTc; ++v) p[v * cs] = tuna_from_float<tuna_elem>(in[v]);
#endif
}

// Input channels of output channels k0..k0+THREAD_C-1 at pixel p (forward and backward weights:
// channel k reads input channel k / MULT), zero when `inside` is false. Branch-free: a position
// outside the image loads from `safe` (a valid pixel) and is zeroed, so a thread issues all of
// its window's loads before the first multiply needs one.
TUNA_DEVICE void dw_load_in(const tuna_elem* p, const tuna_elem* safe, bool inside, tuna_i64 cs, int k0, float* out) {
  const tuna_elem* q = inside ? p : safe;
  if (kMult == 1) {
    dw_load(q, cs, out);
  } else {
#pragma unroll
    for (int v = 0; v < kTc; ++v) out[v] = tuna_to_float(q[((k0 + v) / kMult - k0 / kMult) * cs]);
  }
#pragma unroll
  for (int v = 0; v < kTc; ++v) out[v] = inside ? out[v] : 0.f;
}

// Whether window row a (column b) of a thread's THREAD_H x THREAD_W outputs feeds some output
// and tap (forward and backward weights: row i reads i*SH + r*DH, column j reads j*SW + s*DW).
TUNA_DEVICE bool dw_row_used(int a) {
#pragma unroll
  for (int i = 0; i < kTh; ++i)
#pragma unroll
    for (int r = 0; r < kR; ++r)
      if (i * kSH + r * kDH == a) return true;
  return false;
}
TUNA_DEVICE bool dw_col_used(int b) {
#pragma unroll
  for (int j = 0; j < kTw; ++j)
#pragma unroll
    for (int s = 0; s < kS; ++s)
      if (j * kSW + s * kDW == b) return true;
  return false;
}

#if TUNA_DIR == 0 || TUNA_DIR == 1

// The thread's work item: n, its block of loop_h rows, its THREAD_W column strip, its channel vector.
struct DwItem {
  int n, row_block, strip, cv;
  bool ok;
};
TUNA_DEVICE DwItem dw_item(int n_count, int cvs, int strips, int row_blocks) {
  tuna_i64 i = (tuna_i64)TUNA_BID_X * kThreads + TUNA_TID_X;
  DwItem it;
#if TUNA_NHWC
  it.cv = (int)(i % cvs), i /= cvs;
  it.strip = (int)(i % strips), i /= strips;
  it.row_block = (int)(i % row_blocks), i /= row_blocks;
#else
  it.strip = (int)(i % strips), i /= strips;
  it.row_block = (int)(i % row_blocks), i /= row_blocks;
  it.cv = (int)(i % cvs), i /= cvs;
#endif
  it.n = (int)i;
  it.ok = i < n_count;
  return it;
}

#if TUNA_DIR == 0
// y[n][k][oh][ow] = sum_{r,s} x[n][k / MULT][oh*SH - PH + r*DH][ow*SW - PW + s*DW] * w[k][r][s].
// Input rows/columns of a thread tile, relative to its first one.
constexpr int kInRows = (kTh - 1) * kSH + (kR - 1) * kDH + 1;
constexpr int kInCols = (kTw - 1) * kSW + (kS - 1) * kDW + 1;

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void tuna_dw_fwd(
    const tuna_elem* x, const tuna_elem* w, tuna_elem* y, int n_count, int k_count, int hi, int wi, int ho,
    int wo, int loop_h, tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws3,
    tuna_i64 ws4, tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4) {
  const int strips = (wo + kTw - 1) / kTw, row_blocks = (ho + loop_h - 1) / loop_h;
  const DwItem it = dw_item(n_count, k_count / kTc, strips, row_blocks);
  if (!it.ok) return;
  const int k0 = it.cv * kTc;
  float wr[kTc][kR * kS];
#pragma unroll
  for (int v = 0; v < kTc; ++v)
#pragma unroll
    for (int t = 0; t < kR * kS; ++t) wr[v][t] = tuna_to_float(w[(k0 + v) * ws0 + (t / kS) * ws3 + (t % kS) * ws4]);
  const int ow0 = it.strip * kTw, iw0 = ow0 * kSW - kPW;
  const tuna_elem* xn = x + (tuna_i64)it.n * xs0 + (tuna_i64)(k0 / kMult) * xs1;
  const int oh_end = min(ho, (it.row_block + 1) * loop_h);
  for (int oh0 = it.row_block * loop_h; oh0 < oh_end; oh0 += kTh) {
    float acc[kTh][kTw][kTc];
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int j = 0; j < kTw; ++j)
#pragma unroll
        for (int v = 0; v < kTc; ++v) acc[i][j][v] = 0.f;
    const int ih0 = oh0 * kSH - kPH;
    float win[kInRows][kInCols][kTc];  // the used positions only (the rest is never touched)
#pragma unroll
    for (int a = 0; a < kInRows; ++a)
#pragma unroll
      for (int b = 0; b < kInCols; ++b)
        if (dw_row_used(a) && dw_col_used(b)) {
          const bool inside = tuna_in_range(ih0 + a, hi) && tuna_in_range(iw0 + b, wi);
          dw_load_in(xn + (tuna_i64)(ih0 + a) * xs3 + (tuna_i64)(iw0 + b) * xs4, xn, inside, xs1, k0, win[a][b]);
        }
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int r = 0; r < kR; ++r)
#pragma unroll
        for (int j = 0; j < kTw; ++j)
#pragma unroll
          for (int s = 0; s < kS; ++s)
#pragma unroll
            for (int v = 0; v < kTc; ++v) acc[i][j][v] += win[i * kSH + r * kDH][j * kSW + s * kDW][v] * wr[v][r * kS + s];
    tuna_elem* yn = y + (tuna_i64)it.n * ys0 + (tuna_i64)k0 * ys1;
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int j = 0; j < kTw; ++j)
        if (oh0 + i < ho && ow0 + j < wo) dw_store(yn + (tuna_i64)(oh0 + i) * ys3 + (tuna_i64)(ow0 + j) * ys4, ys1, acc[i][j]);
  }
}
#endif  // TUNA_DIR == 0

#if TUNA_DIR == 1
// dx[n][c][h][w] = sum_{m < MULT} sum_{r,s} dy[n][c*MULT + m][q][p] * w[c*MULT + m][r][s] where
// h + PH - r*DH = q*SH and w + PW - s*DW = p*SW. The thread tile starts at a multiple of the
// stride, so for its row i and tap r the dy row is q0 + (i + PH - r*DH) / SH, exact or no tap.
constexpr int kE0 = TUNA_FLOORDIV(kPH - (kR - 1) * kDH, kSH), kE1 = TUNA_FLOORDIV(kTh - 1 + kPH, kSH);
constexpr int kF0 = TUNA_FLOORDIV(kPW - (kS - 1) * kDW, kSW), kF1 = TUNA_FLOORDIV(kTw - 1 + kPW, kSW);
static_assert(kTh % kSH == 0 && kTw % kSW == 0, "the thread tile must be a multiple of the stride");

// Whether dy window row e (column f) feeds some dx row i and tap r (i + PH - r*DH = e*SH).
TUNA_DEVICE bool dw_bwd_row_used(int e) {
#pragma unroll
  for (int i = 0; i < kTh; ++i)
#pragma unroll
    for (int r = 0; r < kR; ++r)
      if (i + kPH - r * kDH == e * kSH) return true;
  return false;
}
TUNA_DEVICE bool dw_bwd_col_used(int f) {
#pragma unroll
  for (int j = 0; j < kTw; ++j)
#pragma unroll
    for (int s = 0; s < kS; ++s)
      if (j + kPW - s * kDW == f * kSW) return true;
  return false;
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void tuna_dw_bwd(
    tuna_elem* x, const tuna_elem* w, const tuna_elem* y, int n_count, int c_count, int hi, int wi, int ho,
    int wo, int loop_h, tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws3,
    tuna_i64 ws4, tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4) {
  const int strips = (wi + kTw - 1) / kTw, row_blocks = (hi + loop_h - 1) / loop_h;
  const DwItem it = dw_item(n_count, c_count / kTc, strips, row_blocks);
  if (!it.ok) return;
  const int c0 = it.cv * kTc;
  float wr[kTc][kMult][kR * kS];
#pragma unroll
  for (int v = 0; v < kTc; ++v)
#pragma unroll
    for (int m = 0; m < kMult; ++m)
#pragma unroll
      for (int t = 0; t < kR * kS; ++t)
        wr[v][m][t] = tuna_to_float(w[((c0 + v) * kMult + m) * ws0 + (t / kS) * ws3 + (t % kS) * ws4]);
  const int w0 = it.strip * kTw, p0 = w0 / kSW;
  const tuna_elem* yn = y + (tuna_i64)it.n * ys0 + (tuna_i64)c0 * kMult * ys1;
  const int h_end = min(hi, (it.row_block + 1) * loop_h);
  for (int h0 = it.row_block * loop_h; h0 < h_end; h0 += kTh) {
    float acc[kTh][kTw][kTc];
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int j = 0; j < kTw; ++j)
#pragma unroll
        for (int v = 0; v < kTc; ++v) acc[i][j][v] = 0.f;
    const int q0 = h0 / kSH;
    // The dy window (used positions only), loaded branch-free before any multiply.
    float win[kE1 - kE0 + 1][kF1 - kF0 + 1][kMult][kTc];
#pragma unroll
    for (int e = kE0; e <= kE1; ++e)
#pragma unroll
      for (int f = kF0; f <= kF1; ++f)
        if (dw_bwd_row_used(e) && dw_bwd_col_used(f)) {
          const bool inside = tuna_in_range(q0 + e, ho) && tuna_in_range(p0 + f, wo);
          const tuna_elem* py = inside ? yn + (tuna_i64)(q0 + e) * ys3 + (tuna_i64)(p0 + f) * ys4 : yn;
          float(&dv)[kMult][kTc] = win[e - kE0][f - kF0];
          if (kMult == 1) {
            dw_load(py, ys1, dv[0]);
          } else {
#pragma unroll
            for (int m = 0; m < kMult; ++m)
#pragma unroll
              for (int v = 0; v < kTc; ++v) dv[m][v] = tuna_to_float(py[(v * kMult + m) * ys1]);
          }
#pragma unroll
          for (int m = 0; m < kMult; ++m)
#pragma unroll
            for (int v = 0; v < kTc; ++v) dv[m][v] = inside ? dv[m][v] : 0.f;
        }
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int r = 0; r < kR; ++r)
        if ((i + kPH - r * kDH) % kSH == 0)
#pragma unroll
          for (int j = 0; j < kTw; ++j)
#pragma unroll
            for (int s = 0; s < kS; ++s)
              if ((j + kPW - s * kDW) % kSW == 0) {
                const float(&dv)[kMult][kTc] =
                    win[TUNA_FLOORDIV(i + kPH - r * kDH, kSH) - kE0][TUNA_FLOORDIV(j + kPW - s * kDW, kSW) - kF0];
#pragma unroll
                for (int m = 0; m < kMult; ++m)
#pragma unroll
                  for (int v = 0; v < kTc; ++v) acc[i][j][v] += dv[m][v] * wr[v][m][r * kS + s];
              }
    tuna_elem* xn = x + (tuna_i64)it.n * xs0 + (tuna_i64)c0 * xs1;
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int j = 0; j < kTw; ++j)
        if (h0 + i < hi && w0 + j < wi) dw_store(xn + (tuna_i64)(h0 + i) * xs3 + (tuna_i64)(w0 + j) * xs4, xs1, acc[i][j]);
  }
}
#endif  // TUNA_DIR == 1
#endif  // TUNA_DIR == 0 || TUNA_DIR == 1

#if TUNA_DIR == 2
constexpr int kCv = TB_CV;                // channel-vector lanes of a block
constexpr int kPix = kThreads / kCv;      // pixel threads of a block (a power of two)
constexpr int kInRows = (kTh - 1) * kSH + (kR - 1) * kDH + 1;
constexpr int kInCols = (kTw - 1) * kSW + (kS - 1) * kDW + 1;
static_assert(kCv * kPix == kThreads && (kPix & (kPix - 1)) == 0, "TB_THREADS / TB_CV must be a power of two");
static_assert(kCv == 1 || TUNA_NHWC, "TB_CV > 1 needs channels-last tensors");

// grid: x = channel tiles of kCv*THREAD_C, y = pixel shares; out = dw (grid.y == 1) or the
// workspace (slice blockIdx.y of [grid.y][K][R*S] FP32). strips_per_share: ceil(strips / grid.y).
TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void tuna_dw_wrw(
    const tuna_elem* x, void* out, const tuna_elem* y, int n_count, int k_count, int hi, int wi, int ho,
    int wo, int strips_per_share, tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0,
    tuna_i64 ws3, tuna_i64 ws4, tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4) {
  TUNA_SHARED float red[kThreads * kTc];
  const int lane = TUNA_TID_X % kCv, pt = TUNA_TID_X / kCv;
  const int k0 = (TUNA_BID_X * kCv + lane) * kTc;
  const bool k_ok = k0 < k_count;
  const int row_strips = (wo + kTw - 1) / kTw, row_blocks = (ho + kTh - 1) / kTh;
  const tuna_i64 strips = (tuna_i64)n_count * row_blocks * row_strips;
  const tuna_i64 first = (tuna_i64)TUNA_BID_Y * strips_per_share;
  const tuna_i64 last = first + strips_per_share < strips ? first + strips_per_share : strips;
  float acc[kR * kS][kTc];
#pragma unroll
  for (int t = 0; t < kR * kS; ++t)
#pragma unroll
    for (int v = 0; v < kTc; ++v) acc[t][v] = 0.f;
  for (tuna_i64 sidx = first + pt; k_ok && sidx < last; sidx += kPix) {
    const int strip = (int)(sidx % row_strips);
    const tuna_i64 rest = sidx / row_strips;
    const int oh0 = (int)(rest % row_blocks) * kTh, n = (int)(rest / row_blocks);
    const int ow0 = strip * kTw;
    const tuna_elem* yn = y + (tuna_i64)n * ys0 + (tuna_i64)k0 * ys1;
    const tuna_elem* xn = x + (tuna_i64)n * xs0 + (tuna_i64)(k0 / kMult) * xs1;
    const int ih0 = oh0 * kSH - kPH, iw0 = ow0 * kSW - kPW;
    // Every load of the tile is issued before the multiplies (branch-free, zero outside).
    float dv[kTh][kTw][kTc];
#pragma unroll
    for (int i = 0; i < kTh; ++i)
#pragma unroll
      for (int j = 0; j < kTw; ++j) {
        const bool inside = oh0 + i < ho && ow0 + j < wo;
        dw_load(inside ? yn + (tuna_i64)(oh0 + i) * ys3 + (tuna_i64)(ow0 + j) * ys4 : yn, ys1, dv[i][j]);
#pragma unroll
        for (int v = 0; v < kTc; ++v) dv[i][j][v] = inside ? dv[i][j][v] : 0.f;
      }
#pragma unroll
    for (int a = 0; a < kInRows; ++a) {
      if (!dw_row_used(a)) continue;  // compile-time
      const bool row_in = tuna_in_range(ih0 + a, hi);
      float win[kInCols][kTc];
#pragma unroll
      for (int b = 0; b < kInCols; ++b)
        if (dw_col_used(b)) {
          const bool inside = row_in && tuna_in_range(iw0 + b, wi);
          dw_load_in(xn + (tuna_i64)(ih0 + a) * xs3 + (tuna_i64)(iw0 + b) * xs4, xn, inside, xs1, k0, win[b]);
        }
#pragma unroll
      for (int i = 0; i < kTh; ++i)
#pragma unroll
        for (int r = 0; r < kR; ++r)
          if (i * kSH + r * kDH == a)
#pragma unroll
            for (int j = 0; j < kTw; ++j)
#pragma unroll
              for (int s = 0; s < kS; ++s)
#pragma unroll
                for (int v = 0; v < kTc; ++v) acc[r * kS + s][v] += dv[i][j][v] * win[j * kSW + s * kDW][v];
    }
  }
  // Sum the pixel threads of each lane, tap by tap, in a fixed tree order.
  const bool partial = TUNA_GDIM_Y > 1;
  for (int t = 0; t < kR * kS; ++t) {
#pragma unroll
    for (int v = 0; v < kTc; ++v) red[(pt * kCv + lane) * kTc + v] = acc[t][v];
    TUNA_SYNC();
    for (int half = kPix / 2; half > 0; half /= 2) {
      if (pt < half) {
#pragma unroll
        for (int v = 0; v < kTc; ++v) red[(pt * kCv + lane) * kTc + v] += red[((pt + half) * kCv + lane) * kTc + v];
      }
      TUNA_SYNC();
    }
    if (pt == 0 && k_ok) {
#pragma unroll
      for (int v = 0; v < kTc; ++v) {
        const float s = red[lane * kTc + v];
        if (partial) {
          static_cast<float*>(out)[((tuna_i64)TUNA_BID_Y * k_count + k0 + v) * (kR * kS) + t] = s;
        } else {
          static_cast<tuna_elem*>(out)[(k0 + v) * ws0 + (t / kS) * ws3 + (t % kS) * ws4] = tuna_from_float<tuna_elem>(s);
        }
      }
    }
    TUNA_SYNC();
  }
}

// dw[k][r][s] = sum over slices in order of ws[slice][k][r*S + s]; one thread per element.
TUNA_GLOBAL void tuna_dw_wrw_reduce(const float* ws, tuna_elem* w, int k_count, int slices, tuna_i64 ws0,
                                    tuna_i64 ws3, tuna_i64 ws4) {
  const tuna_i64 e = (tuna_i64)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X;
  const tuna_i64 total = (tuna_i64)k_count * kR * kS;
  if (e >= total) return;
  float s = 0.f;
  for (int i = 0; i < slices; ++i) s += ws[i * total + e];
  const int k = (int)(e / (kR * kS)), t = (int)(e % (kR * kS));
  w[k * ws0 + (t / kS) * ws3 + (t % kS) * ws4] = tuna_from_float<tuna_elem>(s);
}
#endif  // TUNA_DIR == 2
