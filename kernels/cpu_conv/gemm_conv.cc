// Tunable CPU convolution (TunaCpuGemmConv): every direction as a blocked GEMM per group, with
// the im2col operand gathered implicitly while packing (no im2col buffer).
//
// GEMM views (per group; Cg = C/G, Kg = K/G, T = FD*FH*FW filter taps, P = output positions,
// Q = input positions):
//   forward          C[Kg x N*P]    = A:w[Kg x Cg*T]   * B:x gathered [Cg*T x N*P]     -> y
//   backward data    C[Cg x N*Q]    = A:w^T[Cg x Kg*T] * B:dy gathered [Kg*T x N*Q]    -> dx
//   backward weights C[Kg x Cg*T]   = A:dy[Kg x N*P]   * B:x gathered [N*P x Cg*T]     -> dw
// Block (bx, by, bz) computes the TB_M x TB_N tile (by, bx) of group bz / SPLIT_K over the
// bz % SPLIT_K-th share of the reduction's TB_K chunks. Each chunk is packed (converted to
// float) into block-private scratch (launch->shared), then a THREAD_M x THREAD_N register tile
// sweeps it. With SPLIT_K == 1 the tile is rounded once and stored in the written tensor;
// otherwise partial sums go to the float workspace [G][SPLIT_K][M][N] and the entry
// cpu_gemm_conv_reduce sums them (a second launch).
//
// Options: -DTUNA_DTYPE_FP32|FP16|BF16, -DTUNA_CONV_DIR=0|1|2 (F, B, W), and the perf config
// under its axis names: -DTB_M/N/K (cache block), -DTHREAD_M/N (register tile), -DSPLIT_K.
// Arguments (both entries): x, w, y, the 37 geometry integers (conv/naive_conv_geom.h), then
// the workspace when SPLIT_K > 1. Shared bytes: TunaGemmSharedBytes() below (the solver
// computes the same number).
#include "cpu/cpu_kernel.h"
#include "cpu_conv/cpu_portability.h"
#include "conv/naive_conv_geom.h"
#include "cpu_conv/geom_args.h"

#if !defined(TB_M) || !defined(TB_N) || !defined(TB_K) || !defined(THREAD_M) || !defined(THREAD_N) || \
    !defined(SPLIT_K)
#error "gemm_conv.cc needs TB_M/N/K, THREAD_M/N and SPLIT_K"
#endif
#if !defined(TUNA_CONV_DIR) || TUNA_CONV_DIR < 0 || TUNA_CONV_DIR > 2
#error "gemm_conv.cc needs TUNA_CONV_DIR=0 (forward), 1 (backward data) or 2 (backward weights)"
#endif
#if defined(TUNA_DTYPE_INT8)
#error "gemm_conv.cc supports FP32, FP16 and BF16"
#endif

namespace {

constexpr int TM = TB_M, TN = TB_N, TK = TB_K;
constexpr int MM = THREAD_M, MN = THREAD_N, SPLIT = SPLIT_K;
static_assert(TM % MM == 0 && TN % MN == 0, "micro tile must divide the block tile");

// A column of B / C (the N side): where the gather starts and where the result goes.
struct ColInfo {
  tuna_i64 off;      // linear part of the B offset
  tuna_i64 pos[3];   // spatial part, combined with the row's
  tuna_i64 store;    // offset in C (without the group / row parts)
  tuna_i64 valid;
};
// A row of B / column of A (the reduction side).
struct RowInfo {
  tuna_i64 aoff;     // offset in A (without the group / m parts)
  tuna_i64 off;      // linear part of the B offset
  tuna_i64 pos[3];
  tuna_i64 valid;
};
static_assert(sizeof(ColInfo) <= 64 && sizeof(RowInfo) <= 64, "scratch layout");

// The GEMM view of one group of the problem (see the table above).
struct View {
  TunaConvGeom g;
  tuna_i64 cgs, kgs, taps, P, Q;
  tuna_i64 M, N, K;
  tuna_i64 a_mstride, c_mstride;

  explicit View(const TunaConvGeom& geom) : g(geom) {
    cgs = g.c / g.groups;
    kgs = g.k / g.groups;
    taps = g.fil[0] * g.fil[1] * g.fil[2];
    P = g.out[0] * g.out[1] * g.out[2];
    Q = g.in[0] * g.in[1] * g.in[2];
#if TUNA_CONV_DIR == 0
    M = kgs; N = g.n * P; K = cgs * taps;
    a_mstride = g.ws[0]; c_mstride = g.ys[1];
#elif TUNA_CONV_DIR == 1
    M = cgs; N = g.n * Q; K = kgs * taps;
    a_mstride = g.ws[1]; c_mstride = g.xs[1];
#else
    M = kgs; N = cgs * taps; K = g.n * P;
    a_mstride = g.ys[1]; c_mstride = g.ws[0];
#endif
  }

