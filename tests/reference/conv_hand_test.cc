// Hand-computed cases, compared exactly (all values are small integers, so every sum is exact
// in FP32).
#include <vector>

#include "catch2/catch.hpp"
#include "tests/reference/conv_test_util.h"
#include "tuner_core/reference/reference_conv.h"

namespace tuna {
namespace {

using reference::ConvBackwardData;
using reference::ConvBackwardWeights;
using reference::ConvForward;

std::vector<float> Iota(int64_t n, float start = 1) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start + float(i);
  return v;
}

TEST_CASE("1x1 convolution is a matrix product") {
  // y[n][k][p] = sum_c W[k][c] * x[n][c][p] for every pixel p.
  Problem p = testing::Make2D(2, 3, 2, 3, 4, 1, 1);
  const std::vector<float> x = Iota(p.XDesc().ElementCount());        // 2x3x(2x3)
  const std::vector<float> w = {1, 0, -1, 2, 1, 0, 0, 3, 1, -2, 1, 1};  // 4x3
  std::vector<float> y(p.YDesc().ElementCount(), 99.0f);
  REQUIRE(ConvForward(p, x.data(), w.data(), y.data(), {.threads = 2}).ok());
  std::vector<float> expected(y.size());
  for (int n = 0; n < 2; ++n)
    for (int k = 0; k < 4; ++k)
      for (int px = 0; px < 6; ++px) {
        float s = 0;
        for (int c = 0; c < 3; ++c) s += w[k * 3 + c] * x[(n * 3 + c) * 6 + px];
        expected[(n * 4 + k) * 6 + px] = s;
      }
  CHECK(y == expected);
  // One element by hand: n=0, k=1 (weights 2,1,0), pixel 0: 2*1 + 1*7 + 0*13 = 9.
  CHECK(y[1 * 6 + 0] == 9.0f);
}

TEST_CASE("3x3 padded convolution on a 3x3 image") {
  Problem p = testing::Make2D(1, 1, 3, 3, 1, 3, 3);
  p.pad = {0, 1, 1};
  const std::vector<float> x = Iota(9);  // 1..9 row-major
  SECTION("all-ones filter sums each neighbourhood") {
    const std::vector<float> w(9, 1.0f);
    std::vector<float> y(9);
    REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
    CHECK(y == std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28});
  }
  SECTION("top-left tap is cross-correlation (no filter flip): y[i,j] = x[i-1,j-1]") {
    std::vector<float> w(9, 0.0f);
    w[0] = 1.0f;
    std::vector<float> y(9);
    REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
    CHECK(y == std::vector<float>{0, 0, 0, 0, 1, 2, 0, 4, 5});
  }
  SECTION("backward data with ones counts the outputs touching each input") {
    const std::vector<float> dy(9, 1.0f), w(9, 1.0f);
    std::vector<float> dx(9);
    REQUIRE(ConvBackwardData(p, dy.data(), w.data(), dx.data()).ok());
    CHECK(dx == std::vector<float>{4, 6, 4, 6, 9, 6, 4, 6, 4});
  }
  SECTION("backward weights with ones sums the shifted image") {
    const std::vector<float> dy(9, 1.0f);
    std::vector<float> dw(9);
    REQUIRE(ConvBackwardWeights(p, x.data(), dy.data(), dw.data()).ok());
    CHECK(dw == std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28});
  }
}

TEST_CASE("strided dilated 1x2 filter along W") {
  // W=7, filter taps 3 apart (dilation 3), stride 2, pad 1: y[o] = w0*x[2o-1] + w1*x[2o+2].
  Problem p = testing::Make2D(1, 1, 1, 7, 1, 1, 2);
  p.dilation = {1, 1, 3}, p.stride = {1, 1, 2}, p.pad = {0, 0, 1};
  REQUIRE(p.Out()[2] == 3);
  const std::vector<float> x = Iota(7), w = {10, 1};
  std::vector<float> y(3);
  REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
  CHECK(y == std::vector<float>{3, 25, 47});  // 0+3, 10*2+5, 10*4+7
  const std::vector<float> dy = {1, 2, 3};
  std::vector<float> dx(7, -5.0f);
  REQUIRE(ConvBackwardData(p, dy.data(), w.data(), dx.data()).ok());
  CHECK(dx == std::vector<float>{0, 20, 1, 30, 2, 0, 3});
  std::vector<float> dw(2);
  REQUIRE(ConvBackwardWeights(p, x.data(), dy.data(), dw.data()).ok());
  CHECK(dw == std::vector<float>{16, 34});  // 2*2+3*4, 1*3+2*5+3*7
}

TEST_CASE("strided dilated 2D case with two output rows") {
  // 5x5 image 1..25, 2x2 filter, dilation 2, stride 3, no pad: out 1x1? (5-3)/3+1 = 1.
  // Use stride 2 instead: out (5-3)/2+1 = 2 per dim. y[i,j] = sum_{a,b} w[a,b] x[2i+2a, 2j+2b].
  Problem p = testing::Make2D(1, 1, 5, 5, 1, 2, 2);
  p.dilation = {1, 2, 2}, p.stride = {1, 2, 2};
  const std::vector<float> x = Iota(25), w = {1, 2, 3, 4};
  std::vector<float> y(4);
  REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
  // (0,0): 1*x[0,0] + 2*x[0,2] + 3*x[2,0] + 4*x[2,2] = 1 + 6 + 33 + 52 = 92; each step right
  // adds 2*(1+2+3+4) = 20, each step down adds 10*10 = 100.
  CHECK(y == std::vector<float>{92, 112, 192, 212});
}

TEST_CASE("groups do not mix channels") {
  // 2 groups, 1x1: y[k] = w[k] * x[k]; a cross-group term would add the other channel.
  Problem p = testing::Make2D(1, 2, 1, 2, 2, 1, 1);
  p.groups = 2;
  const std::vector<float> x = {1, 2, 10, 20}, w = {3, 5};
  std::vector<float> y(4);
  REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
  CHECK(y == std::vector<float>{3, 6, 50, 100});
  std::vector<float> dx(4);
  REQUIRE(ConvBackwardData(p, y.data(), w.data(), dx.data()).ok());
  CHECK(dx == std::vector<float>{9, 18, 250, 500});
}

TEST_CASE("3D 2x2x2 filter of ones over a 2x2x2 volume") {
  Problem p = testing::Make3D(1, 1, 2, 2, 2, 1, 2, 2, 2);
  const std::vector<float> x = Iota(8), w(8, 1.0f);
  std::vector<float> y(1);
  REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
  CHECK(y[0] == 36.0f);
  // Depth padding 1: out depth 3, the middle slice sees both input slices.
  p.pad = {1, 0, 0};
  std::vector<float> y3(3);
  REQUIRE(ConvForward(p, x.data(), w.data(), y3.data()).ok());
  CHECK(y3 == std::vector<float>{1 + 2 + 3 + 4, 36, 5 + 6 + 7 + 8});
}

TEST_CASE("INT8 forward sums exactly in int32") {
  Problem p = testing::Make2D(1, 2, 1, 2, 1, 1, 1);
  p.data_type = DataType::kInt8;
  const std::vector<int8_t> x = {127, -128, 127, -128}, w = {127, 127};
  std::vector<int32_t> y(2);
  REQUIRE(ConvForward(p, x.data(), w.data(), y.data()).ok());
  CHECK(y == std::vector<int32_t>{127 * 127 * 2, -128 * 127 * 2});
  std::vector<int8_t> dx(4);
  CHECK(ConvBackwardData(p, x.data(), w.data(), dx.data()).code() ==
        absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace tuna
