// The body of TunaSmallCFwd's direct forward convolution for thin inputs (C/G <= 8), shared by the
// GPU kernel (conv/small_c_fwd.cu, CUDA and HIP) and its CPU twin (cpu_conv/small_c_fwd.cc), which
// runs a block's "threads" one after another. The includer provides tuna_elem, TUNA_DEVICE,
// tuna_in_range, tuna_to_float / tuna_from_float and, when TUNA_SC_VECTOR_IO is 1, tuna_vec.
//
// A block owns a TB_H x TB_W tile of output pixels of one image and TB_K output channels of one
// group. It stages, as FP32 in shared memory, the input patch those pixels read
// ((TB_H-1)*SH + (R-1)*DH + 1 rows x (TB_W-1)*SW + (S-1)*DW + 1 columns x C/G channels, zero
// outside the image; one plane per channel) and the filter slice (R x S x C/G x TB_K, channels
// fastest), then each thread computes PIX pixels (strided by the block's pixel threads, so a warp's
// stores cover consecutive pixels) x K_PER_THREAD channels in FP32 registers and writes each
// output element once (no atomics, no workspace). Thread order: with a channels-last y the
// K_PER_THREAD channel groups of a pixel are adjacent threads (one pixel's channels are contiguous
// stores), else the pixel threads are.
//
// Options: axes TB_H, TB_W, TB_K, K_PER_THREAD, PIX, UNROLL_R (1: the filter rows unrolled too;
// 0, the search's builds: a loop over them, ~10x shorter to compile, the rest unrolled as
// before); derived TUNA_DTYPE, TUNA_CG (C/G), TUNA_FR,
// TUNA_FS, TUNA_SH, TUNA_SW, TUNA_DH, TUNA_DW, TUNA_PH, TUNA_PW, TUNA_NHWC (x channels-last: the
// staging order), TUNA_Y_NHWC (y channels-last: the thread order) and TUNA_YVEC (y channels-last and
// K/G a multiple of K_PER_THREAD: vector stores).
#pragma once

#ifndef TUNA_SC_VECTOR_IO
#define TUNA_SC_VECTOR_IO 1
#endif
#ifndef UNROLL_R
#define UNROLL_R 1
#endif
#if defined(__CUDACC__) || defined(__HIPCC__) || defined(__HIP__)
#define TUNA_SC_UNROLL _Pragma("unroll")
#if UNROLL_R
#define TUNA_SC_UNROLL_R _Pragma("unroll")
#else
#define TUNA_SC_UNROLL_R _Pragma("unroll 1")
#endif
#else
#define TUNA_SC_UNROLL
#define TUNA_SC_UNROLL_R
#endif

constexpr int kScR = TUNA_FR, kScS = TUNA_FS, kScCg = TUNA_CG;
constexpr int kScSH = TUNA_SH, kScSW = TUNA_SW, kScDH = TUNA_DH, kScDW = TUNA_DW;
constexpr int kScPH = TUNA_PH, kScPW = TUNA_PW;
constexpr int kScTbH = TB_H, kScTbW = TB_W, kScTbK = TB_K, kScKpt = K_PER_THREAD, kScPix = PIX;
constexpr int kScKThreads = kScTbK / kScKpt;                 // channel groups of a pixel
constexpr int kScPixThreads = kScTbH * kScTbW / kScPix;      // pixel threads
constexpr int kScThreads = kScKThreads * kScPixThreads;      // the block
constexpr int kScInRows = (kScTbH - 1) * kScSH + (kScR - 1) * kScDH + 1;
constexpr int kScInCols = (kScTbW - 1) * kScSW + (kScS - 1) * kScDW + 1;
constexpr int kScPlane = (kScInRows * kScInCols) | 1;  // odd: the channel planes start in different banks
constexpr int kScXFloats = kScCg * kScPlane;
constexpr int kScXStaged = kScCg * kScInRows * kScInCols;
constexpr int kScWFloats = kScR * kScS * kScCg * kScTbK;
static_assert(kScTbK % kScKpt == 0 && (kScTbH * kScTbW) % kScPix == 0, "tile not divisible by the thread tile");
static_assert(kScCg >= 1 && kScCg <= 8, "C/G must be 1..8");

// Sizes and element strides (n, c, h, w of x; k, c, r, s of w; n, k, h, w of y).
struct ScArgs {
  const tuna_elem* x;
  const tuna_elem* w;
  tuna_elem* y;
  int hi, wi, ho, wo, kg, k_tiles;
  tuna_i64 xs0, xs1, xs3, xs4, ws0, ws1, ws3, ws4, ys0, ys1, ys3, ys4;
};

