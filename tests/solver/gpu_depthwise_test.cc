// TunaDepthwise{Fwd,Bwd,Wrw} (1020-1022, depthwise direct kernels): planning checks without a
// compiler (applicability, defaults valid, pruning, the split workspace), NVRTC builds for sm_90
// and hiprtc builds for gfx90a of the defaults, and, tagged "gpu", MobileNet-V2's depthwise layers
// at batch 2 and edge shapes (channel multipliers, strides 2 and 3, dilation, 5x5 / 7x7 / 1x5 /
// 3x1 filters, asymmetric and valid padding, odd sizes, channels that are not a multiple of the
// vector) in FP32 NCHW, FP16 NHWC and BF16 NHWC, every direction, each with the default, a
// random config and a split one (backward weights), checked against the CPU reference on
// poisoned outputs and workspaces.
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_depthwise.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;
using testing::AllValid;

// A depthwise problem (groups = C, K = C * mult), 2D, square stride and dilation.
Problem Dw(int64_t n, int64_t c, int64_t mult, int64_t h, int64_t w, int64_t fy, int64_t fx, int64_t pad_h,
           int64_t pad_w, int64_t stride, int64_t dil) {
  return testing::NhwcForward(n, c, c * mult, h, w, fy, fx, pad_h, pad_w, stride, dil, c);
}

// MobileNet-V2's depthwise layers (224x224 input): 3x3, stride 1 or 2, padding 1.
std::vector<Problem> MobileNetV2(int64_t n) {
  return {Dw(n, 32, 1, 112, 112, 3, 3, 1, 1, 1, 1),  Dw(n, 96, 1, 112, 112, 3, 3, 1, 1, 2, 1),
          Dw(n, 144, 1, 56, 56, 3, 3, 1, 1, 1, 1),   Dw(n, 144, 1, 56, 56, 3, 3, 1, 1, 2, 1),
          Dw(n, 192, 1, 28, 28, 3, 3, 1, 1, 1, 1),   Dw(n, 192, 1, 28, 28, 3, 3, 1, 1, 2, 1),
          Dw(n, 384, 1, 14, 14, 3, 3, 1, 1, 1, 1),   Dw(n, 576, 1, 14, 14, 3, 3, 1, 1, 1, 1),
          Dw(n, 576, 1, 14, 14, 3, 3, 1, 1, 2, 1),   Dw(n, 960, 1, 7, 7, 3, 3, 1, 1, 1, 1)};
}

std::vector<Problem> EdgeProblems() {
  return {
      Dw(2, 8, 2, 9, 9, 3, 3, 1, 1, 1, 1),      // multiplier 2
      Dw(1, 6, 3, 10, 7, 3, 3, 1, 1, 2, 1),     // multiplier 3, stride 2, odd width
      Dw(2, 16, 1, 13, 13, 3, 3, 2, 2, 1, 2),   // dilation 2
      Dw(2, 24, 1, 15, 15, 5, 5, 2, 2, 2, 1),   // 5x5 stride 2 (EfficientNet)
      Dw(1, 40, 1, 14, 14, 7, 7, 3, 3, 1, 1),   // 7x7 (ConvNeXt)
      Dw(2, 12, 1, 11, 16, 1, 5, 0, 2, 1, 1),   // 1x5, padding per dimension
      Dw(2, 12, 1, 11, 16, 3, 1, 1, 0, 1, 1),   // 3x1
      Dw(3, 20, 1, 9, 9, 3, 3, 0, 0, 1, 1),     // valid padding
      Dw(2, 10, 1, 17, 17, 3, 3, 1, 1, 3, 1),   // stride 3, C = 10 (no 8-vector)
      Dw(1, 7, 1, 5, 6, 3, 3, 2, 2, 1, 1),      // C = 7, padding wider than the window's reach
      Dw(4, 64, 1, 3, 3, 3, 3, 1, 1, 1, 1),     // 3x3 image: tails in every tile
      Dw(2, 32, 1, 20, 20, 3, 3, 1, 1, 2, 3),   // stride 2 with dilation 3
  };
}

const std::vector<std::pair<DataType, Layout>> kVariants = {
    {DataType::kFp32, Layout::kNCHW}, {DataType::kFp16, Layout::kNHWC}, {DataType::kBf16, Layout::kNHWC}};

