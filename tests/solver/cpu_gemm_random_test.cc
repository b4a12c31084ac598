// TunaCpuGemmConv: random valid configs (uniform over the declared space, filtered by IsValid,
// fixed seed; one per problem and direction, so three per problem) of every small problem
// compile through the cpu backend and match the reference.
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"

namespace tuna {
namespace {

using solver::PerfConfig;

TEST_CASE("cpu gemm random valid configs match the reference") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const solver::CpuGemmConvSolver s;
  std::mt19937_64 rng(2001);
  constexpr int kPerProblem = 1;  // per direction: three per problem
  int runs = 0, split_runs = 0;
  for (const testing::NamedProblem& np : testing::SmallProblems()) {
    for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      Problem p = np.problem;
      p.direction = dir;
      const solver::SearchSpace space = s.Space(h.target(), p);
      int found = 0;
      for (int tries = 0; tries < 20000 && found < kPerProblem; ++tries) {
        const PerfConfig config = space.At(rng() % space.Size());
        if (!s.IsValid(h.target(), p, config).ok()) continue;
        ++found;
        INFO(np.name << " dir " << DirectionName(dir) << " " << space.Describe(config) << ": "
                     << p.Canonical());
        absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, config, 100 + runs);
        INFO(report.status().ToString());
        REQUIRE(report.ok());
        INFO(report->Summary());
        CHECK(report->ok);
        ++runs;
        if (solver::CpuGemmParams::From(config).split_k > 1) ++split_runs;
      }
      CHECK(found == kPerProblem);
    }
  }
  CHECK(runs == 12 * 3 * kPerProblem);
  CHECK(split_runs > 0);
}

}  // namespace
}  // namespace tuna
