// A transposed problem through the runtime API, as MIOpen's API takes one: Find answers with the
// convolution's solvers (a transposed forward: backward-data ones), and a run with buffers named
// as the transposed problem names them (x its input, y its output) computes it.
#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/problem/transpose.h"

using namespace tuna;
using namespace tuna::runtime;
using tuna::testing::TempDir;

TEST_CASE("runtime: a transposed problem finds the convolution's solvers and runs with its own buffers") {
  TempDir user("tr_user"), sys("tr_sys"), cache("tr_cache");
  auto h = testing::CpuHandle(testing::CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(h.ok());
  for (const char* dir : {"1", "2", "4"}) {
    const Problem t = testing::ParseOne(
        std::string("conv -n 2 -c 6 -H 5 -W 4 -k 4 -y 3 -x 2 -p 1 -q 0 -u 2 -v 1 -l 1 -j 1 -m trans -g 2 "
                    "--trans_output_pad_h 1 -F ") + dir);
    INFO(ToDriverLine(t));
    const Problem q = AsConvolution(t).value();
    auto found = FindConvolution(**h, t);
    REQUIRE(found.ok());
    REQUIRE_FALSE(found->solutions.empty());
    for (const ConvSolution& s : found->solutions) {
      INFO(s.solver);
      CHECK((*h)->registry().ById(s.solver_id)->solver->IsApplicable((*h)->target(), q).ok());
      if (t.direction == Direction::kForward) CHECK(s.solver.find("Fwd") == std::string::npos);
    }
    // Buffers named as the transposed problem names them (testing::RunAndVerify).
    auto v = testing::RunAndVerify(**h, t, found->solutions.front().solver_id);
    REQUIRE(v.ok());
    CHECK(v->ok);
  }
  // No convolution has this shape: a clear error, nothing run.
  const Problem bad = testing::ParseOne(
      "conv -n 1 -c 4 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 3 -j 1 -m trans -g 1 -F 1 -Y 2");
  auto f = FindConvolution(**h, bad);
  REQUIRE_FALSE(f.ok());
  CHECK(f.status().code() == absl::StatusCode::kInvalidArgument);
}
