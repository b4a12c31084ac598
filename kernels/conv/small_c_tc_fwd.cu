// Direct forward convolution for thin inputs (C/G <= 8: RGB stems, thin grouped layers) on the
// tensor cores, FP16/BF16 with FP32 accumulation (CUDA sm_80+: mma.sync m16n8k16), the kernel of
// TunaSmallCTcFwd (tuner_core/solver/conv/gpu_small_c_tc_fwd.cc).
//
// As a GEMM: M = output pixels, N = output channels, K = R x S x C/G taps ordered (r, s, c), c
// fastest. An implicit GEMM pads C to a vector width per tap (3 -> 8: 2.7x the work for a 7x7 RGB
// stem); here only the whole reduction is padded to 16 (147 -> 160). A block stages its input
// patch once, channels-last in shared memory (row pitch TB_W' x C/G halves, where TB_W' is the
// patch width), so an output pixel's taps of one filter row are a run of S x C/G halves at a fixed
// offset from the pixel's corner: A fragments are read straight from the patch (no im2col copy)
// through a table of per-tap offsets, B fragments from the filter slice stored in fragment order
// (one 8-byte load per lane), and the accumulators leave through shared memory as 16-byte rows.
//
// Persistent: grid.x blocks stride over the N x ceil(Ho/TB_H) x ceil(Wo/TB_W) pixel tiles
// (columns fastest), grid.y = groups x ceil(K/G / TB_N) channel tiles, so each block stages its
// filter slice once; the loads of a block's next patch are in flight while it computes the current
// one (at most 64 elements per thread in registers). A block has (TB_H * TB_W / WARP_M) x
// (TB_N / WARP_N) warps; a warp owns WARP_M pixels x WARP_N channels as (WARP_M/16) x (WARP_N/8)
// m16n8k16 accumulators.
//
// Options: axes TB_H, TB_W, TB_N, WARP_M, WARP_N, A_PAIRS (1: the patch staged as 32-bit pairs of
// neighbouring elements and each filter row's taps padded to even, so an A register is one 4-byte
// load instead of two 2-byte loads; needs DW = 1 or C/G even); derived TUNA_DTYPE (1 fp16, 2 bf16),
// TUNA_CG (C/G), TUNA_FR, TUNA_FS, TUNA_SH, TUNA_SW, TUNA_DH, TUNA_DW, TUNA_PH, TUNA_PW, TUNA_NHWC (x
// channels-last: the staging order), TUNA_XROWS (x's patch rows contiguous: staged by rows),
// TUNA_Y_NHWC (y channels-last: the store order) and TUNA_YVEC
// (y channels-last, K/G % 8 == 0 and aligned: 16-byte stores).
//
// Entry tuna_small_c_tc_fwd(x, w, y, hi, wi, ho, wo, kg, k_tiles, tiles, xs0, xs1, xs3, xs4, ws0,
// ws1, ws3, ws4, ys0, ys1, ys3, ys4): strides in elements (n, c, h, w of x; k, c, r, s of w; n, k,
// h, w of y); one image of x and of y below 2^31 elements (32-bit offsets within an image).
// Dynamic shared memory: the layout below (kWBytes, kKoffBytes, then the stage); the solver's
// SharedBytes computes the same.
#include "common/portability.h"
#include "conv/mma_sync_ops.h"

#if !defined(TUNA_BACKEND_CUDA)
#error "small_c_tc_fwd.cu needs CUDA (mma.sync)"
#endif

typedef unsigned short tuna_b16;  // FP16 or BF16 bits: the kernel moves them, the tensor cores read them

