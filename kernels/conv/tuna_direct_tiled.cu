// Tiled direct forward convolution (2D), for the solver TunaDirectTiledFwd
// (tuner_core/solver/conv/gpu_direct_tiled.cc).
//
// A block computes a TB_OH x TB_OW tile of output pixels for TB_OC output channels of one image
// and group (grid: x = spatial tiles, y = channel blocks, z = N * G). It walks the group's
// input channels TB_IC at a time, staging the input patch the tile reads (with its halo and
// zero padding) and the matching TB_OC x TB_IC filter slice in dynamic shared memory; each
// thread then owns one output pixel and THREAD_OC output channels (strided by TB_OC/THREAD_OC).
// Tensors are addressed through their strides, so every layout works; offsets are 64-bit.
//
// Options: the solver's axes TB_OH, TB_OW, TB_OC, TB_IC, THREAD_OC (named as its perf config:
// convolution dimensions, O = output, I = input; this kernel is not a GEMM); TUNA_DTYPE.
// Shared memory (bytes, set by the solver): 4 * (TB_IC*in_th*in_tw + TB_OC*TB_IC*FY*FX) with
// in_th = (TB_OH-1)*stride_h + (FY-1)*dil_h + 1 (in_tw likewise).
#include "conv/tuna_conv_common.h"

constexpr int kTbH = TB_OH;
constexpr int kTbW = TB_OW;
constexpr int kTbK = TB_OC;
constexpr int kTbC = TB_IC;
constexpr int kTk = THREAD_OC;
constexpr int kPix = kTbH * kTbW;
constexpr int kKGroups = kTbK / kTk;
constexpr int kThreads = kPix * kKGroups;
static_assert(kTbK % kTk == 0, "TB_OC not divisible by THREAD_OC");
static_assert(kThreads <= 1024, "too many threads");

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void tuna_direct_tiled_fwd(
    const tuna_elem* x, const tuna_elem* w, tuna_elem* y, tuna_i64 a_g, tuna_i64 a_cg, tuna_i64 a_kg,
    tuna_i64 a_hi, tuna_i64 a_wi, tuna_i64 a_ho, tuna_i64 a_wo, tuna_i64 a_fy, tuna_i64 a_fx,
    tuna_i64 a_ph, tuna_i64 a_pw, tuna_i64 a_sh, tuna_i64 a_sw, tuna_i64 a_dh, tuna_i64 a_dw,
    tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws1, tuna_i64 ws3,
    tuna_i64 ws4, tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys3, tuna_i64 ys4, tuna_i64 a_tiles_w,
    tuna_i64 a_in_th, tuna_i64 a_in_tw) {
  TUNA_DYNAMIC_SHARED(float, smem);
  const int G = (int)a_g, Cg = (int)a_cg, Kg = (int)a_kg;
  const int Hi = (int)a_hi, Wi = (int)a_wi, Ho = (int)a_ho, Wo = (int)a_wo;
  const int FY = (int)a_fy, FX = (int)a_fx;
  const int sh = (int)a_sh, sw = (int)a_sw, dh = (int)a_dh, dw = (int)a_dw;
  const int in_th = (int)a_in_th, in_tw = (int)a_in_tw;
  const int taps = FY * FX;
  float* s_in = smem;                        // [kTbC][in_th][in_tw]
  float* s_w = smem + kTbC * in_th * in_tw;  // [kTbK][kTbC][FY][FX]

  const int tiles_w = (int)a_tiles_w;
  const int tile_h = TUNA_BID_X / tiles_w, tile_w = TUNA_BID_X % tiles_w;
  const int k0 = TUNA_BID_Y * kTbK;
  const int n = TUNA_BID_Z / G, g = TUNA_BID_Z % G;
  const int tid = TUNA_TID_X;
  const int pix = tid % kPix, kgrp = tid / kPix;
  const int lh = pix / kTbW, lw = pix % kTbW;
  const int oh = tile_h * kTbH + lh, ow = tile_w * kTbW + lw;
  const int ih0 = tile_h * kTbH * sh - (int)a_ph;
  const int iw0 = tile_w * kTbW * sw - (int)a_pw;
  const tuna_i64 x_base = (tuna_i64)n * xs0 + (tuna_i64)g * Cg * xs1;
  const tuna_i64 w_base = (tuna_i64)(g * Kg) * ws0;

  float acc[kTk];
#pragma unroll
  for (int j = 0; j < kTk; ++j) acc[j] = 0.f;

  const int in_elems = kTbC * in_th * in_tw;
  const int w_elems = kTbK * kTbC * taps;
  for (int c0 = 0; c0 < Cg; c0 += kTbC) {
    for (int e = tid; e < in_elems; e += kThreads) {
      const int c = e / (in_th * in_tw), r = e % (in_th * in_tw);
      const int ih = ih0 + r / in_tw, iw = iw0 + r % in_tw;
      float v = 0.f;
      if (c0 + c < Cg && tuna_in_range(ih, Hi) && tuna_in_range(iw, Wi)) {
        v = tuna_to_float(x[x_base + (c0 + c) * xs1 + ih * xs3 + iw * xs4]);
      }
      s_in[e] = v;
    }
    for (int e = tid; e < w_elems; e += kThreads) {
      const int k = e / (kTbC * taps), r = e % (kTbC * taps);
      const int c = r / taps, t = r % taps;
      float v = 0.f;
      if (k0 + k < Kg && c0 + c < Cg) {
        v = tuna_to_float(w[w_base + (tuna_i64)(k0 + k) * ws0 + (c0 + c) * ws1 + (t / FX) * ws3 + (t % FX) * ws4]);
      }
      s_w[e] = v;
    }
    TUNA_SYNC();
    for (int c = 0; c < kTbC; ++c) {
      const float* in_c = s_in + c * in_th * in_tw + (lh * sh) * in_tw + lw * sw;
      for (int fy = 0; fy < FY; ++fy) {
        for (int fx = 0; fx < FX; ++fx) {
          const float v = in_c[fy * dh * in_tw + fx * dw];
          const float* wp = s_w + c * taps + fy * FX + fx;
#pragma unroll
          for (int j = 0; j < kTk; ++j) acc[j] += v * wp[(kgrp + j * kKGroups) * kTbC * taps];
        }
      }
    }
    TUNA_SYNC();
  }

  if (oh < Ho && ow < Wo) {
    const tuna_i64 y_base = (tuna_i64)n * ys0 + oh * ys3 + ow * ys4;
#pragma unroll
    for (int j = 0; j < kTk; ++j) {
      const int k = k0 + kgrp + j * kKGroups;
      if (k < Kg) y[y_base + (tuna_i64)(g * Kg + k) * ys1] = tuna_from_float<tuna_elem>(acc[j]);
    }
  }
}
