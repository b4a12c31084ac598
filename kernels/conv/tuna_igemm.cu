// Implicit-GEMM convolution, SIMT (CUDA C++ and HIP from one source), for the solvers
// TunaIgemm{Fwd,Bwd,Wrw} (tuner_core/solver/conv/gpu_igemm.cc).
//
// One GEMM per group (grid.z), never materialised: the operands are gathered from the tensors.
//   F  (TUNA_DIR 0)  M = N*Do*Ho*Wo   N = K/G    K = C/G*Z*Y*X   A = im2col(x)   B = w       C -> y
//   B  (TUNA_DIR 1)  M = N*Di*Hi*Wi   N = C/G    K = K/G*taps    A = col(dy)     B = w       C -> dx
//                    (split into stride classes: grid.z = G * sd*sh*sw; inside a class only the
//                    filter taps that reach it are visited, so no multiply reads a structural zero)
//   W  (TUNA_DIR 2)  M = K/G          N = C/G*Z*Y*X  K = N*Do*Ho*Wo  A = dy         B = im2col(x) C -> dw
//                    (grid.z = G * split; with TUNA_ATOMIC each split adds its partial sums into
//                    an FP32 buffer zeroed before the launch)
// Tensors are addressed through their element strides (arguments), so one kernel serves every
// layout; offsets are 64-bit, GEMM indices 32-bit (the solver checks M, N, K < 2^31).
//
// Tiling (CUTLASS names): a block computes a TB_M x TB_N tile of C, marching over K in steps
// of TB_K through shared memory (STAGES 1 or 2: with 2, the next K step is fetched into
// registers while the current one is multiplied); each thread owns a THREAD_M x THREAD_N
// micro-tile, rows strided by TB_M/THREAD_M and columns by TB_N/THREAD_N.
//
// Options (all required):
//   TB_M/N/K, THREAD_M/N, STAGES   the solver's axes, named as its perf config;
//   TUNA_DIR, TUNA_DTYPE, and, derived by the solver from the problem and its VEC_K axis:
//   TUNA_VEC_A/B     elements per global load of the operand, consecutive along GEMM-K (the
//                    solver only sets >1 where those elements are contiguous and aligned),
//   TUNA_KFAST_A/B   1: consecutive threads walk GEMM-K (operand contiguous along K), else M/N,
//   TUNA_KORDER      F: 0 = K index is (c, tap), 1 = (tap, c); B: 0 = (k, tap), 1 = (tap, k),
//   TUNA_ATOMIC      W only: 1 = accumulate into the FP32 buffer `acc` with atomics.
// The split of W's reduction (the solver's SPLIT_K axis) is a kernel argument, not an option.
#include "conv/tuna_conv_common.h"

#ifndef TUNA_DIR
#error "TUNA_DIR must be defined"
#endif

constexpr int kTbM = TB_M;
constexpr int kTbN = TB_N;
constexpr int kTbK = TB_K;
constexpr int kTm = THREAD_M;
constexpr int kTn = THREAD_N;
constexpr int kStages = STAGES;
constexpr int kVecA = TUNA_VEC_A;
constexpr int kVecB = TUNA_VEC_B;
constexpr bool kKFastA = TUNA_KFAST_A != 0;
constexpr bool kKFastB = TUNA_KFAST_B != 0;
constexpr int kThreadsM = kTbM / kTm;
constexpr int kThreadsN = kTbN / kTn;
constexpr int kThreads = kThreadsM * kThreadsN;
// Mirrors of the solver's IsValid.
static_assert(kTbM % kTm == 0 && kTbN % kTn == 0, "tile not divisible by the thread tile");
static_assert(kTbK % kVecA == 0 && kTbK % kVecB == 0, "tb_k not divisible by vec");
static_assert(kStages == 1 || kStages == 2, "stages is 1 or 2");
static_assert(kThreads <= 1024, "too many threads");
constexpr int kAGroups = kTbM * kTbK / kVecA;
constexpr int kBGroups = kTbN * kTbK / kVecB;
constexpr int kALoads = (kAGroups + kThreads - 1) / kThreads;
constexpr int kBLoads = (kBGroups + kThreads - 1) / kThreads;
constexpr int kPad = 1;  // breaks bank conflicts of the K-fast stores
static_assert(kStages * kTbK * (kTbM + kTbN + 2 * kPad) * 4 <= 49152, "static shared memory");