constexpr int kCg = TUNA_CG, kR = TUNA_FR, kS = TUNA_FS;
constexpr int kSH = TUNA_SH, kSW = TUNA_SW, kDH = TUNA_DH, kDW = TUNA_DW, kPH = TUNA_PH, kPW = TUNA_PW;
constexpr int kTbH = TB_H, kTbW = TB_W, kTbN = TB_N, kWarpM = WARP_M, kWarpN = WARP_N;
constexpr int kM = kTbH * kTbW;  // pixels of a tile
constexpr int kWarpsM = kM / kWarpM, kWarpsN = kTbN / kWarpN;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;
constexpr int kMSub = kWarpM / 16, kNSub = kWarpN / 8;
#if A_PAIRS
static_assert(kDW == 1 || kCg % 2 == 0, "A_PAIRS needs every even tap's neighbour next to it in the patch");
constexpr int kRun = (kS * kCg + 1) / 2 * 2;  // taps of a filter row, padded to even: pairs never span rows
#else
constexpr int kRun = kS * kCg;
#endif
constexpr int kKdim = kR * kRun;  // taps, padding within rows included
constexpr int kKSteps = (kKdim + 15) / 16;
constexpr int kKPad = 16 * kKSteps;
constexpr int kInRows = (kTbH - 1) * kSH + (kR - 1) * kDH + 1;
constexpr int kInCols = (kTbW - 1) * kSW + (kS - 1) * kDW + 1;
constexpr int kPitch = kInCols * kCg;  // halves per patch row
constexpr int kPatch = kInRows * kPitch;
constexpr int kYPitch = kTbN + 8;  // halves per staged output pixel: 8 pixels x 4 lanes on distinct banks
// Shared memory: the filter slice in fragment order, the tap offsets, then the patch (a 32-bit pair
// per element with A_PAIRS), which the output tile (kM x kYPitch halves) reuses once the MMAs are
// done; the solver sizes the launch's dynamic shared memory the same way.
constexpr int kWBytes = kKPad * kTbN * 2;
constexpr int kKoffBytes = kKPad * 4 / (A_PAIRS ? 2 : 1);
static_assert(kM % kWarpM == 0 && kTbN % kWarpN == 0, "tile not divisible by the warp tile");
static_assert(kWarpM % 16 == 0 && kWarpN % 8 == 0 && kTbN % 8 == 0, "warp tile of whole m16n8 fragments");
static_assert(kCg >= 1 && kCg <= 8, "C/G must be 1..8");


struct SctcArgs {
  const tuna_b16* x;
  const tuna_b16* w;
  tuna_b16* y;
  int hi, wi, ho, wo, kg, tiles_h, tiles_w;
  tuna_i64 xs0, ys0;
  int xs1, xs3, xs4, ys1, ys3, ys4;
};

// Tap k of the reduction as filter row r, column s, channel c; false for the padding taps.
TUNA_DEVICE bool sctc_tap(int k, int& r, int& s, int& c) {
  r = k / kRun;
  const int j = k % kRun;
  s = j / kCg, c = j % kCg;
  return r < kR && j < kS * kCg;
}

// The filter slice of group g, channels k0.. into shared memory in m16n8k16 B-fragment order:
// u16 index (((ks * TB_N/8 + nt) * 32 + lane) * 2 + reg) * 2 + e holds tap k = 16 ks + 8 reg +
// 2 (lane % 4) + e of channel 8 nt + lane / 4 (zero past the taps and past K/G), read in that
// order. Reading the taps fastest instead (coalesced in a KRSC filter, the shared stores
// scattered) measured 3-7 % slower on the stems (H200, 2026-12-03, A/B in one call), though each
// block stages its slice only once.
TUNA_DEVICE void sctc_stage_w(const SctcArgs& a, tuna_i64 ws0, tuna_i64 ws1, tuna_i64 ws3, tuna_i64 ws4, int g,
                              int k0, tuna_b16* sw) {
  constexpr int kBatch = 16;  // loads in flight per thread before their stores
  for (int base = 0; base < kKPad * kTbN; base += kBatch * kThreads) {
    tuna_b16 v[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = base + j * kThreads + TUNA_TID_X;
      const int e = i & 1, reg = (i >> 1) & 1, lane = (i >> 2) & 31, nt = (i >> 7) % (kTbN / 8);
      const int ks = (i >> 7) / (kTbN / 8);
      const int n = nt * 8 + lane / 4, k = ks * 16 + reg * 8 + (lane % 4) * 2 + e;
      int r, s, c;
      v[j] = 0;
      if (i < kKPad * kTbN && sctc_tap(k, r, s, c) && k0 + n < a.kg) {
        v[j] = a.w[(tuna_i64)(g * a.kg + k0 + n) * ws0 + (tuna_i64)c * ws1 + (tuna_i64)r * ws3 + (tuna_i64)s * ws4];
      }
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const int i = base + j * kThreads + TUNA_TID_X;
      if (i < kKPad * kTbN) sw[i] = v[j];
    }
  }
}

