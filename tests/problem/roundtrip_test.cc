// Seeded random round trips: driver line, find-db key and perf-db columns.
#include <random>

#include "catch2/catch.hpp"
#include "tests/problem/test_util.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/keys.h"

namespace tuna {
namespace {

constexpr int kCount = 10000;

TEST_CASE("10k random valid problems: ParseDriverLine(ToDriverLine(p)) == {p}") {
  std::mt19937_64 rng(20241024);
  int n3d = 0, ngroups = 0, ntrans = 0, nmixed = 0;
  for (int i = 0; i < kCount; ++i) {
    const Problem p = testing::RandomValidProblem(rng);
    n3d += p.spatial_dims == 3;
    ngroups += p.groups > 1;
    ntrans += p.mode == ConvMode::kTrans;
    nmixed += p.in_layout != p.fil_layout || p.in_layout != p.out_layout;
    const std::string line = ToDriverLine(p);
    auto r = ParseDriverLine(line);
    INFO(line);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 1);
    REQUIRE(r->front() == p);
    REQUIRE(ToDriverLine(r->front()) == line);
    REQUIRE(p.Canonical() == line);
  }
  // The generator really covers the space.
  CHECK(n3d > kCount / 10);
  CHECK(ngroups > kCount / 10);
  CHECK(ntrans > kCount / 20);
  CHECK(nmixed > kCount / 20);
}

TEST_CASE("10k random conv problems: ParseFindDbKey(FindDbKey(p)) == p") {
  std::mt19937_64 rng(7);
  for (int i = 0; i < kCount; ++i) {
    const Problem p = testing::RandomValidProblem(rng, /*allow_trans=*/false);
    const std::string key = FindDbKey(p);
    auto r = ParseFindDbKey(key);
    INFO(key << " from " << ToDriverLine(p));
    REQUIRE(r.ok());
    REQUIRE(*r == p);
  }
}

TEST_CASE("10k random problems: perf-db columns") {
  std::mt19937_64 rng(99);
  int exact = 0;
  for (int i = 0; i < kCount; ++i) {
    Problem p = testing::RandomValidProblem(rng);
    const PerfDbConfig c = ToPerfDbConfig(p);
    INFO(ToDriverLine(p));
    // Columns per MIOpen's Visit: 2D depth columns fixed, bias 0.
    if (p.spatial_dims == 2) {
      REQUIRE(c.in_d == 1);
      REQUIRE(c.fil_d == 1);
      REQUIRE(c.pad_d == 0);
      REQUIRE(c.conv_stride_d == 0);
      REQUIRE(c.dilation_d == 0);
    }
    REQUIRE(c.bias == 0);
    auto back = FromPerfDbConfig(c);
    REQUIRE(back.ok());
    REQUIRE(ToPerfDbConfig(*back) == c);
    // The row keeps only the "in" layout and the conv-mode problem; with those and the input
    // size of the documented recovery rule the problem comes back exactly.
    if (p.mode == ConvMode::kConv) {
      const Layout in_role = p.direction == Direction::kForward ? p.in_layout : p.out_layout;
      p.in_layout = p.fil_layout = p.out_layout = in_role;
      bool largest_input = true;
      for (int a = 0; a < 3; ++a) {
        const int64_t o = p.Out()[a];
        largest_input &= p.in[a] == (o - 1) * p.stride[a] + p.dilation[a] * (p.fil[a] - 1) + 1 -
                                        2 * p.pad[a] + (p.stride[a] - 1) ||
                         (p.spatial_dims == 2 && a == 0);
      }
      if (p.direction == Direction::kForward || largest_input) {
        REQUIRE(*back == p);
        ++exact;
      }
    }
  }
  CHECK(exact > kCount / 3);
}

TEST_CASE("text perf-db key is the 24 columns in Visit order") {
  std::mt19937_64 rng(5);
  for (int i = 0; i < 1000; ++i) {
    const Problem p = testing::RandomValidProblem(rng);
    const PerfDbConfig c = ToPerfDbConfig(p);
    std::ostringstream want;
    for (int64_t v : {c.spatial_dim, c.in_channels, c.in_h, c.in_w, c.in_d, c.fil_h, c.fil_w,
                      c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d,
                      c.conv_stride_h, c.conv_stride_w, c.conv_stride_d, c.dilation_h,
                      c.dilation_w, c.dilation_d, c.bias, c.group_count})
      want << v << 'x';
    want << c.layout << 'x' << c.data_type << 'x' << c.direction;
    REQUIRE(PerfDbTextKey(p) == want.str());
  }
}

}  // namespace
}  // namespace tuna