// The problem, as the kernel arguments give it, plus the derived GEMM shape of this block.
struct ConvGeo {
  int n, cg, kg;
  int di, hi, wi, dout, ho, wo;
  int fz, fy, fx;
  int pd, ph, pw, sd, sh, sw, dd, dh, dw;
  tuna_i64 xs[5], ws[5], ys[5];
  int g;           // group of this block
  int gm, gn, gk;  // GEMM sizes
#if TUNA_DIR == 1
  int cd, ch, cw;                       // stride class
  int nd, nh, nw;                       // input positions per class and dimension
  int z0, zst, zc, y0, yst, yc, x0, xst, xc;  // reaching taps: start, step, count
#endif
};

// A row of an operand tile: what stays fixed while the block marches over K.
struct RowInfo {
  tuna_i64 base;
  int a0, a1, a2, a3;
  bool ok;
};

#if TUNA_DIR == 1
// The taps f in [0, F) with (cls + pad - f*dil) divisible by stride: start, step, count.
TUNA_DEVICE void tuna_class_taps(int cls, int pad, int stride, int dil, int F, int* start, int* step,
                                 int* count) {
  int st = 1;
  while ((st * dil) % stride != 0) ++st;
  int s0 = -1;
  for (int f = 0; f < F && f < st; ++f) {
    int r = (cls + pad - f * dil) % stride;
    if (r < 0) r += stride;
    if (r == 0) {
      s0 = f;
      break;
    }
  }
  *step = st;
  *start = s0 < 0 ? 0 : s0;
  *count = s0 < 0 ? 0 : (F - s0 + st - 1) / st;
}
#endif

// ---- Operand A rows / elements ---------------------------------------------------------------
TUNA_DEVICE RowInfo tuna_row_a(const ConvGeo& p, int m) {
  RowInfo r;
  r.ok = m < p.gm;
  if (!r.ok) m = 0;
#if TUNA_DIR == 0
  int ow = m % p.wo;
  int t = m / p.wo;
  int oh = t % p.ho;
  t /= p.ho;
  int od = t % p.dout;
  int n = t / p.dout;
  r.base = (tuna_i64)n * p.xs[0] + (tuna_i64)p.g * p.cg * p.xs[1];
  r.a0 = od * p.sd - p.pd;
  r.a1 = oh * p.sh - p.ph;
  r.a2 = ow * p.sw - p.pw;
  r.a3 = 0;
#elif TUNA_DIR == 1
  int iw = m % p.nw;
  int t = m / p.nw;
  int ih = t % p.nh;
  t /= p.nh;
  int id = t % p.nd;
  int n = t / p.nd;
  r.a0 = p.cd + id * p.sd;
  r.a1 = p.ch + ih * p.sh;
  r.a2 = p.cw + iw * p.sw;
  r.a3 = 0;
  r.ok = r.ok && r.a0 < p.di && r.a1 < p.hi && r.a2 < p.wi;
  r.base = (tuna_i64)n * p.ys[0] + (tuna_i64)p.g * p.kg * p.ys[1];
#else
  r.base = (tuna_i64)(p.g * p.kg + m) * p.ys[1];
  r.a0 = r.a1 = r.a2 = r.a3 = 0;
#endif
  return r;
}

// Offset of A[row][kk]; false where the element is a structural zero (padding, kk >= K).
TUNA_DEVICE bool tuna_elem_a(const ConvGeo& p, const RowInfo& r, int kk, tuna_i64* off) {
  if (!r.ok || kk >= p.gk) return false;
#if TUNA_DIR == 0
  const int taps = p.fz * p.fy * p.fx;
#if TUNA_KORDER == 0
  const int c = kk / taps, tap = kk - c * taps;
#else
  const int tap = kk / p.cg, c = kk - tap * p.cg;
#endif
  const int tx = tap % p.fx, tyz = tap / p.fx, ty = tyz % p.fy, tz = tyz / p.fy;
  const int id = r.a0 + tz * p.dd, ih = r.a1 + ty * p.dh, iw = r.a2 + tx * p.dw;
  if (!tuna_in_range(id, p.di) || !tuna_in_range(ih, p.hi) || !tuna_in_range(iw, p.wi)) return false;
  *off = r.base + c * p.xs[1] + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4];
  return true;
#elif TUNA_DIR == 1
  const int taps = p.zc * p.yc * p.xc;
#if TUNA_KORDER == 0
  const int k = kk / taps, tv = kk - k * taps;
#else
  const int tv = kk / p.kg, k = kk - tv * p.kg;
