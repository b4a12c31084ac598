// Double -> narrow float formats with a single rounding.
//
// Rounding double -> float -> FP16/BF16 with round-to-nearest twice can be off by one ulp
// (double rounding). Rounding the first step to odd instead (truncate, then set the lowest bit
// if anything was dropped) keeps a sticky bit, which makes the second round-to-nearest-even
// step exact whenever the intermediate format has at least two more bits of precision than the
// target: float (24 bits) vs FP16 (11) and BF16 (8), including in each target's subnormal range.
// Thread-safe: pure functions on values.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "tuner_core/numeric/bf16.h"
#include "tuner_core/numeric/fp16.h"

namespace tuna {

inline float DoubleToFloatRoundToOdd(double d) {
  float f = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(f) == d) return f;  // exact (incl. inf, nan)
  uint32_t bits = std::bit_cast<uint32_t>(f);
  // Round-to-nearest may have rounded away from zero; step back to the truncated value.
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) --bits;
  return std::bit_cast<float>(bits | 1u);
}

inline uint16_t DoubleToFp16Bits(double d) { return FloatToFp16Bits(DoubleToFloatRoundToOdd(d)); }
inline uint16_t DoubleToBf16Bits(double d) { return FloatToBf16Bits(DoubleToFloatRoundToOdd(d)); }

}  // namespace tuna
