// FlattenTo2d (problem/flatten.h): which 3-D problems are 2-D problems on the same bytes, what the
// 2-D problem is, and that it computes the same numbers: the FP64 reference of every direction on
// the flattened problem, given the 3-D problem's buffers, equals the 3-D reference's.
#include <random>
#include <span>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/problem/test_util.h"
#include "tuner_core/problem/flatten.h"
#include "tuner_core/reference/reference_conv.h"

namespace tuna {
namespace {

Problem Make3d(Layout x, Layout w, Layout y, Dhw in, Dhw fil, Dhw pad, Dhw stride, Dhw dil = {1, 1, 1}) {
  Problem p;
  p.spatial_dims = 3;
  p.n = 2, p.c = 6, p.k = 4, p.groups = 2;
  p.in = in, p.fil = fil, p.pad = pad, p.stride = stride, p.dilation = dil;
  p.in_layout = x, p.fil_layout = w, p.out_layout = y;
  p.data_type = DataType::kFp16;
  REQUIRE(ValidateProblem(p).ok());
  return p;
}

constexpr Layout kCf = Layout::kNCDHW, kCl = Layout::kNDHWC;

std::vector<double> Random(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& e : v) e = u(rng);
  return v;
}

// Every direction's FP64 reference on p and on q from the same inputs: the same outputs.
void CheckSameNumbers(const Problem& p, const Problem& q, std::mt19937_64& rng) {
  const int64_t nx = p.XDesc().ElementCount(), nw = p.WDesc().ElementCount(), ny = p.YDesc().ElementCount();
  REQUIRE(q.XDesc().ElementCount() == nx);
  REQUIRE(q.WDesc().ElementCount() == nw);
  REQUIRE(q.YDesc().ElementCount() == ny);
  const std::vector<double> x = Random(nx, rng), w = Random(nw, rng), dy = Random(ny, rng);
  std::vector<double> y3(ny), y2(ny), dx3(nx), dx2(nx), dw3(nw), dw2(nw);
  REQUIRE(reference::ConvForwardF64(p, x, w, y3, 1).ok());
  REQUIRE(reference::ConvForwardF64(q, x, w, y2, 1).ok());
  REQUIRE(reference::ConvBackwardDataF64(p, dy, w, dx3, 1).ok());
  REQUIRE(reference::ConvBackwardDataF64(q, dy, w, dx2, 1).ok());
  REQUIRE(reference::ConvBackwardWeightsF64(p, x, dy, dw3, 1).ok());
  REQUIRE(reference::ConvBackwardWeightsF64(q, x, dy, dw2, 1).ok());
  for (int64_t i = 0; i < ny; ++i) REQUIRE(y2[i] == Approx(y3[i]).margin(1e-12));
  for (int64_t i = 0; i < nx; ++i) REQUIRE(dx2[i] == Approx(dx3[i]).margin(1e-12));
  for (int64_t i = 0; i < nw; ++i) REQUIRE(dw2[i] == Approx(dw3[i]).margin(1e-12));
}

TEST_CASE("flatten: the three rules, in order") {
  SECTION("(H, W) identities: 2-D (D, H*W), any layouts; the depth's geometry becomes the height's") {
    const Problem p = Make3d(kCf, kCl, kCl, {9, 5, 3}, {3, 1, 1}, {1, 0, 0}, {2, 1, 1}, {2, 3, 1});
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    CHECK(q->spatial_dims == 2);
    CHECK(q->n == 2);
    CHECK(q->in == Dhw{1, 9, 15});
    CHECK(q->fil == Dhw{1, 3, 1});
    CHECK(q->pad == Dhw{0, 1, 0});
    CHECK(q->stride == Dhw{1, 2, 1});
    CHECK(q->dilation == Dhw{1, 2, 1});
    CHECK(q->in_layout == Layout::kNCHW);
    CHECK(q->fil_layout == Layout::kNHWC);
    CHECK(q->out_layout == Layout::kNHWC);
    CHECK((q->groups == 2 && q->c == 6 && q->k == 4 && q->data_type == DataType::kFp16));
  }
  SECTION("depth identity, x and y channels-last: N*D images") {
    const Problem p = Make3d(kCl, kCf, kCl, {4, 7, 6}, {1, 3, 2}, {0, 1, 0}, {1, 2, 1}, {3, 1, 2});
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    CHECK(q->n == 8);
    CHECK(q->in == Dhw{1, 7, 6});
    CHECK(q->fil == Dhw{1, 3, 2});
    CHECK(q->pad == Dhw{0, 1, 0});
    CHECK(q->stride == Dhw{1, 2, 1});
    CHECK(q->dilation == Dhw{1, 1, 2});
    CHECK(q->in_layout == Layout::kNHWC);
    CHECK(q->fil_layout == Layout::kNCHW);
  }
  SECTION("one frame, channels-first: N images") {
    const Problem p = Make3d(kCf, kCf, kCf, {1, 7, 6}, {1, 3, 3}, {0, 1, 1}, {1, 2, 1});
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    CHECK(q->n == 2);
    CHECK(q->in == Dhw{1, 7, 6});
    CHECK(q->fil == Dhw{1, 3, 3});
    CHECK(q->in_layout == Layout::kNCHW);
  }
  SECTION("(D, H) identities, channels-first: 2-D (D*H, W)") {
    const Problem p = Make3d(kCf, kCf, kCf, {4, 5, 6}, {1, 1, 3}, {0, 0, 1}, {1, 1, 2});
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    CHECK(q->n == 2);
    CHECK(q->in == Dhw{1, 20, 6});
    CHECK(q->fil == Dhw{1, 1, 3});
    CHECK(q->pad == Dhw{0, 0, 1});
    CHECK(q->stride == Dhw{1, 1, 2});
  }
  SECTION("1x1x1, stride 1: the first rule") {
    const Problem p = Make3d(kCl, kCl, kCl, {4, 5, 6}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1});
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    CHECK(q->n == 2);
    CHECK(q->in == Dhw{1, 4, 30});
  }
  SECTION("the pad mode is kept where it changes the output") {
    Problem p = Make3d(kCl, kCl, kCl, {4, 8, 8}, {1, 3, 3}, {0, 1, 1}, {1, 2, 2});
    p.pad_mode = PadMode::kSame;
    p.pad = SamePads(p);
    REQUIRE(ValidateProblem(p).ok());
    REQUIRE(p.pad_mode == PadMode::kSame);
    REQUIRE(p.Out()[1] == 4);  // ceil(8 / 2); the default would give (8 - 3) / 2 + 1 = 3
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    CHECK(q->pad_mode == NormalizedPadMode(*q));
    CHECK(q->Out()[1] == p.Out()[1]);
    CHECK(q->Out()[2] == p.Out()[2]);
  }
}