#endif
  const int jx = tv % p.xc, jyz = tv / p.xc, jy = jyz % p.yc, jz = jyz / p.yc;
  const int tz = p.z0 + jz * p.zst, ty = p.y0 + jy * p.yst, tx = p.x0 + jx * p.xst;
  // Exact divisions: the class guarantees divisibility (also for negative numerators).
  const int od = (r.a0 + p.pd - tz * p.dd) / p.sd;
  const int oh = (r.a1 + p.ph - ty * p.dh) / p.sh;
  const int ow = (r.a2 + p.pw - tx * p.dw) / p.sw;
  if (!tuna_in_range(od, p.dout) || !tuna_in_range(oh, p.ho) || !tuna_in_range(ow, p.wo)) return false;
  *off = r.base + k * p.ys[1] + od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4];
  return true;
#else
  const int ow = kk % p.wo;
  int t = kk / p.wo;
  const int oh = t % p.ho;
  t /= p.ho;
  const int od = t % p.dout, n = t / p.dout;
  *off = r.base + n * p.ys[0] + od * p.ys[2] + oh * p.ys[3] + ow * p.ys[4];
  return true;
#endif
}

// ---- Operand B rows (GEMM N index) / elements ------------------------------------------------
TUNA_DEVICE RowInfo tuna_row_b(const ConvGeo& p, int nn) {
  RowInfo r;
  r.ok = nn < p.gn;
  if (!r.ok) nn = 0;
#if TUNA_DIR == 0
  r.base = (tuna_i64)(p.g * p.kg + nn) * p.ws[0];
  r.a0 = r.a1 = r.a2 = r.a3 = 0;
#elif TUNA_DIR == 1
  r.base = (tuna_i64)nn * p.ws[1];
  r.a0 = r.a1 = r.a2 = r.a3 = 0;
#else
  const int taps = p.fz * p.fy * p.fx;
  const int c = nn / taps, tap = nn - c * taps;
  r.a2 = tap % p.fx;
  const int tyz = tap / p.fx;
  r.a1 = tyz % p.fy;
  r.a0 = tyz / p.fy;
  r.a3 = c;
  r.base = (tuna_i64)(p.g * p.cg + c) * p.xs[1];
#endif
  return r;
}

TUNA_DEVICE bool tuna_elem_b(const ConvGeo& p, const RowInfo& r, int kk, tuna_i64* off) {
  if (!r.ok || kk >= p.gk) return false;
#if TUNA_DIR == 0
  const int taps = p.fz * p.fy * p.fx;
#if TUNA_KORDER == 0
  const int c = kk / taps, tap = kk - c * taps;
#else
  const int tap = kk / p.cg, c = kk - tap * p.cg;
#endif
  const int tx = tap % p.fx, tyz = tap / p.fx, ty = tyz % p.fy, tz = tyz / p.fy;
  *off = r.base + c * p.ws[1] + tz * p.ws[2] + ty * p.ws[3] + tx * p.ws[4];
  return true;
#elif TUNA_DIR == 1
  const int taps = p.zc * p.yc * p.xc;
#if TUNA_KORDER == 0
  const int k = kk / taps, tv = kk - k * taps;
#else
  const int tv = kk / p.kg, k = kk - tv * p.kg;
#endif
  const int jx = tv % p.xc, jyz = tv / p.xc, jy = jyz % p.yc, jz = jyz / p.yc;
  const int tz = p.z0 + jz * p.zst, ty = p.y0 + jy * p.yst, tx = p.x0 + jx * p.xst;
  *off = r.base + (tuna_i64)(p.g * p.kg + k) * p.ws[0] + tz * p.ws[2] + ty * p.ws[3] + tx * p.ws[4];
  return true;
#else
  const int ow = kk % p.wo;
  int t = kk / p.wo;
  const int oh = t % p.ho;
  t /= p.ho;
  const int od = t % p.dout, n = t / p.dout;
  const int id = od * p.sd - p.pd + r.a0 * p.dd;
  const int ih = oh * p.sh - p.ph + r.a1 * p.dh;
  const int iw = ow * p.sw - p.pw + r.a2 * p.dw;
  if (!tuna_in_range(id, p.di) || !tuna_in_range(ih, p.hi) || !tuna_in_range(iw, p.wi)) return false;
  *off = r.base + n * p.xs[0] + id * p.xs[2] + ih * p.xs[3] + iw * p.xs[4];
  return true;
#endif
}

