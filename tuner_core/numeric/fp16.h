// IEEE 754 binary16 ("half", FP16) as a storage type.
//
// Fp16 only stores bits; arithmetic is done after converting to float. Both conversions are
// exact bit manipulations (no dependence on compiler _Float16 support or the FPU's rounding
// mode), so every module that stores FP16 (reference, CPU kernels, verification) rounds the
// same way:
//   - float -> Fp16 rounds to nearest, ties to even, including into and out of the subnormal
//     range; magnitudes >= 65520 become infinity (65504 is the largest finite value).
//   - NaN stays NaN of the same sign: the top 10 payload bits are kept and the quiet bit is
//     set, so a NaN never turns into infinity.
//   - Fp16 -> float is exact for every encoding (all FP16 values are floats).
// Thread-safe: pure functions on values.
#pragma once

#include <bit>
#include <cstdint>

#include "tuner_core/numeric/storage16.h"

namespace tuna {

inline uint16_t FloatToFp16Bits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  const uint32_t abs = f & 0x7fffffffu;
  const uint32_t exp = abs >> 23;
  const uint32_t mant = abs & 0x7fffffu;
  if (exp == 0xff) {  // Inf or NaN
    if (mant == 0) return sign | 0x7c00u;
    return static_cast<uint16_t>(sign | 0x7e00u | (mant >> 13));
  }
  if (exp >= 143) return sign | 0x7c00u;  // >= 2^16: overflows even before rounding
  if (exp >= 113) {
    // Normal half: rebias exponent (127 -> 15), keep 10 mantissa bits and round the other 13.
    // A carry out of the mantissa increments the exponent, and out of exponent 30 gives
    // exactly 0x7c00 (infinity), which is the correctly rounded result.
    uint32_t h = ((exp - 112) << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal half (or zero): value = m * 2^(exp-150) with the implicit bit, in units of the
  // half subnormal step 2^-24 that is m >> (126 - exp). Below 2^-25 (exp < 102) everything,
  // including the tie at exactly 2^-25, rounds to zero.
  if (exp < 102) return sign;
  const uint32_t m = mant | 0x800000u;
  const uint32_t shift = 126 - exp;  // 14..24
  uint32_t h = m >> shift;
  const uint32_t rest = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rest > half || (rest == half && (h & 1u))) ++h;  // may carry into the smallest normal
  return static_cast<uint16_t>(sign | h);
}

inline float Fp16BitsToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// The storage type: bits only (storage16.h).
using Fp16 = Float16Storage<FloatToFp16Bits, Fp16BitsToFloat, 0x7c00, 0x3ff>;

static_assert(sizeof(Fp16) == 2);

}  // namespace tuna
