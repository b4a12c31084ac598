// verify.h catches what it must (one corrupted element, NaN, Inf) and passes what it must
// (a different summation order, an FP16 rounding of the same sums).
#include <cmath>
#include <limits>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/reference/conv_test_util.h"
#include "tuner_core/numeric/fp16.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"

namespace tuna {
namespace {

using namespace reference;

struct Case {
  Problem p;
  std::vector<float> x, w, y;
};

Case ForwardCase() {
  Case c;
  c.p = testing::Make2D(2, 16, 9, 9, 8, 3, 3);
  c.p.pad = {0, 1, 1};
  c.x.resize(c.p.XDesc().ElementCount());
  c.w.resize(c.p.WDesc().ElementCount());
  FillRandom(ElementType::kFp32, c.x.data(), c.x.size(), 1);
  FillRandom(ElementType::kFp32, c.w.data(), c.w.size(), 2);
  c.y.resize(c.p.YDesc().ElementCount());
  REQUIRE(ConvForward(c.p, c.x.data(), c.w.data(), c.y.data()).ok());
  return c;
}

TEST_CASE("identical buffers pass with zero error") {
  Case c = ForwardCase();
  const auto r = VerifyConvOutput(c.p, Direction::kForward, c.y.data(), c.y.data());
  REQUIRE(r.ok());
  CHECK(r->ok);
  CHECK(r->max_abs_error == 0);
  CHECK(r->first_mismatch == -1);
  CHECK(r->reduction_length == 16 * 9);
  CHECK(r->scale > 0);
}

TEST_CASE("a different summation order passes at FP32 tolerance") {
  Case c = ForwardCase();
  // The FP64-accumulated result differs from the FP32 one only by summation rounding.
  std::vector<float> y64(c.y.size());
  REQUIRE(ConvForward(c.p, c.x.data(), c.w.data(), y64.data(),
                      {.accumulation = Accumulation::kFp64})
              .ok());
  const auto r = VerifyConvOutput(c.p, Direction::kForward, c.y.data(), y64.data());
  REQUIRE(r.ok());
  INFO(r->Summary());
  CHECK(r->ok);
  CHECK(r->max_abs_error > 0);  // they do differ somewhere
}

TEST_CASE("a single corrupted element is caught and located") {
  Case c = ForwardCase();
  const int64_t bad = 517;
  for (float delta : {1e-3f, 0.05f, -2.0f}) {
    std::vector<float> got = c.y;
    got[bad] += delta;
    const auto r = VerifyConvOutput(c.p, Direction::kForward, got.data(), c.y.data());
    REQUIRE(r.ok());
    INFO(r->Summary());
    CHECK_FALSE(r->ok);
    CHECK(r->mismatches == 1);
    CHECK(r->first_mismatch == bad);
    CHECK(r->first_got == double(got[bad]));
    CHECK(r->first_expected == double(c.y[bad]));
    CHECK(r->max_abs_error == Approx(std::fabs(delta)).epsilon(1e-3));
    // NCHW, y dims (2, 8, 1, 9, 9): 517 = 0*648 + 6*81 + 3*9 + 4.
    CHECK(r->first_location == "n=0 c=6 d=0 h=3 w=4");
  }
}

TEST_CASE("location is decoded through the layout") {
  Case c = ForwardCase();
  c.p.out_layout = Layout::kNHWC;
  std::vector<float> y(c.y.size());
  REQUIRE(ConvForward(c.p, c.x.data(), c.w.data(), y.data()).ok());
  std::vector<float> got = y;
  got[8 * 9 + 3] += 1;  // NHWC: (h=1, w=0, c=3) -> offset (1*9 + 0)*8 + 3
  const auto r = VerifyConvOutput(c.p, Direction::kForward, got.data(), y.data());
  REQUIRE(r.ok());
  CHECK(r->first_location == "n=0 c=3 d=0 h=1 w=0");
}

TEST_CASE("NaN and Inf in the result are caught") {
  Case c = ForwardCase();
  std::vector<float> got = c.y;
  got[3] = std::numeric_limits<float>::quiet_NaN();
  got[40] = std::numeric_limits<float>::infinity();
  auto r = VerifyConvOutput(c.p, Direction::kForward, got.data(), c.y.data());
  REQUIRE(r.ok());
  INFO(r->Summary());
  CHECK_FALSE(r->ok);
  CHECK(r->got_nan == 1);
  CHECK(r->got_inf == 1);
  CHECK(r->first_mismatch == 3);
  CHECK(r->mismatches == 2);
  // A buffer of all NaN must not pass either (metrics over finite pairs would be empty).
  std::fill(got.begin(), got.end(), std::numeric_limits<float>::quiet_NaN());
  r = VerifyConvOutput(c.p, Direction::kForward, got.data(), c.y.data());
  REQUIRE(r.ok());
  CHECK_FALSE(r->ok);
  CHECK(r->got_nan == int64_t(got.size()));
}

TEST_CASE("non-finite references match only the same non-finite value") {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const Tolerance tol = DefaultTolerance(DataType::kFp32);
  CHECK(Compare(std::vector<double>{1, nan, inf}, std::vector<double>{1, nan, inf}, 1, tol).ok);
  CHECK_FALSE(Compare(std::vector<double>{1, 0, inf}, std::vector<double>{1, nan, inf}, 1, tol).ok);
  CHECK_FALSE(Compare(std::vector<double>{1, nan, -inf}, std::vector<double>{1, nan, inf}, 1, tol).ok);
  CHECK_FALSE(Compare(std::vector<double>{1, 2}, std::vector<double>{1, 2, 3}, 1, tol).ok);
}

TEST_CASE("FP16 buffers: one ulp of output rounding passes, a real error does not") {
  Case c = ForwardCase();
  std::vector<Fp16> ref(c.y.size()), got(c.y.size());
  for (size_t i = 0; i < c.y.size(); ++i) ref[i] = got[i] = Fp16(c.y[i]);
  Problem p = c.p;
  p.data_type = DataType::kFp16;
  got[10] = Fp16::FromBits(got[10].bits + 1);  // one ulp
  auto r = VerifyConvOutput(p, Direction::kForward, got.data(), ref.data());
  REQUIRE(r.ok());
  INFO(r->Summary());
  CHECK(r->ok);
  got[20] = Fp16(got[20].ToFloat() + 0.25f * float(r->scale));
  r = VerifyConvOutput(p, Direction::kForward, got.data(), ref.data());
  REQUIRE(r.ok());
  CHECK_FALSE(r->ok);
  CHECK(r->first_mismatch == 20);
}

TEST_CASE("INT8 outputs must match exactly") {
  Problem p = testing::Make2D(1, 4, 4, 4, 2, 1, 1);
  p.data_type = DataType::kInt8;
  std::vector<int32_t> ref(p.YDesc().ElementCount(), 5), got = ref;
  CHECK(VerifyConvOutput(p, Direction::kForward, got.data(), ref.data())->ok);
  got[7] = 6;
  const auto r = VerifyConvOutput(p, Direction::kForward, got.data(), ref.data());
  CHECK_FALSE(r->ok);
  CHECK(r->first_mismatch == 7);
}

TEST_CASE("fills are deterministic, seed-dependent and in range") {
  const std::vector<double> a = RandomDoubles(ElementType::kFp16, 1000, 42);
  const std::vector<double> b = RandomDoubles(ElementType::kFp16, 1000, 42);
  const std::vector<double> c = RandomDoubles(ElementType::kFp16, 1000, 43);
  CHECK(a == b);
  CHECK(a != c);
  // A prefix of a longer fill equals the shorter fill.
  const std::vector<double> longer = RandomDoubles(ElementType::kFp16, 2000, 42);
  CHECK(std::vector<double>(longer.begin(), longer.begin() + 1000) == a);
  double lo = 1, hi = -1, sum = 0;
  for (double v : a) lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
  CHECK(lo >= -0.5);
  CHECK(hi <= 0.5);
  CHECK(lo < -0.45);  // spread over the range
  CHECK(hi > 0.45);
  CHECK(std::fabs(sum / 1000) < 0.05);
  const std::vector<double> ints = RandomDoubles(ElementType::kInt8, 1000, 1);
  for (double v : ints) {
    REQUIRE(v == std::round(v));
    REQUIRE(v >= -8);
    REQUIRE(v <= 8);
  }
  // A fixed value pins the generator across platforms and refactors.
  // (Values from an independent Python transcription of splitmix64.)
  CHECK(RandomValue(0, 0, 0.0, 1.0) == Approx(0.6524484863740322).epsilon(1e-15));
  CHECK(RandomValue(7, 3, 0.0, 1.0) == Approx(0.4049027192577419).epsilon(1e-15));
  CHECK(RandomValue(1, 5, -0.5, 0.5) != RandomValue(1, 6, -0.5, 0.5));
}

}  // namespace
}  // namespace tuna

