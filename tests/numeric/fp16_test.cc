#include "tuner_core/numeric/fp16.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "catch2/catch.hpp"
#include "tuner_core/numeric/round_to_odd.h"

namespace tuna {
namespace {

// Independent oracle: the nearest finite FP16 by binary search over the (monotonic) positive
// encodings, ties to the even encoding, |v| >= 65520 (max + half ulp) to infinity.
uint16_t OracleFp16(double v) {
  if (std::isnan(v)) return 0x7e00;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  if (a >= 65520.0) return sign | 0x7c00;
  int lo = 0, hi = 0x7bff;  // largest encoding with value <= a
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (double(Fp16BitsToFloat(uint16_t(mid))) <= a) lo = mid;
    else hi = mid - 1;
  }
  if (lo == 0x7bff) return sign | 0x7bff;
  const double below = Fp16BitsToFloat(uint16_t(lo)), above = Fp16BitsToFloat(uint16_t(lo + 1));
  int pick;
  if (a - below < above - a) pick = lo;
  else if (a - below > above - a) pick = lo + 1;
  else pick = (lo % 2 == 0) ? lo : lo + 1;
  return sign | uint16_t(pick);
}

float Bits(uint32_t b) { return std::bit_cast<float>(b); }

TEST_CASE("fp16: known encodings") {
  CHECK(FloatToFp16Bits(0.0f) == 0x0000);
  CHECK(FloatToFp16Bits(-0.0f) == 0x8000);
  CHECK(FloatToFp16Bits(1.0f) == 0x3c00);
  CHECK(FloatToFp16Bits(-2.0f) == 0xc000);
  CHECK(FloatToFp16Bits(0.5f) == 0x3800);
  CHECK(FloatToFp16Bits(65504.0f) == 0x7bff);
  CHECK(FloatToFp16Bits(0x1.0p-14f) == 0x0400);  // smallest normal
  CHECK(FloatToFp16Bits(0x1.0p-24f) == 0x0001);  // smallest subnormal
  CHECK(Fp16BitsToFloat(0x3555) == 0x1.554p-2f);
  CHECK(Fp16BitsToFloat(0x0001) == 0x1.0p-24f);
  CHECK(Fp16BitsToFloat(0x03ff) == 1023 * 0x1.0p-24f);
  CHECK(Fp16BitsToFloat(0x7bff) == 65504.0f);
  CHECK(std::signbit(Fp16BitsToFloat(0x8000)));
}

TEST_CASE("fp16: round to nearest, ties to even") {
  // Ties at 1.0 (ulp 2^-10): 1 + 2^-11 goes down to even 0x3c00, 1 + 3*2^-11 up to 0x3c02.
  CHECK(FloatToFp16Bits(1.0f + 0x1.0p-11f) == 0x3c00);
  CHECK(FloatToFp16Bits(1.0f + 3 * 0x1.0p-11f) == 0x3c02);
  CHECK(FloatToFp16Bits(std::nextafter(1.0f + 0x1.0p-11f, 2.0f)) == 0x3c01);
  CHECK(FloatToFp16Bits(std::nextafter(1.0f + 3 * 0x1.0p-11f, 0.0f)) == 0x3c01);
  CHECK(FloatToFp16Bits(-(1.0f + 0x1.0p-11f)) == 0xbc00);
  // Rounding that carries into the exponent: just under 2 rounds up to 2.0.
  CHECK(FloatToFp16Bits(2.0f - 0x1.0p-12f) == 0x4000);
  // Overflow: 65520 is the tie between 65504 and 65536 (odd mantissa) so it becomes inf.
  CHECK(FloatToFp16Bits(65519.99f) == 0x7bff);
  CHECK(FloatToFp16Bits(65520.0f) == 0x7c00);
  CHECK(FloatToFp16Bits(-65520.0f) == 0xfc00);
  CHECK(FloatToFp16Bits(1e10f) == 0x7c00);
  CHECK(FloatToFp16Bits(std::numeric_limits<float>::max()) == 0x7c00);
}

TEST_CASE("fp16: subnormals and underflow") {
  CHECK(FloatToFp16Bits(0x1.0p-25f) == 0x0000);  // tie between 0 and 2^-24: even is 0
  CHECK(FloatToFp16Bits(-0x1.0p-25f) == 0x8000);
  CHECK(FloatToFp16Bits(std::nextafter(0x1.0p-25f, 1.0f)) == 0x0001);
  CHECK(FloatToFp16Bits(3 * 0x1.0p-25f) == 0x0002);  // tie between 1 and 2 ulps: even 2
  CHECK(FloatToFp16Bits(5 * 0x1.0p-25f) == 0x0002);  // tie between 2 and 3: even 2
  CHECK(FloatToFp16Bits(1023.5f * 0x1.0p-24f) == 0x0400);  // largest subnormal + half -> normal
  CHECK(FloatToFp16Bits(1022.5f * 0x1.0p-24f) == 0x03fe);
  CHECK(FloatToFp16Bits(1e-30f) == 0x0000);
  CHECK(FloatToFp16Bits(std::numeric_limits<float>::denorm_min()) == 0x0000);
}

TEST_CASE("fp16: inf and nan") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(FloatToFp16Bits(inf) == 0x7c00);
  CHECK(FloatToFp16Bits(-inf) == 0xfc00);
  CHECK(std::isinf(Fp16BitsToFloat(0x7c00)));
  CHECK(Fp16BitsToFloat(0xfc00) == -inf);
  CHECK(Fp16::FromBits(0x7c00).IsInf());
  CHECK_FALSE(Fp16::FromBits(0x7c00).IsNan());
  // A NaN whose payload lies only in the bits FP16 drops must not become infinity.
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xff800001u, 0x7f801fffu, 0xffffffffu}) {
    const Fp16 h(Bits(bits));
    CHECK(h.IsNan());
    CHECK(std::isnan(h.ToFloat()));
    CHECK(((h.bits & 0x8000) != 0) == ((bits & 0x80000000u) != 0));
  }
  CHECK(std::isnan(Fp16BitsToFloat(0x7e00)));
  CHECK(std::isnan(Fp16BitsToFloat(0x7c01)));
}