TEST_CASE("depthwise: applicability, defaults and pruning", "[solver]") {
  const Target sm90 = testing::ArchTarget("sm_90");
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    solver::DepthwiseSolver s(dir);
    std::vector<Problem> all = MobileNetV2(32);
    for (const Problem& p : EdgeProblems()) all.push_back(p);
    for (const Problem& base : all) {
      for (const auto& [type, layout] : kVariants) {
        const Problem p = testing::With(base, dir, type, layout);
        INFO(s.Name() << " " << p.Canonical());
        REQUIRE(s.IsApplicable(sm90, p).ok());
        const PerfConfig d = s.DefaultConfig(sm90, p);
        CHECK(s.IsValid(sm90, p, d).ok());
        const std::vector<PerfConfig> valid = AllValid(s, sm90, p);
        CHECK(valid.size() >= 3);
        CHECK(valid.size() <= 800);  // small enough to search exhaustively
        for (const PerfConfig& c : valid) {
          absl::StatusOr<solver::Solution> sol = s.GetSolution(sm90, p, c);
          REQUIRE(sol.ok());
          const bool split = dir == Direction::kBackwardWeights && c.values[5] > 1;
          CHECK(sol->launches.size() == (split ? 2u : 1u));
          CHECK((sol->workspace_bytes > 0) == split);
        }
      }
    }
    const Problem dense = testing::With(testing::NhwcForward(2, 16, 16, 9, 9, 3, 3, 1, 1, 1, 1, 1), dir,
                                        DataType::kFp16, Layout::kNHWC);
    CHECK_FALSE(s.IsApplicable(sm90, dense).ok());
    const Problem grouped = testing::With(testing::NhwcForward(2, 16, 16, 9, 9, 3, 3, 1, 1, 1, 1, 8), dir,
                                          DataType::kFp16, Layout::kNHWC);
    CHECK_FALSE(s.IsApplicable(sm90, grouped).ok());  // C/G = 2
    CHECK_FALSE(s.IsApplicable(sm90, testing::With(Dw(2, 8, 9, 9, 9, 3, 3, 1, 1, 1, 1), dir, DataType::kFp16,
                                                   Layout::kNHWC)).ok());  // multiplier 9
    absl::StatusOr<Target> cpu = solver::TargetForArch("cpu-avx2");
    REQUIRE(cpu.ok());
    CHECK_FALSE(s.IsApplicable(*cpu, testing::With(MobileNetV2(2)[0], dir, DataType::kFp32, Layout::kNCHW)).ok());
    // NCHW has no channel vectors.
    const Problem nchw = testing::With(MobileNetV2(2)[2], dir, DataType::kFp32, Layout::kNCHW);
    for (const PerfConfig& c : AllValid(s, sm90, nchw)) CHECK(s.Space(sm90, nchw).Value(c, "THREAD_C") == 1);
  }
  solver::DepthwiseSolver bwd(Direction::kBackwardData);
  CHECK_FALSE(bwd.IsApplicable(sm90, testing::With(Dw(2, 8, 1, 20, 20, 3, 3, 1, 1, 5, 1), Direction::kBackwardData,
                                                   DataType::kFp16, Layout::kNHWC)).ok());  // stride 5
}

TEST_CASE("depthwise: the defaults build with NVRTC (sm_90) and hiprtc (gfx90a)", "[solver]") {
  testing::PortableDefaultBuilds builds;
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    solver::DepthwiseSolver s(dir);
    for (const Problem& base : {MobileNetV2(2)[3], EdgeProblems()[1], EdgeProblems()[2]}) {
      for (const auto& [type, layout] : kVariants) builds.Build(s, testing::With(base, dir, type, layout));
    }
  }
  if (builds.has_nvrtc()) CHECK(builds.built() >= 27);
}

TEST_CASE("depthwise: every direction matches the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(0);
  if (!cuda) return;
  const Target target = cuda->target;
  std::mt19937_64 rng(1020);
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    solver::DepthwiseSolver s(dir);
    // MobileNet's layers in one variant each (they differ in size, not in shape), the edge
    // problems in all three; the default, one random config and a split one (Wrw) each.
    std::vector<Problem> problems;
    const std::vector<Problem> layers = MobileNetV2(2);
    for (size_t i = 0; i < layers.size(); ++i) {
      const auto& [type, layout] = kVariants[i % kVariants.size()];
      problems.push_back(testing::With(layers[i], dir, type, layout));
    }
    for (const Problem& p : EdgeProblems()) {
      for (const auto& [type, layout] : kVariants) problems.push_back(testing::With(p, dir, type, layout));
    }
    const int split_axis = dir == Direction::kBackwardWeights ? 5 : -1;  // SPLIT
    for (const Problem& p : problems) {
      INFO(p.Canonical());
      REQUIRE(s.IsApplicable(target, p).ok());
      const std::vector<PerfConfig> configs = testing::DeviceCheckConfigs(s, target, p, rng, 1, split_axis);
      tally.failures += checker.CheckAll(s, p, configs);
      tally.runs += static_cast<int>(configs.size());
    }
  }
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 250);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
