// The three directions are mutual adjoints, and each matches the naive definition, on ~50
// seeded random problems covering groups, depthwise, stride, padding, dilation, 3D and every
// layout mix.
#include <cmath>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/reference/conv_test_util.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"

namespace tuna {
namespace {

using reference::ElementType;
using reference::RandomDoubles;
using testing::Describe;

double MaxAbsDiff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

double MaxAbs(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::fabs(v));
  return m;
}

std::vector<Problem> Problems() {
  std::vector<Problem> ps;
  // Fixed cases naming each feature, then seeded random ones.
  Problem a = testing::Make2D(2, 4, 7, 6, 6, 3, 3);  // grouped, padded, strided, NHWC in
  a.groups = 2, a.pad = {0, 1, 1}, a.stride = {1, 2, 2}, a.in_layout = Layout::kNHWC;
  ps.push_back(a);
  Problem b = testing::Make2D(1, 3, 9, 9, 2, 3, 2);  // dilated, all NHWC
  b.dilation = {1, 2, 3}, b.pad = {0, 2, 0};
  b.in_layout = b.fil_layout = b.out_layout = Layout::kNHWC;
  ps.push_back(b);
  Problem c = testing::Make3D(2, 2, 4, 5, 3, 3, 2, 3, 1);  // 3D mixed layouts
  c.pad = {1, 1, 0}, c.stride = {2, 1, 1}, c.dilation = {1, 1, 1};
  c.in_layout = Layout::kNDHWC, c.out_layout = Layout::kNDHWC;
  ps.push_back(c);
  Problem d = testing::Make2D(2, 6, 5, 5, 6, 3, 3);  // depthwise
  d.groups = 6, d.pad = {0, 1, 1}, d.fil_layout = Layout::kNHWC;
  ps.push_back(d);
  for (uint64_t seed = 1; ps.size() < 54; ++seed) ps.push_back(testing::RandomProblem(seed));
  return ps;
}

TEST_CASE("random problems cover every feature") {
  int three_d = 0, grouped = 0, strided = 0, dilated = 0, padded = 0, mixed = 0, nhwc = 0;
  for (const Problem& p : Problems()) {
    three_d += p.spatial_dims == 3;
    grouped += p.groups > 1;
    strided += p.stride[1] > 1 || p.stride[2] > 1;
    dilated += p.dilation[1] > 1 || p.dilation[2] > 1;
    padded += p.pad[1] > 0 || p.pad[2] > 0;
    mixed += !(p.in_layout == p.fil_layout && p.fil_layout == p.out_layout);
    nhwc += p.in_layout == Layout::kNHWC || p.in_layout == Layout::kNDHWC;
  }
  CHECK(three_d >= 5);
  CHECK(grouped >= 10);
  CHECK(strided >= 10);
  CHECK(dilated >= 10);
  CHECK(padded >= 10);
  CHECK(mixed >= 10);
  CHECK(nhwc >= 10);
}

TEST_CASE("adjoint identities and agreement with the naive definition") {
  int index = 0;
  for (const Problem& p : Problems()) {
    INFO("problem " << index << ": " << Describe(p));
    ++index;
    REQUIRE(reference::CheckProblem(p).ok());
    const int64_t nx = p.XDesc().ElementCount(), nw = p.WDesc().ElementCount(),
                  ny = p.YDesc().ElementCount();
    const std::vector<double> x = RandomDoubles(ElementType::kFp64, nx, 100 + index);
    const std::vector<double> w = RandomDoubles(ElementType::kFp64, nw, 200 + index);
    const std::vector<double> dy = RandomDoubles(ElementType::kFp64, ny, 300 + index);
    std::vector<double> y(ny), dx(nx), dw(nw);
    const int threads = 1 + index % 3;
    REQUIRE(reference::ConvForwardF64(p, x, w, y, threads).ok());
    REQUIRE(reference::ConvBackwardDataF64(p, dy, w, dx, threads).ok());
    REQUIRE(reference::ConvBackwardWeightsF64(p, x, dy, dw, threads).ok());

    // <fwd(x, w), dy> = <x, bwd_data(dy, w)> = <w, bwd_weights(x, dy)>: the same sum of
    // products x*w*dy grouped three ways, so only rounding separates them.
    const double a = testing::Dot(y, dy), b = testing::Dot(x, dx), c = testing::Dot(w, dw);
    const double mag = testing::AbsDot(testing::NaiveForward(p, x, w), dy) + 1e-300;
    CHECK(std::fabs(a - b) <= 1e-13 * mag + 1e-300);
    CHECK(std::fabs(a - c) <= 1e-13 * mag + 1e-300);
    // A non-trivial problem has a non-zero pairing (guards against all-zero outputs).
    CHECK(std::fabs(a) > 0);

    // Element-wise against the naive gather-form definitions.
    const std::vector<double> ny_ref = testing::NaiveForward(p, x, w);
    const std::vector<double> nx_ref = testing::NaiveBackwardData(p, dy, w);
    const std::vector<double> nw_ref = testing::NaiveBackwardWeights(p, x, dy);
    CHECK(MaxAbsDiff(y, ny_ref) <= 1e-13 * (1 + MaxAbs(ny_ref)));
    CHECK(MaxAbsDiff(dx, nx_ref) <= 1e-13 * (1 + MaxAbs(nx_ref)));
    CHECK(MaxAbsDiff(dw, nw_ref) <= 1e-13 * (1 + MaxAbs(nw_ref)));
  }
}

}  // namespace
}  // namespace tuna
