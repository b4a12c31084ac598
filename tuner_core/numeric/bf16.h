// bfloat16 (BF16: 1 sign, 8 exponent, 7 mantissa bits; the top half of a float) as a storage
// type.
//
// float -> Bf16 rounds to nearest, ties to even; finite values that round past the largest
// BF16 (about 3.39e38) become infinity, as IEEE rounding requires. NaN stays NaN of the same
// sign (quiet bit set, top payload bits kept), never infinity. Subnormals need no special case:
// BF16 shares float's exponent range, so they round like any other value.
// Bf16 -> float is exact (a 16-bit shift).
// Thread-safe: pure functions on values.
#pragma once

#include <bit>
#include <cstdint>

#include "tuner_core/numeric/storage16.h"

namespace tuna {

inline uint16_t FloatToBf16Bits(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x0040u);
  // Adding 0x7fff plus the lowest kept bit rounds half to even; a carry propagates into the
  // exponent (and from the largest finite value into infinity) as rounding requires.
  const uint32_t rounded = f + 0x7fffu + ((f >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

inline float Bf16BitsToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

// The storage type: bits only (storage16.h).
using Bf16 = Float16Storage<FloatToBf16Bits, Bf16BitsToFloat, 0x7f80, 0x7f>;

static_assert(sizeof(Bf16) == 2);

}  // namespace tuna