TEST_CASE("fp16: every encoding round-trips through float") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t h = uint16_t(b);
    const float f = Fp16BitsToFloat(h);
    const Fp16 v = Fp16::FromBits(h);
    if (v.IsNan()) {
      REQUIRE(std::isnan(f));
      REQUIRE(Fp16(f).IsNan());
      REQUIRE((Fp16(f).bits & 0x3ff) == (h & 0x3ff | 0x200));  // payload kept, quieted
    } else {
      REQUIRE(FloatToFp16Bits(f) == h);
      REQUIRE(OracleFp16(f) == h);
    }
  }
}

TEST_CASE("fp16: all midpoints and their neighbours match the oracle") {
  // For every pair of adjacent finite positive values, the exact midpoint (a tie) and the
  // floats just either side of it.
  for (uint32_t b = 0; b < 0x7bff; ++b) {
    const double lo = Fp16BitsToFloat(uint16_t(b)), hi = Fp16BitsToFloat(uint16_t(b + 1));
    const float mid = float((lo + hi) / 2);
    REQUIRE(double(mid) == (lo + hi) / 2);  // exact in float
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      REQUIRE(FloatToFp16Bits(f) == OracleFp16(f));
      REQUIRE(FloatToFp16Bits(-f) == OracleFp16(-f));
    }
  }
}

TEST_CASE("fp16: strided sweep of all float bit patterns matches the oracle") {
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 4093) {
    const float f = Bits(uint32_t(b));
    if (std::isnan(f)) {
      REQUIRE(Fp16(f).IsNan());
      continue;
    }
    REQUIRE(FloatToFp16Bits(f) == OracleFp16(f));
  }
}

TEST_CASE("fp16: double conversion rounds once") {
  // 1 + 2^-11 + 2^-40 is just above a tie; rounding to float first would land on the tie and
  // then round down to 1.0.
  CHECK(DoubleToFp16Bits(1.0 + 0x1.0p-11 + 0x1.0p-40) == 0x3c01);
  CHECK(DoubleToFp16Bits(1.0 + 0x1.0p-11) == 0x3c00);
  CHECK(DoubleToFp16Bits(1.0 + 0x1.0p-11 - 0x1.0p-40) == 0x3c00);
  CHECK(DoubleToFp16Bits(65520.0 - 1e-9) == 0x7bff);
  CHECK(DoubleToFp16Bits(1e300) == 0x7c00);
  CHECK(DoubleToFp16Bits(-1e-300) == 0x8000);
  CHECK(DoubleToFp16Bits(0x1.0p-25 + 0x1.0p-60) == 0x0001);
  CHECK(Fp16::FromBits(DoubleToFp16Bits(std::nan(""))).IsNan());
  // A deterministic sweep of doubles against the oracle.
  uint64_t s = 12345;
  for (int i = 0; i < 200000; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double d = std::ldexp(double(s >> 11) * 0x1.0p-53, int(s % 48) - 30) *
                     ((s >> 7) & 1 ? -1 : 1);
    REQUIRE(DoubleToFp16Bits(d) == OracleFp16(d));
  }
}

}  // namespace
}  // namespace tuna
