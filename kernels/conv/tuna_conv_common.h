// Shared pieces of tuna's tunable GPU convolution kernels (tuna_igemm.cu, tuna_direct_tiled.cu):
// the element type chosen by -DTUNA_DTYPE and the small integer helpers both kernels use.
//
// -DTUNA_DTYPE: 0 = FP32 (float), 1 = FP16 (tuna_half), 2 = BF16 (tuna_bf16). Arithmetic is
// always FP32; 16-bit values are converted on load and rounded once on store.
#pragma once

#include "common/portability.h"

#include "conv/elem_type.h"

// Loads `n` consecutive elements starting at p (p aligned to n elements when n > 1) as floats.
template <int n>
TUNA_DEVICE void tuna_load_floats(const tuna_elem* p, float* out) {
  if (n == 1) {
    out[0] = tuna_to_float(p[0]);
  } else {
    const tuna_vec<tuna_elem, n> v = tuna_load_vec<tuna_elem, n>(p);
#pragma unroll
    for (int i = 0; i < n; ++i) out[i] = tuna_to_float(v.v[i]);
  }
}

// Floor division of compile-time constants (negative numerators round down): the sub-pixel
// phase arithmetic of the gather kernels (depthwise.cu, thin_bwd.cu).
#define TUNA_FLOORDIV(a, b) ((a) >= 0 ? (a) / (b) : -((-(a) + (b) - 1) / (b)))

