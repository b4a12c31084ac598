// TunaSmallCFwd (1026, direct forward convolution for C/G <= 8): planning checks without a
// compiler (applicability: C/G above 8 and the other directions refused; defaults valid, every
// valid config plans one launch of the tile's threads and no workspace), NVRTC builds for sm_90
// and hiprtc builds for gfx90a of the defaults, the kernel's body run through the cpu backend (its
// twin cpu_conv/small_c_fwd.cc, real compiler) against the CPU reference on poisoned outputs for
// C = 1, 2, 3, 4, 5, 8, strides 1/2/3, dilation, padding, 1x7 / 7x1 / 5x5 / 7x7 / 1x1 filters,
// groups (and depthwise), K tails, odd sizes, FP32/FP16/BF16, NCHW / NHWC / mixed layouts and,
// tagged "gpu", the same problems plus the Inception-v3 stem on a CUDA device.
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_small_c_fwd.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::SmallCFwdSolver;
using solver::SmallCTargets;
using solver::Target;
using testing::AllValid;

const std::vector<std::pair<DataType, Layout>> kVariants = {
    {DataType::kFp16, Layout::kNHWC}, {DataType::kFp32, Layout::kNCHW}, {DataType::kBf16, Layout::kNHWC},
    {DataType::kFp16, Layout::kNCHW}, {DataType::kFp32, Layout::kNHWC}, {DataType::kBf16, Layout::kNCHW}};

// Problem i in two variants (problem 0, the stem, in all six) plus x NHWC / w NCHW / y NCHW and
// x NCHW / y NHWC mixes: the problems the cpu backend and the device both run.
std::vector<Problem> CheckedProblems() { return testing::ThinInputChecks(kVariants, 3); }

