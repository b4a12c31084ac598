// TunaSmallCTcFwd (1028, thin-input forward on the tensor cores): planning checks without a
// compiler (applicability: FP32, C/G above 8, other directions, HIP and pre-sm_80 targets refused;
// defaults valid; every valid config plans one launch of the tile's warps within the target's
// shared memory, no workspace), NVRTC builds for sm_80 and sm_90 of the defaults and of a spread
// of the stems' configs, and, tagged "gpu", every thin-input edge problem (C = 1..8, strides,
// dilation, padding, 1x7 / 7x1 / 5x5 / 7x7 / 1x1 filters, groups, depthwise, K tails, odd sizes)
// in FP16/BF16, NHWC/NCHW and mixed layouts, plus both stems, against the CPU reference on a CUDA
// device.
#include <cstdio>
#include <random>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_small_c_tc_fwd.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::SmallCTcFwdSolver;
using solver::Target;
using testing::AllValid;
using testing::NhwcForward;

const std::vector<std::pair<DataType, Layout>> kVariants = {
    {DataType::kFp16, Layout::kNHWC}, {DataType::kBf16, Layout::kNHWC}, {DataType::kFp16, Layout::kNCHW},
    {DataType::kBf16, Layout::kNCHW}};

Problem ResNetStem(int64_t n) { return NhwcForward(n, 3, 64, 224, 224, 7, 7, 3, 3, 2, 1, 1); }
Problem InceptionStem(int64_t n) { return NhwcForward(n, 3, 32, 299, 299, 3, 3, 0, 0, 2, 1, 1); }

// Each thin-input problem in two of the variants (the first in all four), plus mixed layouts.
std::vector<Problem> CheckedProblems() { return testing::ThinInputChecks(kVariants, 1); }

