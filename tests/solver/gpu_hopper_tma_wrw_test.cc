// TunaHopperTmaWrw (1025, TMA + wgmma on sm_90a, backward weights): planning checks without a
// compiler (applicability, defaults valid on all ResNet-50 layers but the stem, analytic pruning,
// the tensor maps, split-K workspace and reduce launch), NVRTC builds for sm_90a of every valid
// FP16 tile config of a layer and the BF16 default, and, tagged "gpu", every ResNet-50 layer with
// C % 8 == 0 at batch 1 and 2 (default + 2 random configs + a split one where valid, and twice
// the first and last stream-K config), BF16 and edge problems (groups, dilation, strides 2 and 3, asymmetric filters, pixel, K and channel
// tails, C/G not a multiple of 64) checked against the CPU reference on poisoned outputs and
// workspaces.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_hopper_tma_wrw.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

using testing::AllValid;
using testing::NhwcWrw;

// Shapes beyond ResNet-50 that the tensor maps, the column slabs and the unit walk must get right.
std::vector<Problem> TmaWrwEdgeProblems() {
  return {
      NhwcWrw(2, 8, 16, 12, 11, 1, 1, 0, 0, 2, 1, 1),       // C = 8: one partial slab per tap, stride 2
      NhwcWrw(1, 16, 24, 9, 9, 3, 3, 2, 2, 1, 2, 1),        // dilation 2, K = 24 (M tail)
      NhwcWrw(2, 32, 48, 8, 8, 3, 3, 1, 1, 1, 1, 2),        // groups 2 (C/G 16, K/G 24)
      NhwcWrw(1, 24, 72, 12, 12, 5, 5, 2, 2, 3, 1, 1),      // stride 3, 5x5, K = 72
      NhwcWrw(3, 64, 40, 6, 6, 2, 3, 0, 0, 1, 1, 1),        // asymmetric filter, valid padding
      NhwcWrw(2, 48, 64, 17, 17, 1, 7, 0, 3, 1, 1, 1),      // 1x7 (Inception)
      NhwcWrw(2, 48, 64, 17, 17, 7, 1, 3, 0, 1, 1, 1),      // 7x1
      NhwcWrw(5, 72, 200, 7, 7, 3, 3, 1, 1, 1, 1, 1),       // 245 pixels, K = 200, C = 72: tails everywhere
      NhwcWrw(1, 256, 96, 10, 10, 3, 3, 1, 1, 1, 1, 4),     // groups 4
      NhwcWrw(4, 40, 8, 13, 13, 3, 3, 1, 1, 2, 1, 1),       // K = 8 < every tile
      NhwcWrw(8, 64, 64, 30, 30, 3, 3, 1, 1, 1, 1, 1),      // 7200 pixels: long pixel loops, splits
      NhwcWrw(2, 128, 256, 15, 15, 1, 1, 0, 0, 2, 1, 1),    // 1x1 stride 2 (ResNet downsample)
      NhwcWrw(2, 64, 64, 19, 19, 3, 3, 6, 6, 1, 6, 1),      // dilation 6 (DeepLab-style)
      NhwcWrw(2, 96, 64, 9, 9, 3, 3, 1, 1, 1, 1, 2),        // groups 2 with C/G = 48: next group's channels
      NhwcWrw(1, 80, 192, 13, 13, 3, 3, 0, 0, 1, 1, 1),     // C = 80 (Inception)
      NhwcWrw(3, 96, 48, 9, 7, 1, 1, 0, 0, 1, 1, 2),        // 1x1 tiled x: groups 2 (C/G 48, K/G 24), 189 pixels
      NhwcWrw(2, 200, 64, 11, 13, 1, 1, 0, 0, 1, 1, 1),     // 1x1 tiled x: C = 200 (a partial chunk)
  };
}

