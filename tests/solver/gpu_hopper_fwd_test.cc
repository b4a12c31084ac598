// TunaHopperFwd (1012, wgmma on sm_90a): planning checks without a compiler (applicability,
// defaults valid on all ResNet-50 layers, analytic pruning), NVRTC builds for sm_90a of every
// valid FP16 config and the BF16 defaults, and, tagged "gpu", every ResNet-50 layer at batch 1
// (default + 2 random configs + a split-K (cluster) one where valid), BF16 and edge problems (groups, odd K,
// C = 8, C = 3, 4 and 5 (8-byte build, channel-padded copies), dilation, stride 3, 1x7 / 7x1 filters, M, N and K tails)
// checked against the CPU reference on poisoned outputs and workspaces.
#include <algorithm>
#include <cstdio>
#include <random>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_hopper_fwd.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

using testing::AllValid;
using testing::NhwcForward;

// Shapes beyond ResNet-50 that the kernel's indexing must get right.
std::vector<Problem> HopperEdgeProblems() {
  return {
      NhwcForward(2, 8, 12, 11, 10, 1, 1, 0, 0, 2, 1, 1),      // C = 8: one chunk per tap, stride 2
      NhwcForward(1, 16, 24, 9, 9, 3, 3, 2, 2, 1, 2, 1),       // dilation 2
      NhwcForward(2, 32, 40, 8, 8, 3, 3, 1, 1, 1, 1, 2),       // groups 2 (C/G 16, K/G 20: N tail)
      NhwcForward(1, 24, 72, 12, 12, 5, 5, 2, 2, 3, 1, 1),     // stride 3, 5x5, K = 72
      NhwcForward(3, 64, 33, 6, 6, 2, 3, 0, 0, 1, 1, 1),       // asymmetric filter, valid padding, odd K
      NhwcForward(2, 48, 64, 17, 17, 1, 7, 0, 3, 1, 1, 1),     // 1x7 (Inception)
      NhwcForward(2, 48, 64, 17, 17, 7, 1, 3, 0, 1, 1, 1),     // 7x1
      NhwcForward(5, 72, 200, 7, 7, 3, 3, 1, 1, 1, 1, 1),      // M = 245, K = 200: tails everywhere
      NhwcForward(1, 256, 96, 10, 10, 3, 3, 1, 1, 1, 1, 4),    // groups 4, Kdim 576 (9 k-tiles)
      NhwcForward(4, 40, 8, 13, 13, 3, 3, 1, 1, 2, 1, 1),      // K = 8 < every tile
      NhwcForward(2, 3, 20, 23, 23, 7, 7, 3, 3, 2, 1, 1),      // C = 3: padded to 4, 8-byte build, stem-like
      NhwcForward(1, 5, 9, 9, 11, 3, 2, 1, 0, 1, 2, 1),        // C = 5: padded to 8, asymmetric, dilated
      NhwcForward(2, 4, 16, 10, 10, 3, 3, 1, 1, 1, 1, 1),      // C = 4: 8-byte build, no copy
      NhwcForward(2, 128, 64, 6, 6, 3, 3, 1, 1, 1, 1, 1),      // 18 k-tiles, small M: split-K configs
  };
}

