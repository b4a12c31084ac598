// TunaHopperWrw (1019, wgmma on sm_90a, backward weights): planning checks without a compiler
// (applicability, defaults valid on all ResNet-50 layers, analytic pruning, split-K workspace and
// reduce launch), NVRTC builds for sm_90a of every valid FP16 tile config and the BF16 default,
// and, tagged "gpu", every ResNet-50 layer at batch 1 and 2 (default + 2 random configs + a split
// one where valid), BF16 and edge problems (groups, dilation, stride 3, asymmetric filters, pixel,
// K and column tails) checked against the CPU reference on poisoned outputs and workspaces.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_hopper_wrw.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

using testing::AllValid;
using testing::NhwcWrw;

// Shapes beyond ResNet-50 that the kernel's indexing must get right.
std::vector<Problem> WrwEdgeProblems() {
  return {
      NhwcWrw(2, 8, 16, 12, 11, 1, 1, 0, 0, 2, 1, 1),       // C = 8: one chunk per tap, stride 2
      NhwcWrw(1, 16, 24, 9, 9, 3, 3, 2, 2, 1, 2, 1),        // dilation 2, K = 24 (M tail)
      NhwcWrw(2, 32, 48, 8, 8, 3, 3, 1, 1, 1, 1, 2),        // groups 2 (C/G 16, K/G 24)
      NhwcWrw(1, 24, 72, 12, 12, 5, 5, 2, 2, 3, 1, 1),      // stride 3, 5x5, K = 72
      NhwcWrw(3, 64, 40, 6, 6, 2, 3, 0, 0, 1, 1, 1),        // asymmetric filter, valid padding
      NhwcWrw(2, 48, 64, 17, 17, 1, 7, 0, 3, 1, 1, 1),      // 1x7 (Inception)
      NhwcWrw(2, 48, 64, 17, 17, 7, 1, 3, 0, 1, 1, 1),      // 7x1
      NhwcWrw(5, 72, 200, 7, 7, 3, 3, 1, 1, 1, 1, 1),       // 245 pixels, K = 200: tails everywhere
      NhwcWrw(1, 256, 96, 10, 10, 3, 3, 1, 1, 1, 1, 4),     // groups 4
      NhwcWrw(4, 40, 8, 13, 13, 3, 3, 1, 1, 2, 1, 1),       // K = 8 < every tile
      NhwcWrw(8, 64, 64, 30, 30, 3, 3, 1, 1, 1, 1, 1),      // 7200 pixels: long pixel loops, splits
      NhwcWrw(2, 128, 256, 15, 15, 1, 1, 0, 0, 2, 1, 1),    // 1x1 stride 2 (ResNet downsample)
      NhwcWrw(2, 3, 64, 23, 23, 7, 7, 3, 3, 2, 1, 1),       // C = 3: padded to 4, 8-byte build, stem-like
      NhwcWrw(1, 5, 16, 9, 11, 3, 2, 1, 0, 1, 2, 1),        // C = 5: padded to 8, asymmetric, dilated
      NhwcWrw(2, 4, 16, 10, 10, 3, 3, 1, 1, 1, 1, 1),       // C = 4: 8-byte build (a padded copy too)
  };
}

