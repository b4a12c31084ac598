// TunaCpuGemmConv (id 2001): the default config of every small problem, in every direction,
// compiles through the cpu backend and matches the reference; split-K configs (two launches
// through the workspace) too; applicability reasons; the search space, its pruning and the
// params round trip through SearchSpace::Parse.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"
#include "tuner_core/solver/conv/naive_solvers.h"

namespace tuna {
namespace {

using solver::CpuGemmConvSolver;
using solver::CpuGemmParams;
using solver::PerfConfig;

constexpr Direction kDirs[] = {Direction::kForward, Direction::kBackwardData,
                               Direction::kBackwardWeights};

TEST_CASE("cpu gemm default configs match the reference") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const CpuGemmConvSolver s;
  int runs = 0;
  for (const testing::NamedProblem& np : testing::SmallProblems()) {
    for (Direction dir : kDirs) {
      Problem p = np.problem;
      p.direction = dir;
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      const PerfConfig config = s.DefaultConfig(h.target(), p);
      INFO(np.name << " dir " << DirectionName(dir) << " params " << config.ToString() << ": "
                   << p.Canonical());
      REQUIRE(s.IsValid(h.target(), p, config).ok());
      absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, config);
      INFO(report.status().ToString());
      REQUIRE(report.ok());
      INFO(report->Summary());
      CHECK(report->ok);
      ++runs;
    }
  }
  CHECK(runs == 36);
}

TEST_CASE("cpu gemm split-K configs use the workspace and match the reference") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const CpuGemmConvSolver s;
  // M = N = K = 72 in every direction (fwd K = Cg*taps, bwd K = Kg*taps, wrw K = N*P): five
  // chunks of 16, split in two shares.
  Problem base = testing::Make2d(2, 8, 8, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, DataType::kFp32,
                                 Layout::kNHWC, Layout::kNCHW, Layout::kNHWC);
  for (Direction dir : kDirs) {
    for (DataType type : {DataType::kFp32, DataType::kBf16}) {
      Problem p = base;
      p.direction = dir;
      p.data_type = type;
      const CpuGemmParams params{8, 16, 16, 2, 4, 2};
      const PerfConfig config = params.ToConfig();
      INFO(DirectionName(dir) << " " << DataTypeName(type) << " params " << config.ToString());
      REQUIRE(s.IsValid(h.target(), p, config).ok());
      absl::StatusOr<solver::Solution> sol = s.GetSolution(h.target(), p, config);
      REQUIRE(sol.ok());
      CHECK(sol->launches.size() == 2);
      CHECK(sol->launches[0].grid.z == 2);  // groups * split_k
      CHECK(sol->workspace_bytes > 0);
      absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, config);
      INFO(report.status().ToString());
      REQUIRE(report.ok());
      INFO(report->Summary());
      CHECK(report->ok);
    }
  }
}

TEST_CASE("cpu gemm applicability reasons") {
  const CpuGemmConvSolver s;
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu-x86_64", 2);
  absl::StatusOr<solver::Target> gfx = solver::TargetForArch("gfx90a");
  REQUIRE(cpu.ok());
  REQUIRE(gfx.ok());
  CHECK(s.Name() == "TunaCpuGemmConv");
  CHECK(s.IsTunable());
  CHECK(s.Directions().size() == 3);
  auto reason = [](const absl::Status& st) { return std::string(st.message()); };

  for (const testing::NamedProblem& np : testing::SmallProblems()) {
    for (Direction dir : kDirs) {
      Problem p = np.problem;
      p.direction = dir;
      INFO(np.name);
      CHECK(s.IsApplicable(*cpu, p).ok());
      absl::Status st = s.IsApplicable(*gfx, p);
      CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
      CHECK_THAT(reason(st), Catch::Contains("cpu backend only"));
    }
  }
  Problem p = testing::SmallProblems()[0].problem;
  p.data_type = DataType::kInt8;
  CHECK_THAT(reason(s.IsApplicable(*cpu, p)), Catch::Contains("INT8"));
  p.data_type = DataType::kFp32;
  p.mode = ConvMode::kTrans;
  CHECK_THAT(reason(s.IsApplicable(*cpu, p)), Catch::Contains("transposed"));
  p.mode = ConvMode::kConv;
  p.k = 5;
  p.groups = 3;  // divides c = 3 but not k = 5
  CHECK_THAT(reason(s.IsApplicable(*cpu, p)), Catch::Contains("invalid problem"));
}

