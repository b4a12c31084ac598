// Transposed problems as the convolutions that run them (tuner_core/problem/transpose.h): the
// keys stay MIOpen's, and the convolution computes what a transposed convolution is defined to
// compute (a scatter written out below, independent of the reference's gather loops).
#include "tuner_core/problem/transpose.h"

#include <random>
#include <span>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/problem/test_util.h"
#include "tuner_core/problem/keys.h"
#include "tuner_core/reference/reference_conv.h"

namespace tuna {
namespace {

Problem Line(const std::string& line) {
  auto r = ParseDriverLine(line);
  INFO(line);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return r->front();
}

TEST_CASE("a transposed forward is the backward data of the convolution with x and y swapped") {
  const Problem p = Line(
      "convfp16 -n 2 -c 8 -H 9 -W 11 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 "
      "-F 1 --trans_output_pad_h 1 --trans_output_pad_w 0 --in_layout NHWC --out_layout NCHW "
      "--fil_layout NHWC");
  REQUIRE(p.Out() == Dhw{1, 18, 21});
  auto q = AsConvolution(p);
  REQUIRE(q.ok());
  CHECK(q->mode == ConvMode::kConv);
  CHECK(q->direction == Direction::kBackwardData);
  CHECK(q->c == 4);
  CHECK(q->k == 8);
  CHECK(q->in == Dhw{1, 18, 21});
  CHECK(q->Out() == p.in);
  CHECK(q->in_layout == Layout::kNCHW);
  CHECK(q->out_layout == Layout::kNHWC);
  CHECK(q->fil_layout == Layout::kNHWC);
  CHECK(q->trans_output_pad == Dhw{0, 0, 0});
  CHECK(FindDbKey(*q) == FindDbKey(p));
}

TEST_CASE("every valid transposed problem keeps its keys as a convolution") {
  std::mt19937_64 rng(20261204);
  int converted = 0, refused = 0;
  for (int i = 0; i < 20000 && converted < 600; ++i) {
    const Problem p = testing::RandomValidProblem(rng);
    auto q = AsConvolution(p);
    if (p.mode == ConvMode::kConv) {
      REQUIRE(q.ok());
      CHECK(*q == p);
      continue;
    }
    INFO(p);
    bool past_stride = false;
    for (int a = 0; a < 3; ++a) past_stride = past_stride || p.trans_output_pad[a] >= p.stride[a];
    if (past_stride) {  // allowed below the dilation; no convolution has that shape
      CHECK(q.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK(std::string(q.status().message()).find("trans_output_pad_") != std::string::npos);
      ++refused;
      continue;
    }
    REQUIRE(q.ok());
    ++converted;
    CHECK(q->mode == ConvMode::kConv);
    CHECK(FindDbKey(*q) == FindDbKey(p));
    CHECK(ToPerfDbConfig(*q) == ToPerfDbConfig(p));
    CHECK(PerfDbTextKey(*q) == PerfDbTextKey(p));
    CHECK(q->Flops() == p.Flops());
    CHECK(AsConvolution(*q).value() == *q);
  }
  CHECK(converted >= 600);
  CHECK(refused > 0);
}

// Channels-first offsets written out by hand (not through TensorDesc).
int64_t At(const std::array<int64_t, 5>& dims, int64_t a, int64_t b, int64_t d, int64_t h, int64_t w) {
  return (((a * dims[1] + b) * dims[2] + d) * dims[3] + h) * dims[4] + w;
}

std::vector<double> Random(size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& e : v) e = u(rng);
  return v;
}

// The transposed convolution by its definition: every input element scatters through every
// filter tap, x[n][c][i] * w[c][k'][r] into y[n][g*K/G + k'][i*s - p + r*d]; `visit` gets the
// three flat indices of each product.
template <typename Visit>
void Scatter(const Problem& p, Visit visit) {
  const Dhw o = p.Out();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  const std::array<int64_t, 5> xd{p.n, p.c, p.in[0], p.in[1], p.in[2]};
  const std::array<int64_t, 5> yd{p.n, p.k, o[0], o[1], o[2]};
  const std::array<int64_t, 5> wd{p.c, kg, p.fil[0], p.fil[1], p.fil[2]};
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t c = 0; c < p.c; ++c)
      for (int64_t kk = 0; kk < kg; ++kk)
        for (int64_t i0 = 0; i0 < p.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < p.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < p.in[2]; ++i2)
              for (int64_t r0 = 0; r0 < p.fil[0]; ++r0)
                for (int64_t r1 = 0; r1 < p.fil[1]; ++r1)
                  for (int64_t r2 = 0; r2 < p.fil[2]; ++r2) {
                    const int64_t o0 = i0 * p.stride[0] - p.pad[0] + r0 * p.dilation[0];
                    const int64_t o1 = i1 * p.stride[1] - p.pad[1] + r1 * p.dilation[1];
                    const int64_t o2 = i2 * p.stride[2] - p.pad[2] + r2 * p.dilation[2];
                    if (o0 < 0 || o0 >= o[0] || o1 < 0 || o1 >= o[1] || o2 < 0 || o2 >= o[2]) continue;
                    const int64_t k = (c / cg) * kg + kk;
                    visit(At(xd, n, c, i0, i1, i2), At(wd, c, kk, r0, r1, r2), At(yd, n, k, o0, o1, o2));
                  }
}

TEST_CASE("the convolution computes the transposed convolution in all three directions") {
  std::mt19937_64 rng(7);
  auto pick = [&rng](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  int checked = 0;
  while (checked < 60) {
    Problem p;
    p.mode = ConvMode::kTrans;
    p.spatial_dims = pick(0, 2) == 0 ? 3 : 2;
    const bool is3d = p.spatial_dims == 3;
    p.in_layout = p.fil_layout = p.out_layout = is3d ? Layout::kNCDHW : Layout::kNCHW;
    p.groups = pick(0, 1) ? pick(2, 3) : 1;
    p.n = pick(1, 2);
    p.c = p.groups * pick(1, 3);
    p.k = p.groups * pick(1, 3);
    for (int a = is3d ? 0 : 1; a < 3; ++a) {
      p.in[a] = pick(1, is3d ? 3 : 6);
      p.fil[a] = pick(1, 3);
      p.stride[a] = pick(1, 3);
      p.dilation[a] = pick(1, 2);
      p.pad[a] = pick(0, p.dilation[a] * (p.fil[a] - 1));
      p.trans_output_pad[a] = pick(0, p.stride[a] - 1);
    }
    if (!ValidateProblem(p).ok()) continue;
    INFO(p);
    auto q = AsConvolution(p);
    REQUIRE(q.ok());
    const int64_t nx = p.XDesc().ElementCount(), ny = q->XDesc().ElementCount();
    const int64_t nw = q->WDesc().ElementCount();
    REQUIRE(nw == p.c * (p.k / p.groups) * p.fil[0] * p.fil[1] * p.fil[2]);
    const std::vector<double> x = Random(nx, rng), w = Random(nw, rng), dy = Random(ny, rng);
    std::vector<double> y(ny, 0.0), dx(nx, 0.0), dw(nw, 0.0);
    Scatter(p, [&](int64_t xi, int64_t wi, int64_t yi) {
      y[yi] += x[xi] * w[wi];    // forward: y from x
      dx[xi] += dy[yi] * w[wi];  // backward data: dx from dy
      dw[wi] += x[xi] * dy[yi];  // backward weights
    });
    std::vector<double> got_y(ny), got_dx(nx), got_dw(nw);
    // The convolution's x is the transposed y (and dy), its y the transposed x.
    REQUIRE(reference::ConvBackwardDataF64(*q, x, w, got_y, 1).ok());
    REQUIRE(reference::ConvForwardF64(*q, dy, w, got_dx, 1).ok());
    REQUIRE(reference::ConvBackwardWeightsF64(*q, dy, x, got_dw, 1).ok());
    for (int64_t i = 0; i < ny; ++i) REQUIRE(got_y[i] == Approx(y[i]).margin(1e-12));
    for (int64_t i = 0; i < nx; ++i) REQUIRE(got_dx[i] == Approx(dx[i]).margin(1e-12));
    for (int64_t i = 0; i < nw; ++i) REQUIRE(got_dw[i] == Approx(dw[i]).margin(1e-12));
    ++checked;
  }
}

TEST_CASE("a driver file's transposed lines become convolutions, a line without one an error") {
  DriverFile f = ParseDriverText(
      "conv -n 1 -c 4 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1\n"
      "conv -n 1 -c 4 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 2 -F 0\n"
      "# output padding 2 is below the dilation 3 but not the stride 1\n"
      "conv -n 1 -c 4 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 3 -j 1 -m trans -g 1 -F 1 "
      "--trans_output_pad_h 2\n");
  REQUIRE(f.errors.empty());
  REQUIRE(f.lines.size() == 3);
  CHECK(ConvertTransposed(f) == 3);
  REQUIRE(f.lines.size() == 2);
  REQUIRE(f.errors.size() == 1);
  CHECK(f.errors[0].line_number == 4);
  CHECK(f.errors[0].reason.find("trans_output_pad_h 2") != std::string::npos);
  for (const DriverFileLine& l : f.lines) {
    for (const Problem& p : l.problems) CHECK(p.mode == ConvMode::kConv);
  }
  const std::vector<Problem>& t = f.lines[1].problems;
  REQUIRE(t.size() == 3);
  CHECK(t[0].direction == Direction::kBackwardData);
  CHECK(t[1].direction == Direction::kForward);
  CHECK(t[2].direction == Direction::kBackwardWeights);
  CHECK(t[0].c == 6);
  CHECK(t[0].in == Dhw{1, 9, 9});
}

}  // namespace
}  // namespace tuna