// ---- Output element (m, nn) -------------------------------------------------------------------
TUNA_DEVICE bool tuna_out_offset(const ConvGeo& p, int m, int nn, tuna_i64* off) {
  if (m >= p.gm || nn >= p.gn) return false;
#if TUNA_DIR == 0
  const int ow = m % p.wo;
  int t = m / p.wo;
  const int oh = t % p.ho;
  t /= p.ho;
  const int od = t % p.dout, n = t / p.dout;
  *off = (tuna_i64)n * p.ys[0] + (tuna_i64)(p.g * p.kg + nn) * p.ys[1] + od * p.ys[2] + oh * p.ys[3] +
         ow * p.ys[4];
  return true;
#elif TUNA_DIR == 1
  const int iwi = m % p.nw;
  int t = m / p.nw;
  const int ihi = t % p.nh;
  t /= p.nh;
  const int idi = t % p.nd, n = t / p.nd;
  const int id = p.cd + idi * p.sd, ih = p.ch + ihi * p.sh, iw = p.cw + iwi * p.sw;
  if (id >= p.di || ih >= p.hi || iw >= p.wi) return false;
  *off = (tuna_i64)n * p.xs[0] + (tuna_i64)(p.g * p.cg + nn) * p.xs[1] + id * p.xs[2] + ih * p.xs[3] +
         iw * p.xs[4];
  return true;
#else
  const int taps = p.fz * p.fy * p.fx;
  const int c = nn / taps, tap = nn - c * taps;
  const int tx = tap % p.fx, tyz = tap / p.fx, ty = tyz % p.fy, tz = tyz / p.fy;
  *off = (tuna_i64)(p.g * p.kg + m) * p.ws[0] + c * p.ws[1] + tz * p.ws[2] + ty * p.ws[3] + tx * p.ws[4];
  return true;
#endif
}

// ---- The kernel --------------------------------------------------------------------------------
#if TUNA_DIR == 0
#define TUNA_IGEMM_ENTRY tuna_igemm_fwd
#elif TUNA_DIR == 1
#define TUNA_IGEMM_ENTRY tuna_igemm_bwd
#else
#define TUNA_IGEMM_ENTRY tuna_igemm_wrw
#endif