TEST_CASE("cpu gemm search space: params round trip, pruning and defaults") {
  const CpuGemmConvSolver s;
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu-avx2", 16);
  REQUIRE(cpu.ok());
  Problem p = testing::SmallProblems()[0].problem;  // fwd: M = 4, N = 2*7*6 = 84, K = 27
  const solver::SearchSpace space = s.Space(*cpu, p);
  REQUIRE(space.axes().size() == 6);
  CHECK(space.axes()[0].name == "TB_M");
  CHECK(space.axes()[5].name == "SPLIT_K");

  // Every point round-trips through its params string; count the valid ones.
  uint64_t valid = 0;
  for (uint64_t i = 0; i < space.Size(); ++i) {
    const PerfConfig c = space.At(i);
    absl::StatusOr<PerfConfig> parsed = space.Parse(c.ToString());
    REQUIRE(parsed.ok());
    REQUIRE(*parsed == c);
    REQUIRE(CpuGemmParams::From(c).ToConfig() == c);
    if (s.IsValid(*cpu, p, c).ok()) ++valid;
  }
  CHECK(valid > 0);
  CHECK(valid < space.Size() / 4);  // pruning removes most of the cartesian product here

  const PerfConfig def = s.DefaultConfig(*cpu, p);
  CHECK(s.IsValid(*cpu, p, def).ok());
  CHECK(space.Parse(def.ToString()).ok());
  CHECK(space.Describe(def).find("TB_M=8") != std::string::npos);  // M = 4: smallest tile

  auto invalid = [&](CpuGemmParams q) { return std::string(s.IsValid(*cpu, p, q.ToConfig()).message()); };
  CHECK_THAT(invalid({16, 64, 32, 4, 8, 1}), Catch::Contains("TB_M 16 is at least twice M = 4"));
  CHECK_THAT(invalid({8, 256, 32, 4, 8, 1}), Catch::Contains("TB_N 256"));
  CHECK_THAT(invalid({8, 64, 64, 4, 8, 1}), Catch::Contains("TB_K 64"));
  CHECK_THAT(invalid({8, 64, 32, 8, 16, 1}), Catch::Contains("register tile of 128"));
  CHECK_THAT(invalid({8, 64, 8, 4, 8, 8}), Catch::Contains("SPLIT_K 8"));  // 4 chunks of K = 27
  CHECK(s.IsValid(*cpu, p, CpuGemmParams{8, 64, 8, 4, 8, 4}.ToConfig()).ok());
  CHECK(s.IsValid(*cpu, p, PerfConfig{{8, 64, 8, 4, 8, 3}}).code() ==
        absl::StatusCode::kInvalidArgument);  // 3 is outside the SPLIT_K domain
  CHECK_FALSE(space.Parse("8,64,8,4,8").ok());
  CHECK_FALSE(space.Parse("8,64,8,4,8,x").ok());

  // A small output with a long reduction (backward weights) gets split-K by default on 16
  // threads; the default is valid on every small problem and direction.
  Problem w = p;
  w.direction = Direction::kBackwardWeights;  // M = 4, N = 27, K = 84
  CHECK(CpuGemmParams::From(s.DefaultConfig(*cpu, w)).split_k > 1);
  for (const testing::NamedProblem& np : testing::SmallProblems()) {
    for (Direction dir : kDirs) {
      Problem q = np.problem;
      q.direction = dir;
      for (int threads : {1, 2, 64}) {
        absl::StatusOr<solver::Target> t = solver::TargetForArch("cpu-x86_64", threads);
        REQUIRE(t.ok());
        INFO(np.name << " " << DirectionName(dir) << " threads " << threads);
        CHECK(s.IsValid(*t, q, s.DefaultConfig(*t, q)).ok());
      }
    }
  }
}

// Not run by default (hidden tag): bazel test //tests/solver:cpu_gemm_test --test_output=all
// --test_arg=[.bench]. Prints the naive solver's and a few GEMM configs' speed on a ResNet-like
// layer, to see that the tuning axes matter.
TEST_CASE("cpu gemm benchmark", "[.bench]") {
  testing::CpuSolverHarness h;
  REQUIRE(h.status().ok());
  const CpuGemmConvSolver s;
  Problem base = testing::Make2d(4, 64, 64, 28, 28, 3, 3, 1, 1, 1, 1, 1, 1, 1, DataType::kFp32,
                                 Layout::kNCHW, Layout::kNCHW, Layout::kNCHW);
  for (Direction dir : kDirs) {
    Problem p = base;
    p.direction = dir;
    std::vector<PerfConfig> configs = {s.DefaultConfig(h.target(), p)};
    for (CpuGemmParams q : {CpuGemmParams{64, 64, 64, 4, 8, 1}, CpuGemmParams{32, 128, 128, 4, 16, 1},
                            CpuGemmParams{16, 256, 32, 2, 16, 1}, CpuGemmParams{64, 128, 64, 8, 8, 2}}) {
      if (s.IsValid(h.target(), p, q.ToConfig()).ok()) configs.push_back(q.ToConfig());
    }
    auto report = [&](const std::string& what, const solver::Solver& solver, const PerfConfig& c) {
      std::vector<double> ms;
      absl::StatusOr<reference::VerifyReport> r = h.Run(solver, p, c, 1, &ms, 3);
      REQUIRE(r.ok());
      CHECK(r->ok);
      std::sort(ms.begin(), ms.end());
      std::printf("%s %-24s %-22s %8.2f ms %7.1f GFLOP/s\n", std::string(DirectionName(dir)).c_str(),
                  what.c_str(), c.ToString().c_str(), ms[ms.size() / 2], p.Flops() / ms[ms.size() / 2] / 1e6);
    };
    report("naive", solver::NaiveConvSolver(dir), PerfConfig{});
    for (const PerfConfig& c : configs) report("gemm", s, c);
  }
}

}  // namespace
}  // namespace tuna
