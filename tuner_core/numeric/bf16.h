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

struct Bf16 {
  uint16_t bits = 0;

  Bf16() = default;
  explicit Bf16(float v) : bits(FloatToBf16Bits(v)) {}
  static constexpr Bf16 FromBits(uint16_t b) {
    Bf16 h;
    h.bits = b;
    return h;
  }
  float ToFloat() const { return Bf16BitsToFloat(bits); }
  explicit operator float() const { return ToFloat(); }

  bool IsNan() const { return (bits & 0x7f80u) == 0x7f80u && (bits & 0x7fu) != 0; }
  bool IsInf() const { return (bits & 0x7fffu) == 0x7f80u; }
  bool operator==(const Bf16&) const = default;  // bitwise
};

static_assert(sizeof(Bf16) == 2);

}  // namespace tuna