TUNA_GLOBAL TUNA_LAUNCH_BOUNDS(kThreads) void TUNA_IGEMM_ENTRY(
    tuna_elem* x, tuna_elem* w, tuna_elem* y, float* acc, tuna_i64 a_n, tuna_i64 a_cg, tuna_i64 a_kg,
    tuna_i64 a_di, tuna_i64 a_hi, tuna_i64 a_wi, tuna_i64 a_do, tuna_i64 a_ho, tuna_i64 a_wo,
    tuna_i64 a_fz, tuna_i64 a_fy, tuna_i64 a_fx, tuna_i64 a_pd, tuna_i64 a_ph, tuna_i64 a_pw,
    tuna_i64 a_sd, tuna_i64 a_sh, tuna_i64 a_sw, tuna_i64 a_dd, tuna_i64 a_dh, tuna_i64 a_dw,
    tuna_i64 xs0, tuna_i64 xs1, tuna_i64 xs2, tuna_i64 xs3, tuna_i64 xs4, tuna_i64 ws0, tuna_i64 ws1,
    tuna_i64 ws2, tuna_i64 ws3, tuna_i64 ws4, tuna_i64 ys0, tuna_i64 ys1, tuna_i64 ys2, tuna_i64 ys3,
    tuna_i64 ys4, tuna_i64 split_k, tuna_i64 k_tiles_per_split) {
  TUNA_SHARED float smem_a[kStages][kTbK][kTbM + kPad];
  TUNA_SHARED float smem_b[kStages][kTbK][kTbN + kPad];

  ConvGeo p;
  p.n = (int)a_n, p.cg = (int)a_cg, p.kg = (int)a_kg;
  p.di = (int)a_di, p.hi = (int)a_hi, p.wi = (int)a_wi;
  p.dout = (int)a_do, p.ho = (int)a_ho, p.wo = (int)a_wo;
  p.fz = (int)a_fz, p.fy = (int)a_fy, p.fx = (int)a_fx;
  p.pd = (int)a_pd, p.ph = (int)a_ph, p.pw = (int)a_pw;
  p.sd = (int)a_sd, p.sh = (int)a_sh, p.sw = (int)a_sw;
  p.dd = (int)a_dd, p.dh = (int)a_dh, p.dw = (int)a_dw;
  p.xs[0] = xs0, p.xs[1] = xs1, p.xs[2] = xs2, p.xs[3] = xs3, p.xs[4] = xs4;
  p.ws[0] = ws0, p.ws[1] = ws1, p.ws[2] = ws2, p.ws[3] = ws3, p.ws[4] = ws4;
  p.ys[0] = ys0, p.ys[1] = ys1, p.ys[2] = ys2, p.ys[3] = ys3, p.ys[4] = ys4;

  int kt_begin = 0;
#if TUNA_DIR == 0
  p.g = TUNA_BID_Z;
  p.gm = p.n * p.dout * p.ho * p.wo;
  p.gn = p.kg;
  p.gk = p.cg * p.fz * p.fy * p.fx;
#elif TUNA_DIR == 1
  {
    const int ncls = p.sd * p.sh * p.sw;
    const int cls = TUNA_BID_Z % ncls;
    p.g = TUNA_BID_Z / ncls;
    p.cw = cls % p.sw;
    p.ch = (cls / p.sw) % p.sh;
    p.cd = cls / (p.sw * p.sh);
    p.nd = (p.di + p.sd - 1) / p.sd;
    p.nh = (p.hi + p.sh - 1) / p.sh;
    p.nw = (p.wi + p.sw - 1) / p.sw;
    tuna_class_taps(p.cd, p.pd, p.sd, p.dd, p.fz, &p.z0, &p.zst, &p.zc);
    tuna_class_taps(p.ch, p.ph, p.sh, p.dh, p.fy, &p.y0, &p.yst, &p.yc);
    tuna_class_taps(p.cw, p.pw, p.sw, p.dw, p.fx, &p.x0, &p.xst, &p.xc);
    p.gm = p.n * p.nd * p.nh * p.nw;
    p.gn = p.cg;
    p.gk = p.kg * p.zc * p.yc * p.xc;
  }
#else
  {
    const int split = (int)split_k;
    p.g = TUNA_BID_Z / split;
    kt_begin = (TUNA_BID_Z % split) * (int)k_tiles_per_split;
    p.gm = p.kg;
    p.gn = p.cg * p.fz * p.fy * p.fx;
    p.gk = p.n * p.dout * p.ho * p.wo;
  }
#endif
  (void)split_k;
  const int k_tiles = (p.gk + kTbK - 1) / kTbK;
  int kt_end = k_tiles;
#if TUNA_DIR == 2
  kt_end = kt_begin + (int)k_tiles_per_split;
  if (kt_end > k_tiles) kt_end = k_tiles;
#endif
  const int m0 = TUNA_BID_X * kTbM;
  const int n0 = TUNA_BID_Y * kTbN;
  const int tid = TUNA_TID_X;

  // Fixed per thread: which tile rows and K offsets it loads.
  RowInfo row_a[kALoads], row_b[kBLoads];
  int kv_a[kALoads], kv_b[kBLoads], r_a[kALoads], r_b[kBLoads];
  bool live_a[kALoads], live_b[kBLoads];
#pragma unroll
  for (int i = 0; i < kALoads; ++i) {
    const int gi = tid + i * kThreads;
    live_a[i] = gi < kAGroups;
    constexpr int kPerRow = kTbK / kVecA;
    r_a[i] = kKFastA ? gi / kPerRow : gi % kTbM;
    kv_a[i] = kKFastA ? gi % kPerRow : gi / kTbM;
    if (!live_a[i]) r_a[i] = 0, kv_a[i] = 0;
    row_a[i] = tuna_row_a(p, m0 + r_a[i]);
  }
#pragma unroll
  for (int i = 0; i < kBLoads; ++i) {
    const int gi = tid + i * kThreads;
    live_b[i] = gi < kBGroups;
    constexpr int kPerRow = kTbK / kVecB;
    r_b[i] = kKFastB ? gi / kPerRow : gi % kTbN;
    kv_b[i] = kKFastB ? gi % kPerRow : gi / kTbN;
    if (!live_b[i]) r_b[i] = 0, kv_b[i] = 0;
    row_b[i] = tuna_row_b(p, n0 + r_b[i]);
  }

#if TUNA_DIR == 1
  const tuna_elem* src_a = y;
  const tuna_elem* src_b = w;
#elif TUNA_DIR == 2
  const tuna_elem* src_a = y;
  const tuna_elem* src_b = x;
#else
  const tuna_elem* src_a = x;
  const tuna_elem* src_b = w;
#endif

  float reg_a[kALoads][kVecA];
  float reg_b[kBLoads][kVecB];

  auto fetch = [&](int kt) {
    const int k0 = kt * kTbK;
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      tuna_i64 off = 0;
      if (live_a[i] && tuna_elem_a(p, row_a[i], k0 + kv_a[i] * kVecA, &off)) {
        tuna_load_floats<kVecA>(src_a + off, reg_a[i]);
      } else {
#pragma unroll
        for (int v = 0; v < kVecA; ++v) reg_a[i][v] = 0.f;
      }
    }
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      tuna_i64 off = 0;
      if (live_b[i] && tuna_elem_b(p, row_b[i], k0 + kv_b[i] * kVecB, &off)) {
        tuna_load_floats<kVecB>(src_b + off, reg_b[i]);
      } else {
#pragma unroll
        for (int v = 0; v < kVecB; ++v) reg_b[i][v] = 0.f;
      }
    }
  };
  auto stash = [&](int stage) {
#pragma unroll
    for (int i = 0; i < kALoads; ++i) {
      if (!live_a[i]) continue;
#pragma unroll
      for (int v = 0; v < kVecA; ++v) smem_a[stage][kv_a[i] * kVecA + v][r_a[i]] = reg_a[i][v];
    }
#pragma unroll
    for (int i = 0; i < kBLoads; ++i) {
      if (!live_b[i]) continue;
#pragma unroll
      for (int v = 0; v < kVecB; ++v) smem_b[stage][kv_b[i] * kVecB + v][r_b[i]] = reg_b[i][v];
    }
  };

  const int tx = tid % kThreadsN;
  const int ty = tid / kThreadsN;
  float accum[kTm][kTn];
