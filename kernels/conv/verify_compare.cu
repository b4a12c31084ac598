// The evaluator's comparison of a result with the reference, on the device: the sums of
// tuner_core/reference/verify.h (Compare) over two device buffers of the same element type, so
// that only a few numbers travel to the host per candidate instead of the whole output.
//
// Options: -DTUNA_VERIFY_FP32 | FP16 | BF16 (the element type of both buffers).
// Arguments: got, expected, count, element_rel, abs_bound, sums (8 x u64, zeroed by the caller):
//   sums[0] elements failing the per-element check
//   sums[1] the lowest failing index (initialised to ~0 by the caller: atomicMin)
//   sums[2] NaN elements of got, sums[3] infinite elements of got
//   sums[4] max |got - expected| over elements where both are finite (double bits: atomicMax on
//           the bits orders non-negative doubles correctly)
//   sums[5] max |got| over finite got (double bits)
//   sums[6] sum of (got - expected)^2 over elements where both are finite (a double, atomicAdd)
// Differences and bounds are computed in double, as the host comparison does.
#include "common/portability.h"

#if defined(TUNA_VERIFY_FP32)
typedef float tuna_verify_t;
#elif defined(TUNA_VERIFY_FP16)
typedef tuna_half tuna_verify_t;
#elif defined(TUNA_VERIFY_BF16)
typedef tuna_bf16 tuna_verify_t;
#else
#error "verify_compare.cu needs -DTUNA_VERIFY_FP32, FP16 or BF16"
#endif

#define TUNA_VERIFY_THREADS 256

TUNA_DEVICE bool tuna_verify_finite(double v) { return v == v && v - v == 0.0; }
TUNA_DEVICE unsigned long long tuna_verify_bits(double v) {
  return (unsigned long long)__double_as_longlong(v);
}

TUNA_GLOBAL void TUNA_LAUNCH_BOUNDS(TUNA_VERIFY_THREADS)
    verify_compare(const tuna_verify_t* got, const tuna_verify_t* expected, tuna_i64 count,
                   double element_rel, double abs_bound, unsigned long long* sums) {
  unsigned long long mismatches = 0, first = ~0ull, nans = 0, infs = 0;
  double max_abs = 0, max_got = 0, sum_sq = 0;
  for (tuna_i64 i = (tuna_i64)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += (tuna_i64)gridDim.x * blockDim.x) {
    const double g = (double)tuna_to_float(got[i]);
    const double e = (double)tuna_to_float(expected[i]);
    const bool g_finite = tuna_verify_finite(g), e_finite = tuna_verify_finite(e);
    if (g != g) {
      ++nans;
    } else if (!g_finite) {
      ++infs;
    } else {
      max_got = fmax(max_got, fabs(g));
    }
    bool pass;
    if (!g_finite || !e_finite) {
      pass = (e != e) ? (g != g) : (g == e);  // NaN matches NaN, an infinity the same one
    } else {
      const double d = fabs(g - e);
      sum_sq += d * d;
      max_abs = fmax(max_abs, d);
      pass = d <= element_rel * fabs(e) + abs_bound;
    }
    if (!pass) {
      ++mismatches;
      if ((unsigned long long)i < first) first = (unsigned long long)i;
    }
  }

  TUNA_SHARED unsigned long long s_u[4][TUNA_VERIFY_THREADS];
  TUNA_SHARED double s_d[3][TUNA_VERIFY_THREADS];
  const int t = threadIdx.x;
  s_u[0][t] = mismatches;
  s_u[1][t] = first;
  s_u[2][t] = nans;
  s_u[3][t] = infs;
  s_d[0][t] = max_abs;
  s_d[1][t] = max_got;
  s_d[2][t] = sum_sq;
  TUNA_SYNC();
  for (int half = TUNA_VERIFY_THREADS / 2; half > 0; half /= 2) {
    if (t < half) {
      s_u[0][t] += s_u[0][t + half];
      s_u[1][t] = s_u[1][t] < s_u[1][t + half] ? s_u[1][t] : s_u[1][t + half];
      s_u[2][t] += s_u[2][t + half];
      s_u[3][t] += s_u[3][t + half];
      s_d[0][t] = fmax(s_d[0][t], s_d[0][t + half]);
      s_d[1][t] = fmax(s_d[1][t], s_d[1][t + half]);
      s_d[2][t] += s_d[2][t + half];
    }
    TUNA_SYNC();
  }
  if (t == 0) {
    if (s_u[0][0] > 0) atomicAdd(&sums[0], s_u[0][0]);
    if (s_u[1][0] != ~0ull) atomicMin(&sums[1], s_u[1][0]);
    if (s_u[2][0] > 0) atomicAdd(&sums[2], s_u[2][0]);
    if (s_u[3][0] > 0) atomicAdd(&sums[3], s_u[3][0]);
    atomicMax(&sums[4], tuna_verify_bits(s_d[0][0]));
    atomicMax(&sums[5], tuna_verify_bits(s_d[1][0]));
    atomicAdd(reinterpret_cast<double*>(&sums[6]), s_d[2][0]);
  }
}