// Offsets of the taps from a pixel's corner in the patch (elements). A_PAIRS 0: koff[k] per tap,
// -1 for padding. A_PAIRS 1: one per pair of taps (2i, 2i + 1), stored where a lane reads both of
// its pairs of a k-step in one 8-byte load: index (ks * 4 + q) * 2 + h holds the pair of taps
// 16 ks + 2q + 8h; padding pairs point at the corner (finite data that meets zero weights).
TUNA_DEVICE void sctc_stage_koff(int* koff) {
#if A_PAIRS
  for (int i = TUNA_TID_X; i < kKPad / 2; i += kThreads) {
    const int h = i % 2, q = (i / 2) % 4, ks = i / 8;
    int r, s, c;
    const bool tap = sctc_tap(ks * 16 + 2 * q + 8 * h, r, s, c);
    koff[i] = tap ? r * kDH * kPitch + s * kDW * kCg + c : 0;
  }
#else
  for (int k = TUNA_TID_X; k < kKPad; k += kThreads) {
    int r, s, c;
    koff[k] = sctc_tap(k, r, s, c) ? r * kDH * kPitch + s * kDW * kCg + c : -1;
  }
#endif
}

// A tile's image n and first output row and column (tiles: columns fastest, then rows, then images).
struct SctcTile {
  int n, oh0, ow0;
};
TUNA_DEVICE SctcTile sctc_tile(const SctcArgs& a, int t) {
  return {t / (a.tiles_w * a.tiles_h), ((t / a.tiles_w) % a.tiles_h) * kTbH, (t % a.tiles_w) * kTbW};
}

#ifndef TUNA_XROWS
#define TUNA_XROWS 0
#endif
#if TUNA_XROWS
// x's patch rows are contiguous in memory (channels-last, the channel stride 1 and the column
// stride C/G: one group): warp w loads rows w, w + warps, ..., its lanes consecutive elements of a
// row, so an element costs a range check and a load, not a three-way index decode.
constexpr int kWarps = kThreads / 32;
constexpr int kRowsPerWarp = (kInRows + kWarps - 1) / kWarps;
constexpr int kRowLoads = (kPitch + 31) / 32;
constexpr int kPatchLoads = kRowsPerWarp * kRowLoads;

TUNA_DEVICE void sctc_load_x(const SctcArgs& a, const SctcTile& t, int g, tuna_b16 (&v)[kPatchLoads]) {
  const int ih0 = t.oh0 * kSH - kPH, iw0 = t.ow0 * kSW - kPW;
  const int warp = TUNA_TID_X / 32, lane = TUNA_TID_X % 32;
  // The row elements inside the image: columns [lo, hi) of the patch, as element offsets.
  const int lo = (iw0 < 0 ? -iw0 : 0) * kCg, hi = (a.wi - iw0 < kInCols ? a.wi - iw0 : kInCols) * kCg;
  const tuna_b16* xb = a.x + (tuna_i64)t.n * a.xs0 + (tuna_i64)(g * kCg) * a.xs1 + (tuna_i64)iw0 * kCg;
#pragma unroll
  for (int rr = 0; rr < kRowsPerWarp; ++rr) {
    const int row = warp + rr * kWarps, ih = ih0 + row;
    const bool row_in = row < kInRows && (unsigned)ih < (unsigned)a.hi;
#pragma unroll
    for (int j = 0; j < kRowLoads; ++j) {
      const int e = lane + 32 * j;
      v[rr * kRowLoads + j] = 0;
      if (row_in && e >= lo && e < hi) v[rr * kRowLoads + j] = xb[(tuna_i64)ih * a.xs3 + e];
    }
  }
}