TEST_CASE("flatten: problems that are not 2-D problems on the same bytes") {
  CHECK_FALSE(FlattenTo2d(Make3d(kCl, kCl, kCl, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1})).has_value());
  // The depth is an identity but x is channels-first: depth slices are not whole images.
  CHECK_FALSE(FlattenTo2d(Make3d(kCf, kCl, kCl, {4, 5, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1})).has_value());
  CHECK_FALSE(FlattenTo2d(Make3d(kCl, kCl, kCf, {4, 5, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1})).has_value());
  // A stride or a padding makes a one-tap dimension more than an identity.
  CHECK_FALSE(FlattenTo2d(Make3d(kCl, kCl, kCl, {4, 6, 6}, {1, 1, 1}, {0, 0, 0}, {2, 2, 2})).has_value());
  CHECK_FALSE(FlattenTo2d(Make3d(kCl, kCl, kCl, {4, 6, 6}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1})).has_value());
  Problem two_d;
  two_d.in = {1, 5, 5};
  CHECK_FALSE(FlattenTo2d(two_d).has_value());
  Problem trans = Make3d(kCl, kCl, kCl, {4, 5, 6}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1});
  trans.mode = ConvMode::kTrans;
  CHECK_FALSE(FlattenTo2d(trans).has_value());
}

TEST_CASE("flatten: the 2-D problem computes the 3-D problem's numbers in every direction") {
  std::mt19937_64 rng(20261205);
  auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int checked[3] = {0, 0, 0};
  for (int trial = 0; trial < 300; ++trial) {
    Problem p;
    p.spatial_dims = 3;
    p.groups = pick(1, 2);
    p.n = pick(1, 2);
    p.c = p.groups * pick(1, 3);
    p.k = p.groups * pick(1, 3);
    for (int a = 0; a < 3; ++a) {
      p.in[a] = pick(1, 4);
      p.fil[a] = pick(1, 3);
      p.stride[a] = pick(1, 2);
      p.dilation[a] = pick(1, 2);
      p.pad[a] = pick(0, 1);
    }
    const int rule = static_cast<int>(pick(0, 2));  // the dimensions made identities
    for (int a : rule == 0 ? std::vector<int>{1, 2} : rule == 1 ? std::vector<int>{0} : std::vector<int>{0, 1}) {
      p.fil[a] = 1, p.pad[a] = 0, p.stride[a] = 1;
    }
    auto layout = [&] { return pick(0, 1) ? kCf : kCl; };
    p.in_layout = layout(), p.fil_layout = layout(), p.out_layout = layout();
    if (rule == 1 && p.in[0] > 1) p.in_layout = p.out_layout = kCl;  // one frame: any layout
    if (!ValidateProblem(p).ok()) continue;
    INFO(p);
    const std::optional<Problem> q = FlattenTo2d(p);
    REQUIRE(q.has_value());
    INFO(*q);
    CHECK(ValidateProblem(*q).ok());
    CHECK(q->Flops() == p.Flops());
    CheckSameNumbers(p, *q, rng);
    ++checked[rule];
  }
  for (int n : checked) CHECK(n >= 40);
}

}  // namespace
}  // namespace tuna
