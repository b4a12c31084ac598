// gpu::MakeFastDiv: the magic numbers the Hopper TMA kernel divides by (n / d as umulhi(n, mul)
// >> shr) give the exact quotient for every dividend a kernel index can take (0 <= n < 2^31).
#include <cstdint>
#include <random>

#include "catch2/catch.hpp"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver::gpu {
namespace {

void CheckDivisor(int64_t d, std::mt19937_64& rng) {
  const FastDiv f = MakeFastDiv(d);
  const int64_t top = (int64_t{1} << 31) - 1;
  std::uniform_int_distribution<int64_t> any(0, top);
  // Around every multiple boundary a kernel is likely to hit, the top of the range, and at random.
  for (int64_t q : {int64_t{0}, int64_t{1}, int64_t{2}, top / d - 1, top / d}) {
    for (int64_t delta : {int64_t{-1}, int64_t{0}, int64_t{1}}) {
      const int64_t n = q * d + delta;
      if (n < 0 || n > top) continue;
      INFO("d " << d << " n " << n);
      REQUIRE(ApplyFastDiv(f, n) == n / d);
    }
  }
  for (int i = 0; i < 2000; ++i) {
    const int64_t n = any(rng);
    INFO("d " << d << " n " << n);
    REQUIRE(ApplyFastDiv(f, n) == n / d);
  }
}

TEST_CASE("fast division is exact for every 31-bit dividend", "[fast_div]") {
  std::mt19937_64 rng(17);
  for (int64_t d = 1; d <= 4096; ++d) CheckDivisor(d, rng);
  for (int b = 12; b < 31; ++b) {
    for (int64_t d : {(int64_t{1} << b) - 1, int64_t{1} << b, (int64_t{1} << b) + 1}) CheckDivisor(d, rng);
  }
  std::uniform_int_distribution<int64_t> divisor(1, (int64_t{1} << 31) - 1);
  for (int i = 0; i < 2000; ++i) CheckDivisor(divisor(rng), rng);
  // Every dividend for a few divisors a ResNet-50 layer decodes by (pixels per image, N-tiles).
  for (int64_t d : {int64_t{3136}, int64_t{56}, int64_t{7}}) {
    const FastDiv f = MakeFastDiv(d);
    for (int64_t n = 0; n < (int64_t{1} << 24); n += 1) {
      if (ApplyFastDiv(f, n) != n / d) FAIL("d " << d << " n " << n);
    }
  }
  REQUIRE(MakeFastDiv(1).mul == 0);
}

}  // namespace
}  // namespace tuna::solver::gpu
