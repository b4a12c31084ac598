// ConvDirectNaiveConv{Fwd,Bwd,Wrw} on the cpu backend: the solutions really compile, run and
// match the CPU reference on a dozen small problems (every direction, FP32/FP16/BF16, INT8
// forward, NCHW/NHWC/mixed layouts, groups, stride, padding, dilation, 3D); the applicability
// rules and the shape of the planned solutions.
#include <cstdio>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/solver/conv/naive_solvers.h"

namespace tuna {
namespace {

using solver::NaiveConvSolver;
using solver::PerfConfig;

TEST_CASE("naive solvers match the reference on the cpu backend") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  int runs = 0;
  for (const testing::NamedProblem& np : testing::SmallProblems()) {
    for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      Problem p = np.problem;
      p.direction = dir;
      const NaiveConvSolver s(dir);
      INFO(np.name << " dir " << DirectionName(dir) << ": " << p.Canonical());
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, PerfConfig{});
      INFO(report.status().ToString());
      REQUIRE(report.ok());
      INFO(report->Summary());
      CHECK(report->ok);
      ++runs;
    }
  }
  CHECK(runs == 36);
  // One code object per (data type, entry): sizes are arguments, not -D options.
  CHECK(h.compiles() == 9);
}

TEST_CASE("naive forward handles INT8 with int32 output") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const NaiveConvSolver s(Direction::kForward);
  for (int i : {0, 3, 9}) {  // NCHW, mixed layouts with groups, 3D
    Problem p = testing::SmallProblems()[i].problem;
    p.data_type = DataType::kInt8;
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(h.target(), p).ok());
    absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, PerfConfig{});
    INFO(report.status().ToString());
    REQUIRE(report.ok());
    INFO(report->Summary());
    CHECK(report->ok);
    CHECK(report->max_abs_error == 0);
  }
}

TEST_CASE("naive solvers: applicability and reasons") {
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu-x86_64");
  absl::StatusOr<solver::Target> gfx = solver::TargetForArch("gfx90a");
  absl::StatusOr<solver::Target> sm = solver::TargetForArch("sm_90");
  REQUIRE(cpu.ok());
  REQUIRE(gfx.ok());
  REQUIRE(sm.ok());
  const NaiveConvSolver fwd(Direction::kForward), bwd(Direction::kBackwardData),
      wrw(Direction::kBackwardWeights);
  CHECK(fwd.Name() == "ConvDirectNaiveConvFwd");
  CHECK(bwd.Name() == "ConvDirectNaiveConvBwd");
  CHECK(wrw.Name() == "ConvDirectNaiveConvWrw");
  CHECK(fwd.Algo() == solver::Algorithm::kDirect);
  CHECK_FALSE(fwd.IsTunable());
  CHECK(fwd.Space(*cpu, Problem{}).empty());
  CHECK(fwd.DefaultConfig(*cpu, Problem{}).values.empty());

  Problem p = testing::SmallProblems()[0].problem;
  for (const solver::Target* t : {&*cpu, &*gfx, &*sm}) {
    for (const testing::NamedProblem& np : testing::SmallProblems()) {
      Problem q = np.problem;
      q.direction = Direction::kBackwardWeights;
      INFO(t->arch << " " << np.name);
      CHECK(wrw.IsApplicable(*t, q).ok());
      CHECK_FALSE(fwd.IsApplicable(*t, q).ok());
    }
  }

  auto reason = [](const absl::Status& st) { return std::string(st.message()); };
  p.direction = Direction::kBackwardData;
  absl::Status st = fwd.IsApplicable(*cpu, p);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(reason(st), Catch::Contains("ConvDirectNaiveConvFwd") && Catch::Contains("direction F only"));

  p.direction = Direction::kForward;
  p.mode = ConvMode::kTrans;
  st = fwd.IsApplicable(*gfx, p);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(reason(st), Catch::Contains("transposed"));

  p.mode = ConvMode::kConv;
  p.data_type = DataType::kInt8;
  CHECK(fwd.IsApplicable(*sm, p).ok());
  p.direction = Direction::kBackwardData;
  st = bwd.IsApplicable(*sm, p);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(reason(st), Catch::Contains("INT8"));

  p.direction = Direction::kForward;
  p.data_type = DataType::kFp32;
  p.groups = 5;  // does not divide c = 3
  st = fwd.IsApplicable(*cpu, p);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(reason(st), Catch::Contains("invalid problem"));
}

TEST_CASE("naive solutions: kernel source, entry and launch per backend") {
  Problem p = testing::SmallProblems()[1].problem;  // fp16 NHWC
  p.direction = Direction::kBackwardData;
  const NaiveConvSolver bwd(Direction::kBackwardData);

  absl::StatusOr<solver::Target> gfx = solver::TargetForArch("gfx908");
  REQUIRE(gfx.ok());
  absl::StatusOr<solver::Solution> g = bwd.GetSolution(*gfx, p, PerfConfig{});
  REQUIRE(g.ok());
  REQUIRE(g->kernels.size() == 1);
  CHECK(g->kernels[0].source == "conv/naive_conv.cu");
  // Every type's entry of the direction: one build per (direction, arch).
  CHECK(g->kernels[0].entries == std::vector<std::string>{"naive_conv_bwd_fp32", "naive_conv_bwd_fp16", "naive_conv_bwd_bf16"});
  CHECK(g->kernels[0].options == std::vector<std::string>{"-DTUNA_NAIVE_DIR=1"});
  REQUIRE(g->launches.size() == 1);
  CHECK(g->launches[0].entry == "naive_conv_bwd_fp16");
  CHECK(g->launches[0].block.x == 256);
  // One thread per written element (dx: 1*4*9*8 = 288 elements).
  CHECK(uint64_t(g->launches[0].grid.x) * g->launches[0].block.x >= 288);
  CHECK(g->launches[0].args.size() == 3 + 37);
  CHECK(g->workspace_bytes == 0);
  CHECK(g->zero_first.empty());

  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu-avx2", 4);
  REQUIRE(cpu.ok());
  absl::StatusOr<solver::Solution> c = bwd.GetSolution(*cpu, p, PerfConfig{});
  REQUIRE(c.ok());
  CHECK(c->kernels[0].source == "cpu_conv/naive_conv.cc");
  CHECK(c->launches[0].block.x == 1);
  CHECK(c->launches[0].grid.x >= 4);
  CHECK(c->launches[0].grid.x <= 288);

  // Not tunable: a non-empty config is refused.
  CHECK_FALSE(bwd.GetSolution(*cpu, p, PerfConfig{{1}}).ok());
}

}  // namespace
}  // namespace tuna