// The block's tile: image n, first output row / column, group g, first channel k0 within the group.
struct ScBlock {
  int n, oh0, ow0, g, k0;
};

// grid.x = N x row tiles x column tiles (columns fastest), grid.y = groups x channel tiles.
TUNA_DEVICE ScBlock sc_block(const ScArgs& a, int bx, int by) {
  const int tiles_w = (a.wo + kScTbW - 1) / kScTbW, tiles_h = (a.ho + kScTbH - 1) / kScTbH;
  ScBlock b;
  b.ow0 = (bx % tiles_w) * kScTbW;
  bx /= tiles_w;
  b.oh0 = (bx % tiles_h) * kScTbH;
  b.n = bx / tiles_h;
  b.g = by / a.k_tiles;
  b.k0 = (by % a.k_tiles) * kScTbK;
  return b;
}

// Patch element i (i < kScXStaged) into sx[c][row][col]; in x's memory order, so consecutive
// threads read consecutive addresses.
TUNA_DEVICE void sc_stage_x(const ScArgs& a, const ScBlock& b, int i, float* sx) {
#if TUNA_NHWC
  const int c = i % kScCg, col = (i / kScCg) % kScInCols, row = i / (kScCg * kScInCols);
#else
  const int col = i % kScInCols, row = (i / kScInCols) % kScInRows, c = i / (kScInCols * kScInRows);
#endif
  const int ih = b.oh0 * kScSH - kScPH + row, iw = b.ow0 * kScSW - kScPW + col;
  float v = 0.f;
  if (tuna_in_range(ih, a.hi) && tuna_in_range(iw, a.wi)) {
    v = tuna_to_float(a.x[(tuna_i64)b.n * a.xs0 + (tuna_i64)(b.g * kScCg + c) * a.xs1 + (tuna_i64)ih * a.xs3 +
                          (tuna_i64)iw * a.xs4]);
  }
  sx[c * kScPlane + row * kScInCols + col] = v;
}

// Filter element i (i < kScWFloats) into sw[r][s][c][k]; zero past the group's channels.
TUNA_DEVICE void sc_stage_w(const ScArgs& a, const ScBlock& b, int i, float* sw) {
  const int k = i % kScTbK, t = i / kScTbK;
  const int c = t % kScCg, rs = t / kScCg;
  float v = 0.f;
  if (b.k0 + k < a.kg) {
    v = tuna_to_float(a.w[(tuna_i64)(b.g * a.kg + b.k0 + k) * a.ws0 + (tuna_i64)c * a.ws1 +
                          (tuna_i64)(rs / kScS) * a.ws3 + (tuna_i64)(rs % kScS) * a.ws4]);
  }
  sw[i] = v;
}

// K_PER_THREAD filter values of one tap and channel.
TUNA_DEVICE void sc_load_w(const float* p, float* out) {
#if TUNA_SC_VECTOR_IO
  if (kScKpt % 4 == 0) {
    TUNA_SC_UNROLL
    for (int j = 0; j < kScKpt; j += 4) {
      const tuna_vec<float, 4> v = tuna_load_vec<float, 4>(p + j);
      TUNA_SC_UNROLL
      for (int e = 0; e < 4; ++e) out[j + e] = v.v[e];
    }
    return;
  }
#endif
  TUNA_SC_UNROLL
  for (int j = 0; j < kScKpt; ++j) out[j] = p[j];
}

#if TUNA_SC_VECTOR_IO
TUNA_DEVICE tuna_u32 sc_bits(tuna_half v) { return v.bits; }
TUNA_DEVICE tuna_u32 sc_bits(tuna_bf16 v) { return v.bits; }
TUNA_DEVICE tuna_u32 sc_bits(float v) { return tuna_float_as_u32(v); }  // not reached (16-bit types only)

// Two FP32 values rounded (to nearest even) to 16-bit elements, lo in the low half: one cvt on
// sm_80+ (the struct-wise conversion left ptxas a local-memory word at some tiles).
TUNA_DEVICE tuna_u32 sc_pack2(float lo, float hi) {
#if defined(TUNA_BACKEND_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && TUNA_DTYPE != 0
  tuna_u32 r;
#if TUNA_DTYPE == 1
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#else
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
#endif
  return r;
#else
  return sc_bits(tuna_from_float<tuna_elem>(lo)) | (sc_bits(tuna_from_float<tuna_elem>(hi)) << 16);
#endif
}
#endif