// Patch element (row, e) of load (rr, j) of this thread: the destination, or -1 past the patch.
TUNA_DEVICE int sctc_patch_dst(int rr, int j) {
  const int row = TUNA_TID_X / 32 + rr * kWarps, e = TUNA_TID_X % 32 + 32 * j;
  return row < kInRows && e < kPitch ? row * kPitch + e : -1;
}
#define TUNA_SCTC_DST(j) sctc_patch_dst((j) / kRowLoads, (j) % kRowLoads)
#else
// Patch element i (i < kPatch) of this thread's share in x's memory order: row, column, channel.
TUNA_DEVICE void sctc_patch_pos(int i, int& row, int& col, int& c) {
#if TUNA_NHWC
  c = i % kCg, col = (i / kCg) % kInCols, row = i / kPitch;
#else
  col = i % kInCols, row = (i / kInCols) % kInRows, c = i / (kInCols * kInRows);
#endif
}

// The thread's share of a tile's input patch (elements j * threads + tid), loaded into registers
// (zero outside the image), so the loads of the next tile are in flight while this one computes.
constexpr int kPatchLoads = (kPatch + kThreads - 1) / kThreads;
TUNA_DEVICE void sctc_load_x(const SctcArgs& a, const SctcTile& t, int g, tuna_b16 (&v)[kPatchLoads]) {
  const int ih0 = t.oh0 * kSH - kPH, iw0 = t.ow0 * kSW - kPW;
  const tuna_b16* xb = a.x + (tuna_i64)t.n * a.xs0 + (tuna_i64)(g * kCg) * a.xs1;
#pragma unroll
  for (int j = 0; j < kPatchLoads; ++j) {
    const int i = j * kThreads + TUNA_TID_X;
    int row, col, c;
    sctc_patch_pos(i, row, col, c);
    const int ih = ih0 + row, iw = iw0 + col;
    v[j] = 0;
    if (i < kPatch && (unsigned)ih < (unsigned)a.hi && (unsigned)iw < (unsigned)a.wi) v[j] = xb[c * a.xs1 + ih * a.xs3 + iw * a.xs4];
  }
}

// Patch element j * threads + tid: its destination, or -1 past the patch.
TUNA_DEVICE int sctc_patch_dst_of(int i) {
  if (i >= kPatch) return -1;
  int row, col, c;
  sctc_patch_pos(i, row, col, c);
  return row * kPitch + col * kCg + c;
}
#define TUNA_SCTC_DST(j) sctc_patch_dst_of((j) * kThreads + TUNA_TID_X)
#endif

static_assert(kPatchLoads <= 64, "at most 64 patch elements per thread in registers");

// The loaded share into the patch as [row][col][c] (A_PAIRS: element e as the low half of 32-bit
// word e and the high half of word e - 1, so word e holds elements e and e + 1; the last word's
// high half is zero).
TUNA_DEVICE void sctc_store_x(const tuna_b16 (&v)[kPatchLoads], tuna_b16* sx) {
#pragma unroll
  for (int j = 0; j < kPatchLoads; ++j) {
    const int dst = TUNA_SCTC_DST(j);
    if (dst < 0) continue;
#if A_PAIRS
    sx[2 * dst] = v[j];
    if (dst > 0) sx[2 * dst - 1] = v[j];
#else
    sx[dst] = v[j];
#endif
  }
#if A_PAIRS
  if (TUNA_TID_X == 0) sx[2 * kPatch - 1] = 0;
#endif
}

// Two patch halves at pixel corner p, taps o0 and o1, packed (o < 0: the zero padding taps).
TUNA_DEVICE unsigned sctc_pair(const tuna_b16* sx, int p, int o0, int o1, bool masked) {
  const unsigned lo = masked && o0 < 0 ? 0u : sx[p + o0];
  const unsigned hi = masked && o1 < 0 ? 0u : sx[p + o1];
  return lo | (hi << 16);
}