TEST_CASE("hopper tma wrw: applicability, defaults, pruning and launches", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<Target> sm80 = solver::TargetForArch("sm_80");
  REQUIRE(sm90.ok());
  REQUIRE(sm80.ok());
  solver::HopperTmaWrwSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    const Problem h = testing::With(layers[i], Direction::kBackwardWeights, DataType::kFp16, Layout::kNHWC);
    INFO(h.Canonical());
    if (i == 0) {  // the 3-channel stem is TunaHopperWrw's
      CHECK_FALSE(s.IsApplicable(*sm90, h).ok());
      continue;
    }
    REQUIRE(s.IsApplicable(*sm90, h).ok());
    CHECK(s.IsValid(*sm90, h, s.DefaultConfig(*sm90, h)).ok());
    CHECK(AllValid(s, *sm90, h).size() >= 4);
    CHECK_FALSE(s.IsApplicable(*sm80, h).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(h, Direction::kForward, DataType::kFp16, Layout::kNHWC)).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(h, Direction::kBackwardWeights, DataType::kFp32, Layout::kNHWC)).ok());
  }
  for (const Problem& p : TmaWrwEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
  }
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 16, 16, 9, 9, 3, 3, 1, 1, 1, 1, 16)).ok());  // depthwise
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 16, 12, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());   // K % 8 != 0
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 32, 40, 8, 8, 3, 3, 1, 1, 1, 1, 2)).ok());   // K/G % 8 != 0
  // The default prices each config (copies, tensor cores, epilogue, the split reduce): ResNet-50's
  // late 1x1 layers take unsplit narrow tiles, its 3x3 layers wide tiles with splits (the picks of
  // the model fitted to every config's time, H200, 2026-12-04).
  {
    const std::pair<size_t, std::vector<int64_t>> picks[] = {
        {19, {128, 64, 2, 8, 1, 1, 0}},   // C 512, 7x7, K 2048, 1x1: 0.0132 ms; the best of 400, 64 x 128, 0.0129
        {21, {128, 64, 2, 8, 1, 1, 0}},   // C 2048, 7x7, K 512, 1x1: the best of 400
        {16, {256, 128, 2, 4, 7, 1, 0}},  // C 256, 14x14, K 256, 3x3: the best of 1,147
        {13, {128, 64, 2, 8, 4, 1, 0}},   // C 256, 14x14, K 1024, 1x1: 0.0160 ms; the best of 1,357 0.0163
    };
    for (const auto& [layer, values] : picks) {
      const Problem h = testing::With(layers[layer], Direction::kBackwardWeights, DataType::kFp16, Layout::kNHWC);
      INFO(h.Canonical());
      CHECK(s.DefaultConfig(*sm90, h) == PerfConfig{values});
    }
  }
  // Pruning: accumulators, warpgroup rows, shared memory, ring depth, splits.
  const Problem big = NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1);
  CHECK(s.IsValid(*sm90, big, PerfConfig{{256, 128, 2, 4, 1, 1, 0}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 1, 4, 1, 1, 0}}).ok());  // 256 accumulators
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 128, 2, 6, 1, 1, 0}}).ok());   // 32-row warpgroups
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{256, 256, 2, 3, 1, 1, 0}}).ok());  // 256 accumulators
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 128, 2, 3, 1, 1, 0}}).ok());  // ring far shallower than fits
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{256, 128, 2, 4, 64, 1, 0}}).ok()); // more splits than fill the GPU
  CHECK(s.IsValid(*sm90, big, PerfConfig{{256, 128, 2, 4, 7, 2, 0}}).ok());     // 7 x 18 units fill 126 of 132 SMs, a pair
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{256, 128, 2, 4, 8, 1, 0}}).ok()); // 144 units: the second wave 12 of 132
  CHECK(s.IsValid(*sm90, big, PerfConfig{{256, 128, 2, 4, 3, 1, 0}}).ok());      // 54 units: within one wave
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 128, 1, 8, 1, 2, 0}}).ok()); // a pair needs two dy slabs
  absl::StatusOr<solver::Solution> pair = s.GetSolution(*sm90, big, PerfConfig{{256, 128, 2, 4, 1, 2, 0}});
  REQUIRE(pair.ok());
  CHECK(pair->launches[0].grid.x == 18);  // 9 pairs of N-tiles (2304 columns / 128), two blocks each
  CHECK(std::find(pair->kernels[0].options.begin(), pair->kernels[0].options.end(), "-DCLUSTER_N=2") !=
        pair->kernels[0].options.end());
  // A split config: persistent grid, tensor maps, workspace slices and the in-order reduce.
  const Problem early = NhwcWrw(32, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1);
  absl::StatusOr<solver::Solution> split = s.GetSolution(*sm90, early, PerfConfig{{64, 128, 1, 8, 26, 1, 0}});
  REQUIRE(split.ok());
  REQUIRE(split->launches.size() == 2);
  CHECK(split->launches[0].grid.x == 130);  // 5 N-tiles x 26 splits
  CHECK(split->launches[0].block.x == 256);
  CHECK(split->launches[0].args[0].kind == solver::KernelArg::Kind::kTensorMap);
  CHECK(split->launches[0].args[0].tensor_map.mode == backend::TensorMapSpec::Mode::kIm2col);
  CHECK(split->launches[0].args[0].tensor_map.pixels_per_column == 64);
  CHECK(split->launches[0].args[1].tensor_map.dims[1] == 32u * 56 * 56);
  CHECK(split->launches[1].entry == "tuna_hopper_wrw_reduce");
  CHECK(split->workspace_bytes == 26u * 64 * 576 * 4);
  for (const std::string& o : split->kernels[0].options) CHECK(o.find("SPLIT_K") == std::string::npos);
  CHECK(split->kernels[0].options[0] == "-DTB_M=64");
  CHECK(solver::BuildArch(split->kernels[0], "sm_90") == "sm_90a");
  absl::StatusOr<solver::Solution> one = s.GetSolution(*sm90, big, PerfConfig{{256, 128, 2, 4, 1, 1, 0}});
  REQUIRE(one.ok());
  CHECK(one->launches.size() == 1);
  CHECK(one->workspace_bytes == 0);
  CHECK(solver::HopperTmaWrwSolver::SharedBytes(256, 128, 4) == 1024u + 4u * 384 * 128 + 64);
  // Stream-K: on a late layer whose 32 tiles of 256 x 128 leave most SMs idle, 132 blocks share
  // the 32 x 25 tile x pixel-tile iterations; a flag-clearing launch, then the kernel.
  const Problem late = NhwcWrw(32, 2048, 512, 7, 7, 1, 1, 0, 0, 1, 1, 1);
  absl::StatusOr<solver::Solution> sk = s.GetSolution(*sm90, late, PerfConfig{{256, 128, 2, 4, 1, 1, 1}});
  REQUIRE(sk.ok());
  REQUIRE(sk->launches.size() == 2);
  CHECK(sk->launches[0].entry == "tuna_hopper_wrw_clear");
  CHECK(sk->launches[1].grid.x == 132);
  CHECK(sk->launches[1].args[2].role == solver::BufferRole::kW);  // dw written by the kernel
  CHECK(sk->launches[1].args.back().kind == solver::KernelArg::Kind::kI64);
  CHECK(sk->workspace_bytes == (132u * 256 * 128 + 132) * 4);
  CHECK(sk->launches[0].args[1].i == 132 * 256 * 128);  // the flags follow the partial slots
  CHECK(std::find(sk->kernels[0].options.begin(), sk->kernels[0].options.end(), "-DSTREAM_K=1") !=
        sk->kernels[0].options.end());
  CHECK_FALSE(s.IsValid(*sm90, late, PerfConfig{{256, 128, 2, 4, 2, 1, 1}}).ok());  // with workspace splits
  CHECK_FALSE(s.IsValid(*sm90, late, PerfConfig{{256, 128, 2, 4, 1, 2, 1}}).ok());  // with a cluster
  CHECK(std::none_of(one->kernels[0].options.begin(), one->kernels[0].options.end(),
                     [](const std::string& o) { return o.find("STREAM_K") != std::string::npos; }));
  // 1x1, stride 1, no padding: x read as the (C, P) matrix through a tiled map (X_TILED), in every
  // config; strided or padded 1x1 and larger filters keep im2col.
  auto x_tiled = [&](const Problem& p) {
    int tiled = 0, configs = 0;
    for (const PerfConfig& c : AllValid(s, *sm90, p)) {
      absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, p, c);
      REQUIRE(sol.ok());
      const std::vector<std::string>& o = sol->kernels[0].options;
      const bool option = std::find(o.begin(), o.end(), "-DX_TILED=1") != o.end();
      const solver::Launch& main = sol->launches[sol->launches[0].entry == "tuna_hopper_wrw_clear" ? 1 : 0];
      const backend::TensorMapSpec& m = main.args[0].tensor_map;
      CHECK(option == (m.mode == backend::TensorMapSpec::Mode::kTiled));
      const bool three_d = std::find(o.begin(), o.end(), "-DTMA_3D=1") != o.end();
      if (option && !three_d) {
        CHECK(m.rank == 2);
        CHECK(m.dims[0] == static_cast<uint64_t>(p.c));
      }
      if (option && three_d) {  // (64, P, C / 64), a stage's TB_N / 64 slabs in one copy
        CHECK(m.rank == 3);
        CHECK(m.dims[0] == 64);
        CHECK(m.dims[2] == static_cast<uint64_t>(p.c / 64));
        CHECK(m.strides_bytes[1] == 128);
        CHECK(m.box[2] == static_cast<uint32_t>(s.Space(*sm90, p).Value(c, "TB_N") / 64));
      }
      if (option) {
        CHECK(m.dims[1] == static_cast<uint64_t>(p.n * p.in[1] * p.in[2]));
        CHECK(m.box[0] == 64);
        CHECK(m.box[1] == 64);
      }
      tiled += option ? 1 : 0, ++configs;
    }
    return configs > 0 && tiled == configs ? 1 : tiled == 0 ? 0 : -1;
  };
  CHECK(x_tiled(late) == 1);
  CHECK(x_tiled(NhwcWrw(3, 96, 48, 9, 7, 1, 1, 0, 0, 1, 1, 2)) == 1);
  CHECK(x_tiled(NhwcWrw(2, 128, 256, 15, 15, 1, 1, 0, 0, 2, 1, 1)) == 0);  // stride 2
  CHECK(x_tiled(NhwcWrw(2, 128, 256, 15, 15, 1, 1, 1, 1, 1, 1, 1)) == 0);  // padded
  CHECK(x_tiled(NhwcWrw(2, 128, 256, 15, 15, 3, 3, 1, 1, 1, 1, 1)) == 0);  // 3x3
}