#pragma unroll
  for (int i = 0; i < kTm; ++i)
#pragma unroll
    for (int j = 0; j < kTn; ++j) accum[i][j] = 0.f;

  auto multiply = [&](int stage) {
#pragma unroll
    for (int k = 0; k < kTbK; ++k) {
      float a[kTm], b[kTn];
#pragma unroll
      for (int i = 0; i < kTm; ++i) a[i] = smem_a[stage][k][ty + i * kThreadsM];
#pragma unroll
      for (int j = 0; j < kTn; ++j) b[j] = smem_b[stage][k][tx + j * kThreadsN];
#pragma unroll
      for (int i = 0; i < kTm; ++i)
#pragma unroll
        for (int j = 0; j < kTn; ++j) accum[i][j] += a[i] * b[j];
    }
  };

  if (kt_begin < kt_end) {
    fetch(kt_begin);
    stash(0);
  }
  TUNA_SYNC();
  int stage = 0;
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    const bool more = kt + 1 < kt_end;
    if (kStages == 2) {
      if (more) fetch(kt + 1);  // in flight while this step multiplies
      multiply(stage);
      if (more) stash(stage ^ 1);
      TUNA_SYNC();
      stage ^= 1;
    } else {
      multiply(0);
      TUNA_SYNC();
      if (more) {
        fetch(kt + 1);
        stash(0);
      }
      TUNA_SYNC();
    }
  }

#if TUNA_DIR == 0
  tuna_elem* dst = y;
#elif TUNA_DIR == 1
  tuna_elem* dst = x;
#else
  tuna_elem* dst = w;
#endif
  (void)acc;
#pragma unroll
  for (int i = 0; i < kTm; ++i) {
#pragma unroll
    for (int j = 0; j < kTn; ++j) {
      tuna_i64 off = 0;
      if (!tuna_out_offset(p, m0 + ty + i * kThreadsM, n0 + tx + j * kThreadsN, &off)) continue;
#if TUNA_DIR == 2 && TUNA_ATOMIC
      atomicAdd(acc + off, accum[i][j]);
#else
      dst[off] = tuna_from_float<tuna_elem>(accum[i][j]);
#endif
    }
  }
}

#if TUNA_DIR == 2
// Rounds the FP32 split-K sums into dw (same strides, so element i maps to element i).
TUNA_GLOBAL void tuna_igemm_wrw_finalize(const float* acc, tuna_elem* w, tuna_i64 count) {
  for (tuna_i64 i = (tuna_i64)TUNA_BID_X * TUNA_BDIM_X + TUNA_TID_X; i < count;
       i += (tuna_i64)TUNA_GDIM_X * TUNA_BDIM_X) {
    w[i] = tuna_from_float<tuna_elem>(acc[i]);
  }
}
#endif