namespace tuna {
namespace {

// A long FP32 reduction summed one product after another (what a naive backward-weights kernel
// does over N*Ho*Wo) against the exact sums: the RMS bound grows with sqrt(L) as the rounding
// model says, so the correct-but-sequential result passes, while a real error of the same
// size as the FP32 base bound still fails on a short reduction.
TEST_CASE("the FP32 RMS bound follows the reduction length") {
  constexpr int kOutputs = 256;
  constexpr int64_t kLength = 400000;
  std::vector<double> exact(kOutputs), sequential(kOutputs);
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(int64_t(state >> 11) % 2001 - 1000) / 1000.0;  // [-1, 1]
  };
  for (int o = 0; o < kOutputs; ++o) {
    float acc = 0;
    double ref = 0;
    for (int64_t l = 0; l < kLength; ++l) {
      const float a = float(next()), b = float(next());
      acc += a * b;
      ref += double(a) * double(b);
    }
    sequential[o] = acc;
    exact[o] = ref;
  }
  const Tolerance tol = DefaultTolerance(DataType::kFp32);
  const VerifyReport long_sum = Compare(sequential, exact, kLength, tol);
  INFO(long_sum.Summary());
  CHECK(long_sum.rms_error > tol.rms);  // the fixed bound alone would reject a correct kernel
  CHECK(long_sum.ok);

  // The same relative error on a 9-term reduction is a real defect.
  const VerifyReport short_sum = Compare(sequential, exact, 9, tol);
  CHECK_FALSE(short_sum.ok);
}

}  // namespace
}  // namespace tuna