  // Group offsets of A, B and C.
  tuna_i64 ABase(tuna_i64 grp) const {
#if TUNA_CONV_DIR == 2
    return grp * kgs * g.ys[1];
#else
    return grp * kgs * g.ws[0];
#endif
  }
  tuna_i64 BBase(tuna_i64 grp) const {
#if TUNA_CONV_DIR == 1
    return grp * kgs * g.ys[1];
#else
    return grp * cgs * g.xs[1];
#endif
  }
  tuna_i64 CBase(tuna_i64 grp) const {
#if TUNA_CONV_DIR == 0
    return grp * kgs * g.ys[1];
#elif TUNA_CONV_DIR == 1
    return grp * cgs * g.xs[1];
#else
    return grp * kgs * g.ws[0];
#endif
  }

  void Split3(tuna_i64 v, const tuna_i64* ext, tuna_i64* out3) const {
    out3[2] = v % ext[2]; v /= ext[2];
    out3[1] = v % ext[1]; v /= ext[1];
    out3[0] = v;
  }

  ColInfo Col(tuna_i64 j) const {
    ColInfo c{};
    c.valid = j < N;
    if (!c.valid) return c;
    tuna_i64 s[3];
#if TUNA_CONV_DIR == 0  // (n, output position)
    const tuna_i64 n = j / P;
    Split3(j % P, g.out, s);
    c.off = n * g.xs[0];
    for (int i = 0; i < 3; ++i) c.pos[i] = s[i] * g.stride[i] - g.pad[i];
    c.store = n * g.ys[0] + s[0] * g.ys[2] + s[1] * g.ys[3] + s[2] * g.ys[4];
#elif TUNA_CONV_DIR == 1  // (n, input position)
    const tuna_i64 n = j / Q;
    Split3(j % Q, g.in, s);
    c.off = n * g.ys[0];
    for (int i = 0; i < 3; ++i) c.pos[i] = s[i] + g.pad[i];
    c.store = n * g.xs[0] + s[0] * g.xs[2] + s[1] * g.xs[3] + s[2] * g.xs[4];
#else  // (cg, filter tap)
    const tuna_i64 cg = j / taps;
    Split3(j % taps, g.fil, s);
    c.off = cg * g.xs[1];
    for (int i = 0; i < 3; ++i) c.pos[i] = s[i] * g.dil[i];
    c.store = cg * g.ws[1] + s[0] * g.ws[2] + s[1] * g.ws[3] + s[2] * g.ws[4];
#endif
    return c;
  }

  RowInfo Row(tuna_i64 r) const {
    RowInfo w{};
    w.valid = r < K;
    if (!w.valid) return w;
    tuna_i64 s[3];
#if TUNA_CONV_DIR == 0  // (cg, filter tap)
    const tuna_i64 cg = r / taps;
    Split3(r % taps, g.fil, s);
    w.aoff = cg * g.ws[1] + s[0] * g.ws[2] + s[1] * g.ws[3] + s[2] * g.ws[4];
    w.off = cg * g.xs[1];
    for (int i = 0; i < 3; ++i) w.pos[i] = s[i] * g.dil[i];
#elif TUNA_CONV_DIR == 1  // (kg, filter tap)
    const tuna_i64 kg = r / taps;
    Split3(r % taps, g.fil, s);
    w.aoff = kg * g.ws[0] + s[0] * g.ws[2] + s[1] * g.ws[3] + s[2] * g.ws[4];
    w.off = kg * g.ys[1];
    for (int i = 0; i < 3; ++i) w.pos[i] = s[i] * g.dil[i];
#else  // (n, output position)
    const tuna_i64 n = r / P;
    Split3(r % P, g.out, s);
    w.aoff = n * g.ys[0] + s[0] * g.ys[2] + s[1] * g.ys[3] + s[2] * g.ys[4];
    w.off = n * g.xs[0];
    for (int i = 0; i < 3; ++i) w.pos[i] = s[i] * g.stride[i] - g.pad[i];
#endif
    return w;
  }