Target Arch(const std::string& arch) {
  absl::StatusOr<Target> t = solver::TargetForArch(arch);
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("small C tensor-core forward: applicability, defaults and plans", "[solver]") {
  const SmallCTcFwdSolver s;
  for (const std::string arch : {"sm_90", "sm_80"}) {
    const Target target = Arch(arch);
    for (const Problem& p : CheckedProblems()) {
      INFO(arch << " " << p.Canonical());
      REQUIRE(s.IsApplicable(target, p).ok());
      const PerfConfig d = s.DefaultConfig(target, p);
      CHECK(s.IsValid(target, p, d).ok());
      const std::vector<PerfConfig> valid = AllValid(s, target, p);
      CHECK(valid.size() >= (p.Out()[1] * p.Out()[2] > 1 ? 2u : 1u));  // a 1x1 output: the smallest tile
      const solver::SearchSpace space = s.Space(target, p);
      for (const PerfConfig& c : valid) {
        absl::StatusOr<solver::Solution> sol = s.GetSolution(target, p, c);
        REQUIRE(sol.ok());
        REQUIRE(sol->launches.size() == 1u);
        CHECK(sol->workspace_bytes == 0u);
        CHECK(sol->zero_first.empty());
        const solver::Launch& l = sol->launches[0];
        const int64_t warps = space.Value(c, "TB_H") * space.Value(c, "TB_W") / space.Value(c, "WARP_M") *
                              (space.Value(c, "TB_N") / space.Value(c, "WARP_N"));
        CHECK(l.block.x == static_cast<uint32_t>(32 * warps));
        CHECK(l.grid.y % static_cast<uint32_t>(p.groups) == 0u);
        CHECK(l.grid.x >= 1u);
        CHECK(l.shared_bytes > 0u);
        CHECK(l.shared_bytes <= target.max_shared_bytes_per_block);
      }
    }
  }
  const Target sm90 = Arch("sm_90");
  // The stems' defaults: their measured best shapes (every output channel in one warp).
  CHECK(s.DefaultConfig(sm90, ResNetStem(32)).ToString() == "8,8,64,16,64,1");
  CHECK(s.DefaultConfig(sm90, InceptionStem(32)).ToString() == "4,32,32,64,32,0");
  const std::vector<PerfConfig> stem_space = AllValid(s, sm90, ResNetStem(32));
  std::printf("ResNet-50 stem: %zu valid configs\n", stem_space.size());
  CHECK(stem_space.size() >= 20);
  CHECK(stem_space.size() <= 400);
  for (const PerfConfig& c : stem_space) CHECK(s.Space(sm90, ResNetStem(32)).Value(c, "TB_N") == 64);  // K = 64: one channel tile
  // Refused: FP32, C/G above 8, the other directions, HIP, pre-Ampere and CPU targets.
  CHECK_FALSE(s.IsApplicable(sm90, testing::With(ResNetStem(2), Direction::kForward, DataType::kFp32, Layout::kNCHW)).ok());
  CHECK_FALSE(s.IsApplicable(sm90, NhwcForward(2, 9, 16, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());
  CHECK_FALSE(s.IsApplicable(sm90, NhwcForward(2, 32, 32, 9, 9, 3, 3, 1, 1, 1, 1, 2)).ok());  // C/G = 16
  CHECK(s.IsApplicable(sm90, NhwcForward(2, 32, 32, 9, 9, 3, 3, 1, 1, 1, 1, 4)).ok());        // C/G = 8
  for (Direction dir : {Direction::kBackwardData, Direction::kBackwardWeights}) {
    CHECK_FALSE(s.IsApplicable(sm90, testing::With(ResNetStem(2), dir, DataType::kFp16, Layout::kNHWC)).ok());
  }
  for (const std::string arch : {"gfx90a", "sm_75", "cpu-avx2"}) {
    INFO(arch);
    CHECK_FALSE(s.IsApplicable(Arch(arch), ResNetStem(2)).ok());
  }
  // Registered as 1028.
  const solver::RegisteredSolver* registered = solver::SolverRegistry::Builtin().ById(1028);
  REQUIRE(registered != nullptr);
  CHECK(registered->solver->Name() == "TunaSmallCTcFwd");
}

TEST_CASE("small C tensor-core forward: builds with NVRTC for sm_80 and sm_90", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  const SmallCTcFwdSolver s;
  std::set<std::string> done;
  auto build = [&](const Target& target, const Problem& p, const PerfConfig& c) {
    absl::StatusOr<solver::Solution> sol = s.GetSolution(target, p, c);
    INFO(target.arch << " " << p.Canonical() << " params " << c.ToString());
    REQUIRE(sol.ok());
    std::string key = target.arch;
    for (const std::string& o : sol->kernels[0].options) key += " " + o;
    if (!done.insert(key).second) return;
    absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*be, *sol, target.arch);
    if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 4000).c_str());
    REQUIRE(code.ok());
  };
  const std::vector<Problem> problems = CheckedProblems();
  for (const std::string arch : {"sm_90", "sm_80"}) {
    const Target target = Arch(arch);
    for (size_t i = 0; i < problems.size(); i += 3) build(target, problems[i], s.DefaultConfig(target, problems[i]));
  }
  // A spread of the ResNet-50 stem's space (the largest reduction: 160 taps), BF16 too.
  const Target sm90 = Arch("sm_90");
  const std::vector<PerfConfig> valid = AllValid(s, sm90, ResNetStem(32));
  for (size_t i = 0; i < valid.size(); i += std::max<size_t>(1, valid.size() / 6)) build(sm90, ResNetStem(32), valid[i]);
  const Problem bf16 = testing::With(ResNetStem(32), Direction::kForward, DataType::kBf16, Layout::kNHWC);
  build(sm90, bf16, s.DefaultConfig(sm90, bf16));
  std::printf("%zu distinct builds\n", done.size());
  CHECK(done.size() >= 20);
}

TEST_CASE("small C tensor-core forward matches the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(80);
  if (!cuda) return;
  const Target target = cuda->target;
  const SmallCTcFwdSolver s;
  std::mt19937_64 rng(1028);
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  std::vector<Problem> problems = CheckedProblems();
  problems.push_back(InceptionStem(2));
  problems.push_back(ResNetStem(2));
  problems.push_back(testing::With(ResNetStem(2), Direction::kForward, DataType::kBf16, Layout::kNHWC));
  testing::CheckOnDevice(checker, s, target, problems, rng, -1, tally, 3);
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 140);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