TEST_CASE("hopper fwd: applicability, defaults and pruning", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<Target> sm80 = solver::TargetForArch("sm_80");
  absl::StatusOr<Target> gfx = solver::TargetForArch("gfx90a");
  REQUIRE(sm90.ok());
  REQUIRE(sm80.ok());
  REQUIRE(gfx.ok());
  solver::HopperFwdSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    const Problem h = testing::With(layers[i], Direction::kForward, DataType::kFp16, Layout::kNHWC);
    INFO(h.Canonical());
    REQUIRE(s.IsApplicable(*sm90, h).ok());
    REQUIRE(s.IsApplicable(*sm90, testing::With(layers[i], Direction::kForward, DataType::kBf16, Layout::kNHWC)).ok());
    CHECK(s.IsValid(*sm90, h, s.DefaultConfig(*sm90, h)).ok());
    const std::vector<PerfConfig> valid = AllValid(s, *sm90, h);
    CHECK(valid.size() >= 4);
    CHECK(valid.size() <= 128);
    CHECK_FALSE(s.IsApplicable(*sm80, h).ok());
    CHECK_FALSE(s.IsApplicable(*gfx, h).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(layers[i], Direction::kForward, DataType::kFp32, Layout::kNHWC)).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(layers[i], Direction::kForward, DataType::kFp16, Layout::kNCHW)).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(layers[i], Direction::kBackwardData, DataType::kFp16, Layout::kNHWC)).ok());
  }
  for (const Problem& p : HopperEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
  }
  // Depthwise (C/G = 1) is not this solver's.
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcForward(2, 16, 16, 9, 9, 3, 3, 1, 1, 1, 1, 16)).ok());
  // Analytic pruning: accumulators, warpgroup rows, shared memory.
  const Problem big = NhwcForward(32, 256, 1024, 28, 28, 3, 3, 1, 1, 1, 1, 1);
  CHECK(s.IsValid(*sm90, big, PerfConfig{{128, 256, 2, 4, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 1, 4, 1}}).ok());  // 256 accumulators
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 128, 2, 4, 1}}).ok());   // 32-row warpgroups
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{256, 256, 2, 6, 1}}).ok());  // 385 KiB of ring
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 2, 4, 2}}).ok());  // tiles fill the GPU
  Target small = *sm90;
  small.max_shared_bytes_per_block = 100 * 1024;
  CHECK_FALSE(s.IsValid(small, big, PerfConfig{{128, 256, 2, 4, 1}}).ok());
  // Split-K on a late layer (M = 1568): a cluster of 4 blocks per tile, no workspace.
  const Problem late = NhwcForward(32, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1);
  absl::StatusOr<solver::Solution> split = s.GetSolution(*sm90, late, PerfConfig{{128, 128, 2, 4, 4}});
  REQUIRE(split.ok());
  CHECK(split->launches.size() == 1);
  CHECK(split->launches[0].grid.z == 4);
  CHECK(split->workspace_bytes == 0);
  CHECK(split->kernels[0].options[4] == "-DSPLIT_K=4");
  // The stem (C = 3) pads x and w to 4 channels in the workspace, then runs the 8-byte build.
  absl::StatusOr<solver::Solution> stem =
      s.GetSolution(*sm90, NhwcForward(32, 3, 64, 224, 224, 7, 7, 3, 3, 2, 1, 1), PerfConfig{{128, 64, 1, 4, 1}});
  REQUIRE(stem.ok());
  CHECK(std::find(stem->kernels[0].options.begin(), stem->kernels[0].options.end(), "-DCHUNK=8") !=
        stem->kernels[0].options.end());
  CHECK(stem->launches.size() == 3);
  CHECK(stem->workspace_bytes == (32u * 224 * 224 * 4 + 64u * 7 * 7 * 4) * 2);
  CHECK(solver::HopperFwdSolver::SharedBytes(128, 256, 4, 1) == 4u * 384 * 128 + 1024);
  CHECK(solver::HopperFwdSolver::SharedBytes(256, 256, 3, 2) == 256u * 264 * 4 + 1024);  // FP32 staging
  // Build options are the axes' names, plus the arch-specific flag for sm_90a.
  absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, big, PerfConfig{{128, 256, 2, 4, 1}});
  REQUIRE(sol.ok());
  CHECK(sol->kernels[0].options[0] == "-DTB_M=128");
  CHECK(sol->kernels[0].options[3] == "-DSTAGES=4");
  CHECK(solver::BuildArch(sol->kernels[0], "sm_90") == "sm_90a");
  CHECK(sol->launches[0].block.x == 256);
}

TEST_CASE("hopper fwd: every valid FP16 config and the BF16 defaults build for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  solver::HopperFwdSolver s;
  testing::Sm90aBuilds builds(*be, s, *target);
  auto build = [&](const Problem& p, const PerfConfig& c) { builds.Build(p, c); };
  const Problem wide = NhwcForward(32, 256, 1024, 14, 14, 3, 3, 1, 1, 1, 1, 1);
  for (const PerfConfig& c : AllValid(s, *target, wide)) build(wide, c);
  const Problem bf = NhwcForward(32, 256, 1024, 14, 14, 3, 3, 1, 1, 1, 1, 1, DataType::kBf16);
  build(bf, s.DefaultConfig(*target, bf));
  const Problem stem = NhwcForward(32, 3, 64, 224, 224, 7, 7, 3, 3, 2, 1, 1);
  build(stem, s.DefaultConfig(*target, stem));
  std::printf("%zu distinct sm_90a builds\n", builds.distinct());
  CHECK(builds.distinct() >= 12);
}

TEST_CASE("hopper fwd matches the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  solver::HopperFwdSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  const std::vector<Problem> problems = testing::HopperDeviceProblems(
      Direction::kForward, layers, HopperEdgeProblems(), [](size_t) { return 1; });
  std::mt19937_64 rng(1012);
  testing::ConvChecker checker(*be, device, target);
  testing::DeviceTally tally;
  testing::CheckOnDevice(checker, s, target, problems, rng, 4, tally);  // axis 4: SPLIT_K
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 80);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