// The warp's accumulators over every tap of the staged patch.
TUNA_DEVICE void sctc_mainloop(const tuna_b16* sx, const unsigned* sw, const int* koff, int wm, int wn, int lane,
                               float (&acc)[kMSub][kNSub][4]) {
  int corner[kMSub][2];  // patch offsets of the lane's two pixel rows of each m16 fragment
#pragma unroll
  for (int ms = 0; ms < kMSub; ++ms)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int p = wm * kWarpM + ms * 16 + lane / 4 + 8 * h;
      corner[ms][h] = (p / kTbW) * kSH * kPitch + (p % kTbW) * kSW * kCg;
#pragma unroll
      for (int nt = 0; nt < kNSub; ++nt) acc[ms][nt][2 * h] = acc[ms][nt][2 * h + 1] = 0.f;
    }
  const int q = lane % 4;
#pragma unroll 2  // the next k-step's offset, B and A loads overlap this one's MMAs
  for (int ks = 0; ks < kKSteps; ++ks) {
#if A_PAIRS
    const int2 o = reinterpret_cast<const int2*>(koff)[ks * 4 + q];  // pairs from taps 2q and 2q + 8
    const unsigned* sx2 = reinterpret_cast<const unsigned*>(sx);
#else
    const bool masked = kKdim % 16 != 0 && ks == kKSteps - 1;
    const int2 lo = reinterpret_cast<const int2*>(koff)[ks * 8 + q];      // taps 2q, 2q + 1
    const int2 hi = reinterpret_cast<const int2*>(koff)[ks * 8 + 4 + q];  // taps 2q + 8, 2q + 9
    const int o0 = lo.x, o1 = lo.y, o8 = hi.x, o9 = hi.y;
#endif
    uint2 b[kNSub];
#pragma unroll
    for (int nt = 0; nt < kNSub; ++nt) b[nt] = reinterpret_cast<const uint2*>(sw)[(ks * (kTbN / 8) + wn * kNSub + nt) * 32 + lane];
#pragma unroll
    for (int ms = 0; ms < kMSub; ++ms) {
      unsigned af[4];
#if A_PAIRS
      af[0] = sx2[corner[ms][0] + o.x];
      af[1] = sx2[corner[ms][1] + o.x];
      af[2] = sx2[corner[ms][0] + o.y];
      af[3] = sx2[corner[ms][1] + o.y];
#else
      af[0] = sctc_pair(sx, corner[ms][0], o0, o1, masked);
      af[1] = sctc_pair(sx, corner[ms][1], o0, o1, masked);
      af[2] = sctc_pair(sx, corner[ms][0], o8, o9, masked);
      af[3] = sctc_pair(sx, corner[ms][1], o8, o9, masked);
#endif
#pragma unroll
      for (int nt = 0; nt < kNSub; ++nt) tuna_mma(acc[ms][nt], af, b[nt].x, b[nt].y);
    }
  }
}

// The accumulators, rounded, into the staged output tile [pixel][channel].
TUNA_DEVICE void sctc_stage_y(const float (&acc)[kMSub][kNSub][4], int wm, int wn, int lane, unsigned* sy) {
#pragma unroll
  for (int ms = 0; ms < kMSub; ++ms)
#pragma unroll
    for (int nt = 0; nt < kNSub; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int p = wm * kWarpM + ms * 16 + lane / 4 + 8 * h;
        const int n = wn * kWarpN + nt * 8 + (lane % 4) * 2;
        sy[(p * kYPitch + n) / 2] = tuna_pack2(acc[ms][nt][2 * h], acc[ms][nt][2 * h + 1]);
      }
}

