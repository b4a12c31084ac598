// TunaThinBwd (1023, direct backward data for C/G <= 4): planning checks without a compiler
// (applicability, defaults valid, pruning), NVRTC (sm_90) and hiprtc (gfx90a) builds of the
// defaults, and, tagged "gpu", the ResNet-50 stem at batch 1 and 2 and edge shapes (C = 1..4,
// groups with C/G = 2, strides 1-3, dilation, 5x5 / 1x7 / 7x1 filters, asymmetric and valid
// padding, odd sizes) in FP32 NCHW, FP32 NHWC, FP16 NHWC and BF16 NCHW, each with the default and
// two random configs, checked against the CPU reference on poisoned outputs.
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_thin_bwd.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;
using testing::AllValid;

Problem Bwd(int64_t n, int64_t c, int64_t k, int64_t h, int64_t w, int64_t fy, int64_t fx, int64_t pad_h,
            int64_t pad_w, int64_t stride, int64_t dil, int64_t groups) {
  return testing::With(testing::NhwcForward(n, c, k, h, w, fy, fx, pad_h, pad_w, stride, dil, groups),
                       Direction::kBackwardData, DataType::kFp32, Layout::kNCHW);
}

std::vector<Problem> Problems() {
  return {
      Bwd(1, 3, 64, 224, 224, 7, 7, 3, 3, 2, 1, 1),  // the ResNet-50 stem
      Bwd(2, 3, 64, 32, 32, 7, 7, 3, 3, 2, 1, 1),    // the stem's shape, small
      Bwd(2, 1, 16, 13, 11, 3, 3, 1, 1, 1, 1, 1),    // C = 1
      Bwd(2, 2, 24, 15, 15, 5, 5, 2, 2, 2, 1, 1),    // C = 2, 5x5 stride 2
      Bwd(1, 4, 40, 17, 17, 3, 3, 1, 1, 3, 1, 1),    // C = 4, stride 3
      Bwd(2, 3, 20, 14, 14, 3, 3, 2, 2, 1, 2, 1),    // dilation 2
      Bwd(2, 8, 16, 12, 12, 3, 3, 1, 1, 2, 1, 4),    // groups 4, C/G = 2, K/G = 4
      Bwd(1, 3, 12, 17, 17, 1, 7, 0, 3, 1, 1, 1),    // 1x7
      Bwd(1, 3, 12, 17, 17, 7, 1, 3, 0, 1, 1, 1),    // 7x1
      Bwd(3, 3, 72, 9, 10, 3, 3, 0, 0, 2, 1, 1),     // valid padding, K = 72 (K_CHUNK tails)
      Bwd(2, 3, 8, 5, 5, 3, 3, 2, 2, 1, 1, 1),       // padding past the window's reach
  };
}

const std::vector<std::pair<DataType, Layout>> kVariants = {{DataType::kFp32, Layout::kNCHW},
                                                            {DataType::kFp32, Layout::kNHWC},
                                                            {DataType::kFp16, Layout::kNHWC},
                                                            {DataType::kBf16, Layout::kNCHW}};

TEST_CASE("thin bwd: applicability, defaults and pruning", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::ThinBwdSolver s;
  for (const Problem& base : Problems()) {
    for (const auto& [type, layout] : kVariants) {
      const Problem p = testing::With(base, Direction::kBackwardData, type, layout);
      INFO(p.Canonical());
      REQUIRE(s.IsApplicable(*sm90, p).ok());
      CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
      const std::vector<PerfConfig> valid = AllValid(s, *sm90, p);
      CHECK(valid.size() >= 3);
      CHECK(valid.size() <= 300);
      for (const PerfConfig& c : valid) CHECK(s.GetSolution(*sm90, p, c).ok());
    }
  }
  const Problem stem = Problems()[0];
  CHECK_FALSE(s.IsApplicable(*sm90, testing::With(stem, Direction::kForward, DataType::kFp32, Layout::kNCHW)).ok());
  CHECK_FALSE(s.IsApplicable(*sm90, Bwd(2, 8, 16, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());  // C = 8
  CHECK_FALSE(s.IsApplicable(*sm90, Bwd(2, 3, 16, 30, 30, 3, 3, 1, 1, 5, 1, 1)).ok());  // stride 5
  absl::StatusOr<Target> cpu = solver::TargetForArch("cpu-avx2");
  REQUIRE(cpu.ok());
  CHECK_FALSE(s.IsApplicable(*cpu, stem).ok());
}

TEST_CASE("thin bwd: the defaults build with NVRTC (sm_90) and hiprtc (gfx90a)", "[solver]") {
  testing::PortableDefaultBuilds builds;
  solver::ThinBwdSolver s;
  for (const Problem& base : {Problems()[0], Problems()[4], Problems()[6]}) {
    for (const auto& [type, layout] : kVariants) builds.Build(s, testing::With(base, Direction::kBackwardData, type, layout));
  }
  if (builds.has_nvrtc()) CHECK(builds.built() >= 12);
}

TEST_CASE("thin bwd: matches the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(0);
  if (!cuda) return;
  solver::ThinBwdSolver s;
  std::vector<Problem> problems;
  for (const Problem& base : Problems()) {
    for (const auto& [type, layout] : kVariants) {
      problems.push_back(testing::With(base, Direction::kBackwardData, type, layout));
    }
  }
  std::mt19937_64 rng(1023);
  testing::ConvChecker checker(*cuda->backend, *cuda->device, cuda->target);
  testing::DeviceTally tally;
  testing::CheckOnDevice(checker, s, cuda->target, problems, rng, -1, tally);
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 100);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
