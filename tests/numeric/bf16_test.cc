#include "tuner_core/numeric/bf16.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "catch2/catch.hpp"
#include "tuner_core/numeric/round_to_odd.h"

namespace tuna {
namespace {

// Independent oracle working in double: the nearest of the truncated BF16 and the next one up,
// ties to the even encoding; beyond max + half ulp, infinity.
uint16_t OracleBf16(double v) {
  if (std::isnan(v)) return 0x7fc0;
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  const double a = std::fabs(v);
  const double max = Bf16BitsToFloat(0x7f7f);
  if (a >= max + std::ldexp(1.0, 127 - 8)) return sign | 0x7f80;
  int lo = 0, hi = 0x7f7f;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (double(Bf16BitsToFloat(uint16_t(mid))) <= a) lo = mid;
    else hi = mid - 1;
  }
  if (lo == 0x7f7f) return sign | 0x7f7f;
  const double below = Bf16BitsToFloat(uint16_t(lo)), above = Bf16BitsToFloat(uint16_t(lo + 1));
  int pick;
  if (a - below < above - a) pick = lo;
  else if (a - below > above - a) pick = lo + 1;
  else pick = (lo % 2 == 0) ? lo : lo + 1;
  return sign | uint16_t(pick);
}

float Bits(uint32_t b) { return std::bit_cast<float>(b); }

TEST_CASE("bf16: known encodings and ties to even") {
  CHECK(FloatToBf16Bits(1.0f) == 0x3f80);
  CHECK(FloatToBf16Bits(-2.0f) == 0xc000);
  CHECK(FloatToBf16Bits(-0.0f) == 0x8000);
  CHECK(Bf16BitsToFloat(0x3f81) == 1.0f + 0x1.0p-7f);
  CHECK(FloatToBf16Bits(1.0f + 0x1.0p-8f) == 0x3f80);      // tie, down to even
  CHECK(FloatToBf16Bits(1.0f + 3 * 0x1.0p-8f) == 0x3f82);  // tie, up to even
  CHECK(FloatToBf16Bits(std::nextafter(1.0f + 0x1.0p-8f, 2.0f)) == 0x3f81);
  CHECK(FloatToBf16Bits(2.0f - 0x1.0p-10f) == 0x4000);  // carry into the exponent
  CHECK(FloatToBf16Bits(3.140625f) == 0x4049);
}

TEST_CASE("bf16: overflow, subnormals, inf and nan") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(FloatToBf16Bits(std::numeric_limits<float>::max()) == 0x7f80);  // rounds past max
  CHECK(FloatToBf16Bits(Bf16BitsToFloat(0x7f7f)) == 0x7f7f);
  CHECK(FloatToBf16Bits(inf) == 0x7f80);
  CHECK(FloatToBf16Bits(-inf) == 0xff80);
  CHECK(FloatToBf16Bits(Bits(0x00008000u)) == 0x0000);  // subnormal tie -> even 0
  CHECK(FloatToBf16Bits(Bits(0x00018000u)) == 0x0002);  // subnormal tie -> even 2
  CHECK(FloatToBf16Bits(Bits(0x00008001u)) == 0x0001);
  CHECK(Bf16BitsToFloat(0x0001) == Bits(0x00010000u));
  for (uint32_t bits : {0x7fc00000u, 0x7f800001u, 0xff80ffffu, 0x7fffffffu}) {
    const Bf16 b(Bits(bits));
    CHECK(b.IsNan());  // never rounds into infinity
    CHECK(std::isnan(b.ToFloat()));
    CHECK(((b.bits & 0x8000) != 0) == ((bits & 0x80000000u) != 0));
  }
  CHECK(Bf16::FromBits(0x7f80).IsInf());
  CHECK_FALSE(Bf16::FromBits(0x7f80).IsNan());
}

TEST_CASE("bf16: every encoding round-trips through float") {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const Bf16 v = Bf16::FromBits(uint16_t(b));
    const float f = v.ToFloat();
    if (v.IsNan()) {
      REQUIRE(Bf16(f).IsNan());
    } else {
      REQUIRE(FloatToBf16Bits(f) == uint16_t(b));
    }
  }
}

TEST_CASE("bf16: strided sweep of all float bit patterns matches the oracle") {
  for (uint64_t b = 0; b < (uint64_t(1) << 32); b += 4093) {
    const float f = Bits(uint32_t(b));
    if (std::isnan(f)) {
      REQUIRE(Bf16(f).IsNan());
      continue;
    }
    REQUIRE(FloatToBf16Bits(f) == OracleBf16(f));
  }
  // Every midpoint between adjacent positive values below 1.0e-30 .. 1e30 region, sampled.
  for (uint32_t b = 0; b < 0x7f7f; b += 7) {
    const float mid = Bits((b << 16) | 0x8000u);  // exact tie
    REQUIRE(FloatToBf16Bits(mid) == OracleBf16(mid));
    REQUIRE(FloatToBf16Bits(std::nextafter(mid, 0.0f)) == OracleBf16(std::nextafter(mid, 0.0f)));
  }
}

TEST_CASE("bf16: double conversion rounds once") {
  CHECK(DoubleToBf16Bits(1.0 + 0x1.0p-8 + 0x1.0p-40) == 0x3f81);
  CHECK(DoubleToBf16Bits(1.0 + 0x1.0p-8) == 0x3f80);
  CHECK(DoubleToBf16Bits(1e300) == 0x7f80);
  uint64_t s = 987654321;
  for (int i = 0; i < 200000; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    const double d = std::ldexp(double(s >> 11) * 0x1.0p-53, int(s % 200) - 100) *
                     ((s >> 7) & 1 ? -1 : 1);
    REQUIRE(DoubleToBf16Bits(d) == OracleBf16(d));
  }
}

}  // namespace
}  // namespace tuna