// The staged output tile to y: 16-byte runs of 8 channels where y allows, else element by
// element in y's memory order.
TUNA_DEVICE void sctc_store_y(const SctcArgs& a, int n, int g, int k0, int oh0, int ow0, const tuna_b16* sy) {
  tuna_b16* yb = a.y + (tuna_i64)n * a.ys0 + (tuna_i64)(g * a.kg) * a.ys1;
#if TUNA_YVEC
  constexpr int kChunks = kTbN / 8;
  for (int i = TUNA_TID_X; i < kM * kChunks; i += kThreads) {
    const int p = i / kChunks, ch = (i % kChunks) * 8;
    const int oh = oh0 + p / kTbW, ow = ow0 + p % kTbW, kk = k0 + ch;
    if (oh < a.ho && ow < a.wo && kk < a.kg) {
      *reinterpret_cast<uint4*>(yb + kk + oh * a.ys3 + ow * a.ys4) =
          *reinterpret_cast<const uint4*>(sy + p * kYPitch + ch);
    }
  }
#else
  for (int i = TUNA_TID_X; i < kM * kTbN; i += kThreads) {
#if TUNA_Y_NHWC
    const int p = i / kTbN, nn = i % kTbN;
#else
    const int p = i % kM, nn = i / kM;
#endif
    const int oh = oh0 + p / kTbW, ow = ow0 + p % kTbW, kk = k0 + nn;
    if (oh < a.ho && ow < a.wo && kk < a.kg) yb[kk * a.ys1 + oh * a.ys3 + ow * a.ys4] = sy[p * kYPitch + nn];
  }
#endif
}

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void tuna_small_c_tc_fwd(
    const tuna_b16* x, const tuna_b16* w, tuna_b16* y, int hi, int wi, int ho, int wo, int kg, int k_tiles, int tiles,
    tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws1, tuna_i64 ws3, tuna_i64 ws4,
    tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4) {
  TUNA_DYNAMIC_SHARED(unsigned char, smem);
  tuna_b16* sw = reinterpret_cast<tuna_b16*>(smem);
  int* koff = reinterpret_cast<int*>(smem + kWBytes);
  tuna_b16* stage = reinterpret_cast<tuna_b16*>(smem + kWBytes + kKoffBytes);
  const int tiles_w = (wo + kTbW - 1) / kTbW, tiles_h = (ho + kTbH - 1) / kTbH;
  const SctcArgs a = {x,   w,   y,         hi,        wi,        ho,        wo,        kg,       tiles_h,
                      tiles_w, xs0, ys0, (int)xs1, (int)xs3, (int)xs4, (int)ys1, (int)ys3, (int)ys4};
  const int g = TUNA_BID_Y / k_tiles, k0 = (TUNA_BID_Y % k_tiles) * kTbN;
  tuna_b16 v[kPatchLoads];
  if (TUNA_BID_X < tiles) sctc_load_x(a, sctc_tile(a, TUNA_BID_X), g, v);  // in flight with the filter's
  sctc_stage_w(a, ws0, ws1, ws3, ws4, g, k0, sw);
  sctc_stage_koff(koff);
  const int warp = TUNA_TID_X / 32, lane = TUNA_TID_X % 32;
  const int wm = warp % kWarpsM, wn = warp / kWarpsM;
  for (int t = TUNA_BID_X; t < tiles; t += TUNA_GDIM_X) {
    const SctcTile cur = sctc_tile(a, t);
    TUNA_SYNC();  // the previous tile's output rows are stored (and the filter slice staged)
    sctc_store_x(v, stage);
    TUNA_SYNC();
    if (t + TUNA_GDIM_X < tiles) sctc_load_x(a, sctc_tile(a, t + TUNA_GDIM_X), g, v);  // in flight meanwhile
    float acc[kMSub][kNSub][4];
    sctc_mainloop(stage, reinterpret_cast<const unsigned*>(sw), koff, wm, wn, lane, acc);
    TUNA_SYNC();  // every warp is done with the patch: the output tile takes its place
    sctc_stage_y(acc, wm, wn, lane, reinterpret_cast<unsigned*>(stage));
    TUNA_SYNC();
    sctc_store_y(a, cur.n, g, k0, cur.oh0, cur.ow0, stage);
  }
}
