#include "tuner_core/problem/validate.h"

#include <limits>

#include "catch2/catch.hpp"

namespace tuna {
namespace {

Problem Base() {
  Problem p;
  p.n = 32, p.c = 64, p.k = 64;
  p.in = {1, 56, 56};
  p.fil = {1, 3, 3};
  p.pad = {0, 1, 1};
  return p;
}

std::string Msg(const Problem& p, const ProblemLimits& l = {}) {
  const absl::Status s = ValidateProblem(p, l);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == absl::StatusCode::kInvalidArgument);
  return std::string(s.message());
}

TEST_CASE("valid problems pass") {
  CHECK(ValidateProblem(Base()).ok());
  Problem p3 = Base();
  p3.spatial_dims = 3;
  p3.in = {8, 28, 28};
  p3.fil = {3, 3, 3};
  p3.pad = {1, 1, 1};
  p3.in_layout = p3.fil_layout = p3.out_layout = Layout::kNCDHW;
  CHECK(ValidateProblem(p3).ok());
}

TEST_CASE("every rule names the field") {
  Problem p = Base();
  p.n = 0;
  CHECK_THAT(Msg(p), Catch::Contains("n 0"));
  p = Base(), p.k = -1;
  CHECK_THAT(Msg(p), Catch::Contains("k -1"));
  p = Base(), p.c = int64_t{1} << 21;
  CHECK_THAT(Msg(p), Catch::Contains("c 2097152"));
  p = Base(), p.groups = 3;
  CHECK_THAT(Msg(p), Catch::Contains("groups 3 does not divide c 64"));
  p = Base(), p.c = 96, p.groups = 3, p.k = 64;
  CHECK_THAT(Msg(p), Catch::Contains("groups 3 does not divide k 64"));
  p = Base(), p.stride[1] = 0;
  CHECK_THAT(Msg(p), Catch::Contains("stride_h 0"));
  p = Base(), p.dilation[2] = 0;
  CHECK_THAT(Msg(p), Catch::Contains("dilation_w 0"));
  p = Base(), p.pad[2] = -1;
  CHECK_THAT(Msg(p), Catch::Contains("pad_w -1"));
  p = Base(), p.fil[1] = 100;  // MIOpen clamps the output to 1 row
  CHECK(ValidateProblem(p).ok());
  CHECK(p.Out()[1] == 1);
  p = Base(), p.pad_mode = PadMode::kSame;  // same size as the default here: not normalised
  p.pad = {0, 1, 1};
  CHECK_THAT(Msg(p), Catch::Contains("written as default"));
  p = Base(), p.pad_mode = PadMode::kSame, p.dilation[1] = 2;
  CHECK_THAT(Msg(p), Catch::Contains("needs dilation 1"));
  p = Base(), p.pad_mode = PadMode::kValid, p.fil[1] = 100, p.pad = {0, 60, 0};
  CHECK_THAT(Msg(p), Catch::Contains("empty output along h"));
  p = Base(), p.in_layout = Layout::kNCDHW;
  CHECK_THAT(Msg(p), Catch::Contains("NCDHW"));
  p = Base(), p.spatial_dims = 3, p.in = {4, 8, 8}, p.fil = {1, 1, 1};  // layouts still 2D
  CHECK_THAT(Msg(p), Catch::Contains("NCHW does not fit a 3D"));
  p = Base(), p.in[0] = 2;  // 2D with a depth
  CHECK_THAT(Msg(p), Catch::Contains("2D problem"));
  p = Base(), p.spatial_dims = 4;
  CHECK_THAT(Msg(p), Catch::Contains("spatial_dims 4"));
  p = Base(), p.trans_output_pad[1] = 1;
  CHECK_THAT(Msg(p), Catch::Contains("only allowed with mode trans"));
}

TEST_CASE("tensor sizes are capped without overflow") {
  Problem p = Base();
  ProblemLimits l;
  l.max_tensor_elements = 32 * 64 * 56 * 56 - 1;
  CHECK_THAT(Msg(p, l), Catch::Contains("input tensor"));
  // Extremes that would overflow a naive int64 product.
  p = Base();
  p.n = p.c = p.k = 1 << 20;
  p.in = {1, 1 << 20, 1 << 20};
  CHECK_THAT(Msg(p), Catch::Contains("exceeds"));
  p = Base();
  p.in[1] = std::numeric_limits<int64_t>::max();
  CHECK_THAT(Msg(p), Catch::Contains("in_h"));
  p = Base();
  p.pad[1] = std::numeric_limits<int64_t>::max();
  CHECK_THAT(Msg(p), Catch::Contains("pad_h"));
  p = Base();
  p.dilation[1] = std::numeric_limits<int64_t>::min();
  CHECK_THAT(Msg(p), Catch::Contains("dilation_h"));
}

}  // namespace
}  // namespace tuna