// One pixel's K_PER_THREAD channels at q (channel stride cs), those below `valid` only unless
// the stores are vectors (then all are valid).
TUNA_DEVICE void sc_store(tuna_elem* q, tuna_i64 cs, int valid, const float* acc) {
#if TUNA_YVEC && TUNA_SC_VECTOR_IO
  (void)cs, (void)valid;
  if (sizeof(tuna_elem) == 2 && kScKpt % 2 == 0) {
    // 16-bit pairs packed into words: a vector of 16-bit structs built element by element goes
    // through local memory (ptxas, K_PER_THREAD 4).
    constexpr int kWords = kScKpt >= 2 ? kScKpt / 2 : 1, kVecW = kWords <= 4 ? kWords : 4;
    TUNA_SC_UNROLL
    for (int j = 0; j < kWords; j += kVecW) {
      tuna_vec<tuna_u32, kVecW> v;
      TUNA_SC_UNROLL
      for (int e = 0; e < kVecW; ++e) v.v[e] = sc_pack2(acc[2 * (j + e)], acc[2 * (j + e) + 1]);
      tuna_store_vec<tuna_u32, kVecW>(reinterpret_cast<tuna_u32*>(q) + j, v);
    }
    return;
  }
  constexpr int kVec = kScKpt * (int)sizeof(tuna_elem) <= 16 ? kScKpt : 16 / (int)sizeof(tuna_elem);
  TUNA_SC_UNROLL
  for (int j = 0; j < kScKpt; j += kVec) {
    tuna_vec<tuna_elem, kVec> v;
    TUNA_SC_UNROLL
    for (int e = 0; e < kVec; ++e) v.v[e] = tuna_from_float<tuna_elem>(acc[j + e]);
    tuna_store_vec<tuna_elem, kVec>(q + j, v);
  }
#else
  TUNA_SC_UNROLL
  for (int j = 0; j < kScKpt; ++j)
    if (j < valid) q[j * cs] = tuna_from_float<tuna_elem>(acc[j]);
#endif
}

// Thread tid's PIX x K_PER_THREAD outputs from the staged patch and filter.
TUNA_DEVICE void sc_compute(const ScArgs& a, const ScBlock& b, int tid, const float* sx, const float* sw) {
#if TUNA_Y_NHWC
  const int kt = tid % kScKThreads, pt = tid / kScKThreads;
#else
  const int pt = tid % kScPixThreads, kt = tid / kScPixThreads;
#endif
  int base[kScPix];
  float acc[kScPix][kScKpt];
  TUNA_SC_UNROLL
  for (int i = 0; i < kScPix; ++i) {
    const int p = pt + i * kScPixThreads;
    base[i] = (p / kScTbW) * kScSH * kScInCols + (p % kScTbW) * kScSW;
    TUNA_SC_UNROLL
    for (int j = 0; j < kScKpt; ++j) acc[i][j] = 0.f;
  }
  TUNA_SC_UNROLL_R
  for (int r = 0; r < kScR; ++r)
    TUNA_SC_UNROLL
    for (int s = 0; s < kScS; ++s)
      TUNA_SC_UNROLL
      for (int c = 0; c < kScCg; ++c) {
        float wv[kScKpt];
        sc_load_w(sw + ((r * kScS + s) * kScCg + c) * kScTbK + kt * kScKpt, wv);
        const int off = c * kScPlane + r * kScDH * kScInCols + s * kScDW;
        TUNA_SC_UNROLL
        for (int i = 0; i < kScPix; ++i) {
          const float xv = sx[base[i] + off];
          TUNA_SC_UNROLL
          for (int j = 0; j < kScKpt; ++j) acc[i][j] += xv * wv[j];
        }
      }
  const int kk = b.k0 + kt * kScKpt;  // first channel within the group
  if (kk >= a.kg) return;
  tuna_elem* yb = a.y + (tuna_i64)b.n * a.ys0 + (tuna_i64)(b.g * a.kg + kk) * a.ys1;
  TUNA_SC_UNROLL
  for (int i = 0; i < kScPix; ++i) {
    const int p = pt + i * kScPixThreads;
    const int oh = b.oh0 + p / kScTbW, ow = b.ow0 + p % kScTbW;
    if (oh < a.ho && ow < a.wo) sc_store(yb + (tuna_i64)oh * a.ys3 + (tuna_i64)ow * a.ys4, a.ys1, a.kg - kk, acc[i]);
  }
}