  // Offset of B(row, col) from BBase, or -1 where the gathered element is zero padding.
  tuna_i64 Gather(const RowInfo& r, const ColInfo& c) const {
#if TUNA_CONV_DIR == 1
    // dy position o with o*stride = i + pad - f*dil.
    tuna_i64 o[3];
    for (int i = 0; i < 3; ++i) {
      const tuna_i64 t = c.pos[i] - r.pos[i];
      if (t < 0) return -1;
      if (g.stride[i] == 1) {
        o[i] = t;
      } else {
        if (t % g.stride[i] != 0) return -1;
        o[i] = t / g.stride[i];
      }
      if (o[i] >= g.out[i]) return -1;
    }
    return r.off + c.off + o[0] * g.ys[2] + o[1] * g.ys[3] + o[2] * g.ys[4];
#else
    const tuna_i64 id = r.pos[0] + c.pos[0], ih = r.pos[1] + c.pos[1], iw = r.pos[2] + c.pos[2];
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) return -1;
    return r.off + c.off + id * g.xs[2] + ih * g.xs[3] + iw * g.xs[4];
#endif
  }
};

// Operand pointers by direction: A, B read; C written.
struct Operands {
  const tuna_conv_in_t* a;
  const tuna_conv_in_t* b;
  tuna_conv_out_t* c;
};

Operands OperandsFromArgs(void** args) {
  Operands o;
#if TUNA_CONV_DIR == 0
  o.a = tuna_arg<const tuna_conv_in_t*>(args, 1);
  o.b = tuna_arg<const tuna_conv_in_t*>(args, 0);
  o.c = tuna_arg<tuna_conv_out_t*>(args, 2);
#elif TUNA_CONV_DIR == 1
  o.a = tuna_arg<const tuna_conv_in_t*>(args, 1);
  o.b = tuna_arg<const tuna_conv_in_t*>(args, 2);
  o.c = tuna_arg<tuna_conv_out_t*>(args, 0);
#else
  o.a = tuna_arg<const tuna_conv_in_t*>(args, 2);
  o.b = tuna_arg<const tuna_conv_in_t*>(args, 0);
  o.c = tuna_arg<tuna_conv_out_t*>(args, 1);
#endif
  return o;
}

// C[TM x TN] += Ap[kc x TM]^T * Bp[kc x TN], both packed k-major; rows >= m_end and columns
// >= n_end are skipped by whole micro tiles (they hold zeros and are never stored).
inline void MicroSweep(const float* TUNA_RESTRICT ap, const float* TUNA_RESTRICT bp,
                       float* TUNA_RESTRICT cacc, int kc, int m_end, int n_end) {
  for (int i0 = 0; i0 < m_end; i0 += MM) {
    for (int j0 = 0; j0 < n_end; j0 += MN) {
      float c[MM][MN];
      for (int i = 0; i < MM; ++i)
        for (int j = 0; j < MN; ++j) c[i][j] = cacc[(i0 + i) * TN + j0 + j];
      for (int kk = 0; kk < kc; ++kk) {
        const float* a = ap + kk * TM + i0;
        const float* b = bp + kk * TN + j0;
        for (int i = 0; i < MM; ++i) {
          const float av = a[i];
          for (int j = 0; j < MN; ++j) c[i][j] += av * b[j];
        }
      }
      for (int i = 0; i < MM; ++i)
        for (int j = 0; j < MN; ++j) cacc[(i0 + i) * TN + j0 + j] = c[i][j];
    }
  }
}

}  // namespace