TEST_CASE("hopper tma wrw: every valid FP16 tile config and the BF16 default build for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  solver::HopperTmaWrwSolver s;
  testing::Sm90aBuilds builds(*be, s, *target);
  const Problem wide = NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1);
  for (const PerfConfig& c : AllValid(s, *target, wide)) builds.Build(wide, c);
  const Problem bf = NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1, DataType::kBf16);
  builds.Build(bf, s.DefaultConfig(*target, bf));
  // Stream-K on a late 1x1 layer: every valid config.
  const Problem late = NhwcWrw(32, 2048, 512, 7, 7, 1, 1, 0, 0, 1, 1, 1);
  const int sk = s.Space(*target, late).IndexOf("STREAM_K");
  int streamed = 0;
  for (const PerfConfig& c : AllValid(s, *target, late)) {
    if (c.values[sk] == 1) builds.Build(late, c), ++streamed;
  }
  CHECK(streamed >= 6);
  std::printf("%zu distinct sm_90a builds\n", builds.distinct());
  CHECK(builds.distinct() >= 8);
}

TEST_CASE("hopper tma wrw matches the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  solver::HopperTmaWrwSolver s;
  const std::vector<Problem> layers = testing::ResNet50Layers();  // 1..22: the stem is not applicable
  REQUIRE(layers.size() == 23);
  const std::vector<Problem> problems = testing::HopperDeviceProblems(
      Direction::kBackwardWeights, layers, TmaWrwEdgeProblems(), [](size_t i) { return i % 2 == 0 ? 1 : 2; });
  std::mt19937_64 rng(1025);
  testing::ConvChecker checker(*be, device, target);
  testing::DeviceTally tally;
  testing::CheckOnDevice(checker, s, target, problems, rng, 4, tally);  // axis 4: SPLIT_K
  // Stream-K: per problem the first and last valid config with STREAM_K 1 (tiles cut between
  // blocks, owners adding the later blocks' partials), and each run twice (the flags re-zeroed).
  const int sk = s.Space(target, problems[0]).IndexOf("STREAM_K");
  int streamed = 0;
  for (const Problem& p : problems) {
    INFO(p.Canonical() << " STREAM_K");
    const std::vector<PerfConfig> picked = testing::FirstAndLastWith(s, target, p, sk, 1, 2);
    for (int round = 0; round < 2; ++round) {
      tally.failures += checker.CheckAll(s, p, picked);
      tally.runs += static_cast<int>(picked.size());
      streamed += static_cast<int>(picked.size());
    }
  }
  // Clusters of two sharing dy by multicast: the first and last valid CLUSTER_N 2 config per problem.
  const int cl = s.Space(target, problems[0]).IndexOf("CLUSTER_N");
  int clustered = 0;
  for (const Problem& p : problems) {
    INFO(p.Canonical() << " CLUSTER_N");
    const std::vector<PerfConfig> picked = testing::FirstAndLastWith(s, target, p, cl, 2, 2);
    tally.failures += checker.CheckAll(s, p, picked);
    tally.runs += static_cast<int>(picked.size());
    clustered += static_cast<int>(picked.size());
  }
  std::printf("%d runs (%d with STREAM_K, %d with CLUSTER_N 2), %d failures\n", tally.runs, streamed, clustered,
              tally.failures);
  CHECK(streamed >= 16);
  CHECK(clustered >= 16);
  CHECK(tally.runs >= 80);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