TEST_CASE("hopper wrw: applicability, defaults and pruning", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<Target> sm80 = solver::TargetForArch("sm_80");
  REQUIRE(sm90.ok());
  REQUIRE(sm80.ok());
  solver::HopperWrwSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    const Problem h = testing::With(layers[i], Direction::kBackwardWeights, DataType::kFp16, Layout::kNHWC);
    INFO(h.Canonical());
    REQUIRE(s.IsApplicable(*sm90, h).ok());
    CHECK(s.IsValid(*sm90, h, s.DefaultConfig(*sm90, h)).ok());
    const std::vector<PerfConfig> valid = AllValid(s, *sm90, h);
    CHECK(valid.size() >= 4);
    CHECK_FALSE(s.IsApplicable(*sm80, h).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(h, Direction::kForward, DataType::kFp16, Layout::kNHWC)).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(h, Direction::kBackwardWeights, DataType::kFp32, Layout::kNHWC)).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(h, Direction::kBackwardWeights, DataType::kFp16, Layout::kNCHW)).ok());
  }
  for (const Problem& p : WrwEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
  }
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 16, 16, 9, 9, 3, 3, 1, 1, 1, 1, 16)).ok());  // depthwise
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 16, 12, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());   // K % 8 != 0
  // Pruning: accumulators, warpgroup rows, shared memory, splits.
  const Problem big = NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1);
  CHECK(s.IsValid(*sm90, big, PerfConfig{{128, 256, 2, 4, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 1, 4, 1}}).ok());  // 256 accumulators
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 128, 2, 4, 1}}).ok());   // 32-row warpgroups
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 2, 4, 64}}).ok());  // more splits than fill the GPU
  CHECK(s.IsValid(*sm90, big, PerfConfig{{256, 128, 4, 3, 1}}).ok());          // 4 warpgroups, 64 accumulators
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{256, 256, 4, 3, 1}}).ok());    // 128 accumulators at 512 threads
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 128, 2, 4, 1}}).ok());     // a warpgroup without a slab
  // A split config: workspace slices and the in-order reduce.
  const Problem early = NhwcWrw(32, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1);
  absl::StatusOr<solver::Solution> split = s.GetSolution(*sm90, early, PerfConfig{{64, 128, 1, 4, 16}});
  REQUIRE(split.ok());
  REQUIRE(split->launches.size() == 2);
  CHECK(split->launches[0].grid.z == 16);
  CHECK(split->launches[1].entry == "tuna_hopper_wrw_reduce");
  CHECK(split->workspace_bytes == 16u * 64 * 576 * 4);
  // SPLIT_K is the solver's (a kernel argument): it is not a build option.
  for (const std::string& o : split->kernels[0].options) CHECK(o.find("SPLIT_K") == std::string::npos);
  CHECK(split->kernels[0].options[0] == "-DTB_M=64");
  CHECK(solver::BuildArch(split->kernels[0], "sm_90") == "sm_90a");
  absl::StatusOr<solver::Solution> one = s.GetSolution(*sm90, big, PerfConfig{{128, 256, 2, 4, 1}});
  REQUIRE(one.ok());
  CHECK(one->launches.size() == 1);
  CHECK(one->workspace_bytes == 0);
  CHECK(solver::HopperWrwSolver::SharedBytes(128, 256, 4) == 4u * 384 * 128 + 1024);
  // The stem (C = 3): x padded to 4 channels in the workspace, the 8-byte build, FP32 partials of
  // the padded dw even unsplit, and a reduce that drops the padding channel.
  const Problem stem = NhwcWrw(32, 3, 64, 224, 224, 7, 7, 3, 3, 2, 1, 1);
  absl::StatusOr<solver::Solution> thin = s.GetSolution(*sm90, stem, PerfConfig{{64, 128, 1, 4, 1}});
  REQUIRE(thin.ok());
  REQUIRE(thin->launches.size() == 3);
  CHECK(thin->launches[0].entry == "tuna_pad_channels");
  CHECK(thin->launches[2].entry == "tuna_hopper_wrw_reduce");
  CHECK(std::find(thin->kernels[0].options.begin(), thin->kernels[0].options.end(), "-DCHUNK=8") !=
        thin->kernels[0].options.end());
  const uint64_t copy = 32u * 224 * 224 * 4 * 2;
  CHECK(thin->workspace_bytes == copy + 64u * 49 * 4 * 4);
}

TEST_CASE("hopper wrw: every valid FP16 tile config and the BF16 default build for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  solver::HopperWrwSolver s;
  testing::Sm90aBuilds builds(*be, s, *target);
  const Problem wide = NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1);
  for (const PerfConfig& c : AllValid(s, *target, wide)) builds.Build(wide, c);
  const Problem bf = NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1, DataType::kBf16);
  builds.Build(bf, s.DefaultConfig(*target, bf));
  std::printf("%zu distinct sm_90a builds\n", builds.distinct());
  CHECK(builds.distinct() >= 12);
}

TEST_CASE("hopper wrw matches the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  solver::HopperWrwSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  const std::vector<Problem> problems = testing::HopperDeviceProblems(
      Direction::kBackwardWeights, layers, WrwEdgeProblems(), [](size_t i) { return i % 2 == 0 ? 1 : 2; });
  std::mt19937_64 rng(1019);
  testing::ConvChecker checker(*be, device, target);
  testing::DeviceTally tally;
  testing::CheckOnDevice(checker, s, target, problems, rng, 4, tally);  // axis 4: SPLIT_K
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 80);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
