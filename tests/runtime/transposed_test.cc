// A transposed problem through the runtime API, as MIOpen's API takes one: Find answers with the
// convolution's solvers (a transposed forward: backward-data ones), and a run with buffers named
// as the transposed problem names them (x its input, y its output) computes it.
#include <vector>

#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/problem/transpose.h"

using namespace tuna;
using namespace tuna::runtime;
using tuna::testing::TempDir;

namespace {

// x, w, y of the transposed problem `t` (its extents: x is (N, C, in), y is (N, K, Out())).
struct TransBuffers {
  std::vector<std::byte> host[3];
  backend::DeviceBuffer dev[3];
};

// Runs `solver_id` on `t` with random inputs; returns the written buffer and, in `expected`, the
// reference's answer for the convolution `q` with the roles swapped.
std::vector<std::byte> RunTransposed(Handle& h, const Problem& t, const Problem& q, uint64_t solver_id,
                                     std::vector<std::byte>& expected) {
  // Transposed terms: F writes y (2), B writes x (0), W writes w (1).
  const int written = t.direction == Direction::kForward ? 2 : t.direction == Direction::kBackwardData ? 0 : 1;
  const int64_t counts[3] = {q.YDesc().ElementCount(), q.WDesc().ElementCount(), q.XDesc().ElementCount()};
  TransBuffers b;
  for (int i = 0; i < 3; ++i) {
    b.host[i] = reference::RandomBuffer(reference::ElementType::kFp32, counts[i], 11 + i);
    if (i == written) std::fill(b.host[i].begin(), b.host[i].end(), std::byte{0xff});
    auto d = h.device().Alloc(b.host[i].size());
    REQUIRE(d.ok());
    b.dev[i] = *std::move(d);
    REQUIRE(h.device().CopyToDevice(b.dev[i], b.host[i].data(), b.host[i].size()).ok());
  }
  auto wsz = GetSolutionWorkspaceSize(h, t, solver_id);
  REQUIRE(wsz.ok());
  backend::DeviceBuffer ws;
  if (*wsz > 0) ws = *h.device().Alloc(*wsz);
  REQUIRE(Immediate(h, t, solver_id, {&b.dev[0], &b.dev[1], &b.dev[2], ws.valid() ? &ws : nullptr}).ok());
  REQUIRE(h.device().Synchronize().ok());
  std::vector<std::byte> got(b.host[written].size());
  REQUIRE(h.device().CopyToHost(got.data(), b.dev[written], got.size()).ok());
  // The convolution's x is the transposed y, its y the transposed x.
  expected.assign(got.size(), std::byte{0});
  reference::ConvTensors conv{b.host[2].data(), b.host[1].data(), b.host[0].data(), expected.data()};
  REQUIRE(reference::RunConv(q, conv).ok());
  return got;
}

}  // namespace

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
    std::vector<std::byte> expected;
    const std::vector<std::byte> got = RunTransposed(**h, t, q, found->solutions.front().solver_id, expected);
    auto v = reference::VerifyConvOutput(q, q.direction, got.data(), expected.data());
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
