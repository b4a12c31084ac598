// A 16-bit floating-point storage type (Fp16, Bf16): the bits of one value and nothing else;
// arithmetic is done after converting to float. The format is given by its conversions
// (`kFromFloat`, `kToFloat`) and the masks of its exponent and mantissa fields; each format is its
// own type. Thread-safe: pure functions on values.
#pragma once

#include <cstdint>

namespace tuna {

template <uint16_t (*kFromFloat)(float), float (*kToFloat)(uint16_t), uint16_t kExponentMask,
          uint16_t kMantissaMask>
struct Float16Storage {
  uint16_t bits = 0;

  Float16Storage() = default;
  explicit Float16Storage(float v) : bits(kFromFloat(v)) {}
  static constexpr Float16Storage FromBits(uint16_t b) {
    Float16Storage h;
    h.bits = b;
    return h;
  }
  float ToFloat() const { return kToFloat(bits); }
  explicit operator float() const { return ToFloat(); }

  bool IsNan() const { return (bits & kExponentMask) == kExponentMask && (bits & kMantissaMask) != 0; }
  bool IsInf() const { return (bits & 0x7fffu) == kExponentMask; }
  // Bitwise equality (so +0 != -0 and NaN == NaN with the same payload): what storage
  // comparisons want.
  bool operator==(const Float16Storage&) const = default;
};

}  // namespace tuna
