// One thread's share of an implicit-GEMM forward tile load for the Hopper kernels: the A rows
// (output pixels, gathered from NHWC x on the fly) and B rows (output channels, rows of w as
// K R S C/G) of one k-tile of 64 halves, as 16-byte cp.async chunks written into a 128-byte
// swizzled shared tile. A thread owns chunk column `kc` of rows row0 + i * STEP; padding,
// tails and rows past M / K/G are zero-filled. Include after conv/async_copy.h and
// conv/hopper_ops.h (TunaConvGeom).
#pragma once

// Per A row: element offset of its image and group in x, and its top-left input coordinate.
template <int ROWS>
struct TunaARows {
  long long base[ROWS];
  int h[ROWS];
  int w[ROWS];
};

// Rows m_first + i * STEP of group g's GEMM (i < ROWS).
template <int ROWS, int STEP>
TUNA_DEVICE void tuna_a_rows_init(TunaARows<ROWS>& a, const TunaConvGeom& p, int m_first, int g) {
  const int M = p.n_img * p.Ho * p.Wo;
  const int hw = p.Ho * p.Wo;
  const int cg = p.C / p.groups;
#pragma unroll
  for (int i = 0; i < ROWS; ++i) {
    const int m = m_first + i * STEP;
    const int mm = m < M ? m : 0;
    const int img = mm / hw;
    const int rem = mm - img * hw;
    const int oh = rem / p.Wo;
    const int ow = rem - oh * p.Wo;
    a.base[i] = static_cast<long long>(img) * p.H * p.W * p.C + static_cast<long long>(g) * cg;
    a.h[i] = m < M ? oh * p.stride_h - p.pad_h : -(1 << 29);  // a row past M never lands in bounds
    a.w[i] = ow * p.stride_w - p.pad_w;
  }
}

// Loads chunk column kc of k-tile kt: A rows into a_dst + i * STEP rows, B rows n_first + i * STEP
// into b_dst + i * STEP rows (a_dst / b_dst already point at this thread's first swizzled chunk).
// CHUNK 16: C/G % 8 == 0, one aligned 16-byte cp.async within one filter tap.
// CHUNK 8: C/G == 4, two 8-byte cp.async per chunk (one tap each); rows of w are 8-byte aligned.
template <int AROWS, int BROWS, int STEP>
TUNA_DEVICE void tuna_load_tile(unsigned a_dst, unsigned b_dst, const TunaARows<AROWS>& a, const tuna_u16* x,
                                const tuna_u16* w_g, const TunaConvGeom& p, int kt, int kc, int n_first) {
  constexpr int kRowBytes = 128;
  const int cg = p.C / p.groups;
  const int kg = p.R * p.S * cg;
  const int kpg = p.K / p.groups;
  const int k = kt * 64 + kc * 8;
#if CHUNK == 8
#pragma unroll
  for (int piece = 0; piece < 2; ++piece) {
    const int kp = k + 4 * piece;
    const bool k_ok = kp < kg;
    const int tap = k_ok ? kp >> 2 : 0;
    const int r = tap / p.S;
    const int s = tap - r * p.S;
#pragma unroll
    for (int i = 0; i < AROWS; ++i) {
      const int h = a.h[i] + r * p.dil_h;
      const int ww = a.w[i] + s * p.dil_w;
      const bool ok = k_ok && static_cast<unsigned>(h) < static_cast<unsigned>(p.H) &&
                      static_cast<unsigned>(ww) < static_cast<unsigned>(p.W);
      const tuna_u16* src = ok ? x + a.base[i] + (static_cast<long long>(h) * p.W + ww) * p.C : x;
      tuna_cp_async8(a_dst + i * STEP * kRowBytes + 8 * piece, src, ok ? 8 : 0);
    }
#pragma unroll
    for (int i = 0; i < BROWS; ++i) {
      const int n = n_first + i * STEP;
      const bool ok = k_ok && n < kpg;
      const tuna_u16* src = ok ? w_g + static_cast<long long>(n) * kg + kp : w_g;
      tuna_cp_async8(b_dst + i * STEP * kRowBytes + 8 * piece, src, ok ? 8 : 0);
    }
  }
#else
  const bool k_ok = k < kg;
  const int kk = k_ok ? k : 0;
  const int tap = kk / cg;
  const int c = kk - tap * cg;
  const int r = tap / p.S;
  const int s = tap - r * p.S;
#pragma unroll
  for (int i = 0; i < AROWS; ++i) {
    const int h = a.h[i] + r * p.dil_h;
    const int ww = a.w[i] + s * p.dil_w;
    const bool ok = k_ok && static_cast<unsigned>(h) < static_cast<unsigned>(p.H) &&
                    static_cast<unsigned>(ww) < static_cast<unsigned>(p.W);
    const tuna_u16* src = ok ? x + a.base[i] + (static_cast<long long>(h) * p.W + ww) * p.C + c : x;
    tuna_cp_async16(a_dst + i * STEP * kRowBytes, src, ok ? 16 : 0);
  }
#pragma unroll
  for (int i = 0; i < BROWS; ++i) {
    const int n = n_first + i * STEP;
    const bool ok = k_ok && n < kpg;
    const tuna_u16* src = ok ? w_g + static_cast<long long>(n) * kg + k : w_g;
    tuna_cp_async16(b_dst + i * STEP * kRowBytes, src, ok ? 16 : 0);
  }
#endif
}