TUNA_CPU_KERNEL(cpu_gemm_conv) {
  const Operands ops = OperandsFromArgs(args);
  const View v(GeomFromArgs(args, 3));
  float* ws = SPLIT > 1 ? tuna_arg<float*>(args, 3 + TUNA_CONV_GEOM_NARGS) : nullptr;

  const tuna_i64 j0 = (tuna_i64)launch->block_idx.x * TN;
  const tuna_i64 m0 = (tuna_i64)launch->block_idx.y * TM;
  const tuna_i64 grp = launch->block_idx.z / SPLIT;
  const tuna_i64 split = launch->block_idx.z % SPLIT;

  float* ap = static_cast<float*>(launch->shared);
  float* bp = ap + TK * TM;
  float* cacc = bp + TK * TN;
  ColInfo* cols = reinterpret_cast<ColInfo*>(cacc + TM * TN);
  RowInfo* rows = reinterpret_cast<RowInfo*>(cols + TN);

  const tuna_i64 abase = v.ABase(grp), bbase = v.BBase(grp), cbase = v.CBase(grp);
  const int m_end = (int)(v.M - m0 < TM ? v.M - m0 : TM);
  const int n_end = (int)(v.N - j0 < TN ? v.N - j0 : TN);
  // Whole micro tiles: the packed zeros beyond m_end / n_end make the extra lanes harmless.
  const int m_sweep = (m_end + MM - 1) / MM * MM, n_sweep = (n_end + MN - 1) / MN * MN;

  for (int jj = 0; jj < TN; ++jj) cols[jj] = v.Col(j0 + jj);
  for (int i = 0; i < TM * TN; ++i) cacc[i] = 0.0f;

  const tuna_i64 ktiles = (v.K + TK - 1) / TK;
  const tuna_i64 per = (ktiles + SPLIT - 1) / SPLIT;
  const tuna_i64 kt_begin = split * per;
  const tuna_i64 kt_end = kt_begin + per < ktiles ? kt_begin + per : ktiles;

  for (tuna_i64 kt = kt_begin; kt < kt_end; ++kt) {
    const tuna_i64 r0 = kt * TK;
    const int kc = (int)(v.K - r0 < TK ? v.K - r0 : TK);
    for (int kk = 0; kk < kc; ++kk) rows[kk] = v.Row(r0 + kk);
    for (int kk = 0; kk < kc; ++kk) {
      const tuna_i64 a_row = abase + m0 * v.a_mstride + rows[kk].aoff;
      float* dst = ap + kk * TM;
      for (int mm = 0; mm < m_end; ++mm) dst[mm] = tuna_conv_load(ops.a[a_row + mm * v.a_mstride]);
      for (int mm = m_end; mm < TM; ++mm) dst[mm] = 0.0f;
    }
    for (int kk = 0; kk < kc; ++kk) {
      const RowInfo& row = rows[kk];
      float* dst = bp + kk * TN;
      for (int jj = 0; jj < n_end; ++jj) {
        const tuna_i64 off = v.Gather(row, cols[jj]);
        dst[jj] = off < 0 ? 0.0f : tuna_conv_load(ops.b[bbase + off]);
      }
      for (int jj = n_end; jj < TN; ++jj) dst[jj] = 0.0f;
    }
    MicroSweep(ap, bp, cacc, kc, m_sweep, n_sweep);
  }

  if (SPLIT == 1) {
    for (int mm = 0; mm < m_end; ++mm) {
      tuna_conv_out_t* crow = ops.c + cbase + (m0 + mm) * v.c_mstride;
      for (int jj = 0; jj < n_end; ++jj) crow[cols[jj].store] = tuna_conv_store(cacc[mm * TN + jj]);
    }
  } else {
    float* part = ws + ((grp * SPLIT + split) * v.M + m0) * v.N + j0;
    for (int mm = 0; mm < m_end; ++mm)
      for (int jj = 0; jj < n_end; ++jj) part[mm * v.N + jj] = cacc[mm * TN + jj];
  }
}

// Sums the SPLIT_K partial tiles of the workspace into the written tensor: block b of the grid
// takes a contiguous share of the G*M*N results.
TUNA_CPU_KERNEL(cpu_gemm_conv_reduce) {
  const Operands ops = OperandsFromArgs(args);
  const View v(GeomFromArgs(args, 3));
  if (SPLIT == 1) return;
  const float* ws = tuna_arg<const float*>(args, 3 + TUNA_CONV_GEOM_NARGS);
  const tuna_i64 mn = v.M * v.N;
  const tuna_i64 total = v.g.groups * mn;
  const tuna_i64 blocks = (tuna_i64)launch->grid.x * launch->grid.y * launch->grid.z;
  const tuna_i64 b = launch->block_idx.x +
                     (tuna_i64)launch->grid.x *
                         (launch->block_idx.y + (tuna_i64)launch->grid.y * launch->block_idx.z);
  const tuna_i64 per = (total + blocks - 1) / blocks;
  const tuna_i64 begin = b * per, end = begin + per < total ? begin + per : total;
  for (tuna_i64 e = begin; e < end; ++e) {
    const tuna_i64 grp = e / mn, m = (e % mn) / v.N, j = e % v.N;
    const float* src = ws + grp * SPLIT * mn + m * v.N + j;
    float sum = 0.0f;
    for (int s = 0; s < SPLIT; ++s) sum += src[s * mn];
    ops.c[v.CBase(grp) + m * v.c_mstride + v.Col(j).store] = tuna_conv_store(sum);
  }
}