Target Sm90() {
  absl::StatusOr<Target> t = solver::TargetForArch("sm_90");
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("small C forward: applicability, defaults and pruning", "[solver]") {
  const Target sm90 = Sm90();
  const SmallCFwdSolver s;
  for (const Problem& p : CheckedProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(sm90, p).ok());
    const PerfConfig d = s.DefaultConfig(sm90, p);
    CHECK(s.IsValid(sm90, p, d).ok());
    const std::vector<PerfConfig> valid = AllValid(s, sm90, p);
    CHECK(valid.size() >= 2);
    CHECK(valid.size() <= 800);  // small enough to search exhaustively
    const solver::SearchSpace space = s.Space(sm90, p);
    for (const PerfConfig& c : valid) {
      absl::StatusOr<solver::Solution> sol = s.GetSolution(sm90, p, c);
      REQUIRE(sol.ok());
      REQUIRE(sol->launches.size() == 1u);
      CHECK(sol->workspace_bytes == 0u);
      CHECK(sol->zero_first.empty());
      const int64_t threads = space.Value(c, "TB_K") / space.Value(c, "K_PER_THREAD") * space.Value(c, "TB_H") *
                              space.Value(c, "TB_W") / space.Value(c, "PIX");
      CHECK(sol->launches[0].block.x == static_cast<uint32_t>(threads));
      CHECK(sol->launches[0].grid.y % static_cast<uint32_t>(p.groups) == 0u);
    }
  }
  // The stem's default (the config the lead builds; bench/kernels/data/inception_v3_fp16_fwd.txt).
  const Problem stem = testing::NhwcForward(32, 3, 32, 299, 299, 3, 3, 0, 0, 2, 1, 1);
  REQUIRE(s.IsApplicable(sm90, stem).ok());
  CHECK(s.DefaultConfig(sm90, stem).ToString() == "8,16,32,8,4,0");
  // The finishing step unrolls the filter rows of the winner (UNROLL_R 1), once.
  const std::optional<PerfConfig> unrolled = s.Specialize(sm90, stem, s.DefaultConfig(sm90, stem));
  REQUIRE(unrolled.has_value());
  CHECK(unrolled->ToString() == "8,16,32,8,4,1");
  CHECK_FALSE(s.Specialize(sm90, stem, *unrolled).has_value());
  absl::StatusOr<solver::Solution> unrolled_sol = s.GetSolution(sm90, stem, *unrolled);
  REQUIRE(unrolled_sol.ok());
  const std::vector<std::string>& opts = unrolled_sol->kernels.at(0).options;
  CHECK(std::count(opts.begin(), opts.end(), "-DUNROLL_R=1") == 1);
  const Problem one_row = testing::NhwcForward(2, 3, 16, 9, 9, 1, 3, 0, 1, 1, 1, 1);
  if (s.IsApplicable(sm90, one_row).ok()) CHECK_FALSE(s.Specialize(sm90, one_row, s.DefaultConfig(sm90, one_row)).has_value());
  // Refused: C/G above 8, the other directions, CPU targets for the registered instance.
  CHECK_FALSE(s.IsApplicable(sm90, testing::NhwcForward(2, 9, 16, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());
  CHECK_FALSE(s.IsApplicable(sm90, testing::NhwcForward(2, 64, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());
  CHECK_FALSE(s.IsApplicable(sm90, testing::NhwcForward(2, 32, 32, 9, 9, 3, 3, 1, 1, 1, 1, 2)).ok());  // C/G = 16
  CHECK(s.IsApplicable(sm90, testing::NhwcForward(2, 32, 32, 9, 9, 3, 3, 1, 1, 1, 1, 4)).ok());        // C/G = 8
  for (Direction dir : {Direction::kBackwardData, Direction::kBackwardWeights}) {
    CHECK_FALSE(s.IsApplicable(sm90, testing::With(stem, dir, DataType::kFp16, Layout::kNHWC)).ok());
  }
  CHECK_FALSE(s.IsApplicable(sm90, testing::With(stem, Direction::kForward, DataType::kInt8, Layout::kNHWC)).ok());
  absl::StatusOr<Target> cpu = solver::TargetForArch("cpu-avx2");
  REQUIRE(cpu.ok());
  CHECK_FALSE(s.IsApplicable(*cpu, stem).ok());
  CHECK(SmallCFwdSolver(SmallCTargets::kGpuAndCpu).IsApplicable(*cpu, stem).ok());
  // A 7x7 filter of 8 channels: 64-channel tiles exceed 48 KiB of shared memory and are refused.
  const Problem wide = testing::NhwcForward(1, 8, 64, 30, 30, 7, 7, 3, 3, 1, 1, 1);
  for (const PerfConfig& c : AllValid(s, sm90, wide)) CHECK(s.Space(sm90, wide).Value(c, "TB_K") < 64);
  // Registered as 1026.
  const solver::RegisteredSolver* registered = solver::SolverRegistry::Builtin().ById(1026);
  REQUIRE(registered != nullptr);
  CHECK(registered->solver->Name() == "TunaSmallCFwd");
}

TEST_CASE("small C forward: the defaults build with NVRTC (sm_90) and hiprtc (gfx90a)", "[solver]") {
  testing::PortableDefaultBuilds builds;
  const SmallCFwdSolver s;
  const std::vector<Problem> problems = CheckedProblems();
  for (size_t i = 0; i < problems.size(); i += 4) builds.Build(s, problems[i]);
  builds.Build(s, testing::NhwcForward(32, 3, 32, 299, 299, 3, 3, 0, 0, 2, 1, 1));  // the stem
  if (builds.has_nvrtc()) CHECK(builds.built() >= 10);
}

TEST_CASE("small C forward: the kernel body matches the reference on the cpu backend", "[solver]") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const SmallCFwdSolver s(SmallCTargets::kGpuAndCpu);
  std::mt19937_64 rng(1026);
  int runs = 0, failures = 0;
  for (const Problem& p : CheckedProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(h.target(), p).ok());
    for (const PerfConfig& c : testing::DeviceCheckConfigs(s, h.target(), p, rng, 1, -1)) {
      INFO("params " << c.ToString());
      absl::StatusOr<reference::VerifyReport> report = h.Run(s, p, c);
      INFO(report.status().ToString());
      REQUIRE(report.ok());
      INFO(report->Summary());
      CHECK(report->ok);
      failures += report->ok ? 0 : 1;
      ++runs;
    }
  }
  std::printf("cpu backend: %d runs, %d failures, %d builds\n", runs, failures, h.compiles());
  CHECK(runs >= 70);
  CHECK(failures == 0);
}

TEST_CASE("small C forward matches the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(0);
  if (!cuda) return;
  const Target target = cuda->target;
  const SmallCFwdSolver s;
  std::mt19937_64 rng(1026);
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  std::vector<Problem> problems = CheckedProblems();
  problems.push_back(testing::NhwcForward(2, 3, 32, 299, 299, 3, 3, 0, 0, 2, 1, 1));  // the stem at batch 2
  testing::CheckOnDevice(checker, s, target, problems, rng, -1, tally, 3);
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 140);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
