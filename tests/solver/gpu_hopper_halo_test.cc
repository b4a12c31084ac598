// TunaHopperHaloFwd (1029): thin-input forward on wgmma fed by tiled TMA copies of each tile's
// input rows (one per filter column), sm_90a. Planning checks without a compiler (applicability,
// defaults, pruning, shared memory, the tensor maps and launch), NVRTC builds for sm_90a of every
// valid config of Inception-v3's C = 32 layer and the defaults of edge problems, and, tagged
// "gpu", edge problems (C = 8..576 in 16-, 32- and 64-channel blocks, K tails up to 256, 1x1 /
// 3x3 / 5x5 / 7x1 / 1x7 filters, asymmetric and valid padding, padding above the filter extent,
// odd extents that leave partial tiles, several tiles per block, BF16) against the CPU reference
// on poisoned outputs, every valid config of each.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_hopper_halo.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;
using testing::AllValid;
using testing::NhwcForward;

// Inception-v3's C = 32 layers at batch 32 (2F: valid padding, 3F: padded, K = 64).
Problem Inception2F() { return NhwcForward(32, 32, 32, 149, 149, 3, 3, 0, 0, 1, 1, 1); }
Problem Inception3F() { return NhwcForward(32, 32, 64, 147, 147, 3, 3, 1, 1, 1, 1, 1); }

// Shapes the copies, the tile walk and the epilogue must get right (small batches).
std::vector<Problem> HaloEdgeProblems() {
  return {
      NhwcForward(2, 32, 32, 21, 23, 3, 3, 0, 0, 1, 1, 1),     // Inception-v3 2F, valid padding, odd extents
      NhwcForward(2, 32, 64, 19, 17, 3, 3, 1, 1, 1, 1, 1),     // 3F, padded
      NhwcForward(2, 48, 64, 15, 15, 3, 3, 1, 1, 1, 1, 1),     // C = 48: three 16-channel blocks
      NhwcForward(2, 16, 32, 15, 15, 5, 5, 2, 2, 1, 1, 1),     // 5x5, C = 16
      NhwcForward(1, 64, 96, 13, 11, 3, 3, 1, 1, 1, 1, 1),     // C = 64, K = 96 (TB_N 96, 32-column epilogue)
      NhwcForward(2, 16, 24, 9, 30, 1, 7, 0, 3, 1, 1, 1),      // 1x7, C = 16, K = 24 (a K tail)
      NhwcForward(1, 24, 40, 30, 9, 7, 1, 3, 0, 1, 1, 1),      // 7x1, C = 24, K = 40
      NhwcForward(3, 8, 200, 7, 9, 3, 3, 1, 1, 1, 1, 1),       // C = 8, K = 200 (TB_N 224), tiny image
      NhwcForward(1, 64, 256, 12, 12, 1, 1, 0, 0, 1, 1, 1),    // 1x1, K = 256
      NhwcForward(2, 32, 32, 8, 8, 3, 3, 4, 4, 1, 1, 1),       // padding above the filter extent
      NhwcForward(1, 40, 64, 33, 70, 3, 3, 1, 1, 1, 1, 1),     // wide rows; C = 40: zeros past 40 in the last block
      NhwcForward(2, 48, 64, 17, 19, 5, 5, 2, 2, 1, 1, 1),     // Inception-v3's C = 48 5x5 layer, small
      NhwcForward(1, 80, 96, 11, 13, 3, 3, 1, 1, 1, 1, 1),     // C = 80: five 16-channel blocks
      NhwcForward(2, 96, 32, 9, 10, 3, 3, 0, 1, 1, 1, 1),      // C = 96: three 32-channel blocks
      NhwcForward(1, 576, 96, 7, 9, 1, 1, 0, 0, 1, 1, 1),      // 1x1, C = 576: nine 64-channel blocks
      // Two or more tiles per block for every config (288 tiles of 256 pixels), nine copy blocks
      // per tile: the ring wraps inside a tile and ping-pong consumers alternate tiles on it.
      NhwcForward(72, 48, 32, 32, 32, 3, 3, 1, 1, 1, 1, 1),
      NhwcForward(2, 32, 64, 19, 17, 3, 3, 1, 1, 1, 1, 1, DataType::kBf16),
  };
}

TEST_CASE("hopper halo fwd: applicability, defaults, pruning and the launch", "[solver]") {
  const Target sm90 = testing::ArchTarget("sm_90");
  solver::HopperHaloFwdSolver s;
  for (const Problem& p : HaloEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(sm90, p).ok());
    CHECK(s.IsValid(sm90, p, s.DefaultConfig(sm90, p)).ok());
    const std::vector<PerfConfig> valid = AllValid(s, sm90, p);
    CHECK(!valid.empty());
    CHECK(valid.size() <= 32);
  }
  for (const Problem& p : {Inception2F(), Inception3F()}) {
    REQUIRE(s.IsApplicable(sm90, p).ok());
    std::printf("%s: %zu valid configs\n", p.Canonical().c_str(), AllValid(s, sm90, p).size());
    CHECK(AllValid(s, sm90, p).size() >= 10);
  }
  // Not applicable: strides, dilation, groups, a filter above shared memory, C not a multiple of 8,
  // K above 256, FP32, NCHW, other targets.
  const Problem base = Inception3F();
  for (const Problem& p : {NhwcForward(2, 32, 64, 19, 17, 3, 3, 1, 1, 2, 1, 1), NhwcForward(2, 32, 64, 19, 17, 3, 3, 2, 2, 1, 2, 1),
                           NhwcForward(2, 64, 64, 19, 17, 3, 3, 1, 1, 1, 1, 2), NhwcForward(2, 256, 256, 19, 17, 3, 3, 1, 1, 1, 1, 1),
                           NhwcForward(2, 20, 64, 19, 17, 3, 3, 1, 1, 1, 1, 1), NhwcForward(2, 32, 288, 19, 17, 3, 3, 1, 1, 1, 1, 1),
                           testing::With(base, Direction::kForward, DataType::kFp32, Layout::kNHWC),
                           testing::With(base, Direction::kForward, DataType::kFp16, Layout::kNCHW)}) {
    INFO(p.Canonical());
    CHECK_FALSE(s.IsApplicable(sm90, p).ok());
  }
  // Inception-v3's C = 48 5x5 layer: its filter in three 16-channel blocks (150 KiB; 200 KiB in
  // one 64-channel block would not leave room for the ring).
  const Problem c48 = NhwcForward(32, 48, 64, 35, 35, 5, 5, 2, 2, 1, 1, 1);
  CHECK(s.IsApplicable(sm90, c48).ok());
  CHECK(solver::hopper_halo::TbK(c48) == 16);
  CHECK(solver::hopper_halo::KBlocks(c48) == 3);
  CHECK(solver::hopper_halo::TbK(NhwcForward(1, 96, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1)) == 32);
  CHECK(solver::hopper_halo::TbK(NhwcForward(1, 24, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1)) == 32);
  CHECK(solver::hopper_halo::TbK(NhwcForward(1, 128, 64, 9, 9, 1, 1, 0, 0, 1, 1, 1)) == 64);
  absl::StatusOr<Target> sm80 = solver::TargetForArch("sm_80");
  REQUIRE(sm80.ok());
  CHECK_FALSE(s.IsApplicable(*sm80, base).ok());
  // Pruning: ping-pong needs WG_M 1, accumulators, tile rows far wider than Wo.
  const solver::SearchSpace space = s.Space(sm90, base);
  auto config = [&](int tb_m, int tile_w, int wg_m, int pp) {
    return solver::hopper_halo::HaloParams{tb_m, tile_w, wg_m, pp}.Config(space);
  };
  CHECK(s.IsValid(sm90, base, config(128, 16, 1, 1)).ok());
  CHECK_FALSE(s.IsValid(sm90, base, config(128, 16, 2, 1)).ok());
  const Problem k256 = NhwcForward(1, 64, 256, 12, 12, 1, 1, 0, 0, 1, 1, 1);
  CHECK_FALSE(s.IsValid(sm90, k256, config(256, 8, 1, 0)).ok());  // 256 x 256 accumulators in one warpgroup
  CHECK(s.IsValid(sm90, k256, config(128, 8, 2, 0)).ok());
  const Problem narrow = NhwcForward(2, 32, 32, 9, 7, 3, 3, 1, 1, 1, 1, 1);  // Wo = 7
  CHECK_FALSE(s.IsValid(sm90, narrow, config(128, 16, 2, 0)).ok());
  CHECK(s.IsValid(sm90, narrow, config(128, 8, 2, 0)).ok());
  // Defaults: 256 x 8 ping-pong on large images (thousands of tiles), else 128 x 8 with two consumers.
  CHECK(s.DefaultConfig(sm90, base) == config(256, 8, 1, 1));
  const Problem c64 = NhwcForward(32, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1);  // ResNet-50's 3x3 layer
  CHECK(s.DefaultConfig(sm90, c64) == config(128, 8, 2, 0));
  CHECK(s.DefaultConfig(sm90, c48) == config(128, 8, 2, 0));
  // The launch of a ping-pong config on 3F: a ring of 8 copy blocks of 16 x 10 pixels, the
  // filter's 9 taps x 64 rows.
  absl::StatusOr<solver::Solution> sol = s.GetSolution(sm90, base, config(128, 16, 1, 1));
  REQUIRE(sol.ok());
  const std::vector<std::string>& opts = sol->kernels[0].options;
  for (const char* o : {"-DTB_M=128", "-DTILE_W=16", "-DWG_M=1", "-DPINGPONG=1", "-DTB_N=64", "-DTB_K=32", "-DVEC_OUT=1"}) {
    CHECK(std::find(opts.begin(), opts.end(), o) != opts.end());
  }
  const solver::Launch& l = sol->launches[0];
  CHECK(l.block.x == 384);
  CHECK(l.grid.x == sm90.num_cu);
  CHECK(l.shared_bytes == 1024u + 9 * 64 * 64 + 8 * 16 * 10 * 64 + 2 * 4 * 16 * 72 * 2 + 8 + 16 * 8);
  const backend::TensorMapSpec& xm = l.args[0].tensor_map;
  CHECK(xm.mode == backend::TensorMapSpec::Mode::kTiled);
  CHECK(xm.box == std::array<uint32_t, 5>{32, 16, 10, 1, 0});
  CHECK(xm.swizzle == backend::TensorMapSpec::Swizzle::k64B);
  const backend::TensorMapSpec& wm = l.args[1].tensor_map;
  CHECK(wm.box == std::array<uint32_t, 5>{32, 64, 9, 0, 0});
  CHECK(wm.strides_bytes[0] == 9 * 32 * 2);  // K's stride: one output channel's filter
  CHECK(wm.strides_bytes[1] == 32 * 2);      // a tap's
  REQUIRE(l.args.size() == 3 + 12);
  CHECK(l.args[11].i == 147 / 8 + 1);  // tiles_h: 147 rows in tiles of 8
  CHECK(l.args[12].i == 147 / 16 + 1);
  CHECK(l.args[13].i == 1);  // one channel block
  CHECK(l.args[14].i == 8);  // ring depth
  // C = 48 5x5 in 256-pixel tiles: the 150 KiB filter leaves room for 6 blocks of 8 x 36 pixels.
  CHECK(solver::hopper_halo::Stages(c48, {256, 8, 2, 0}, sm90.max_shared_bytes_per_block) == 6);
}

TEST_CASE("hopper halo fwd: every valid config of Inception-v3's 3F and edge defaults build for sm_90a",
          "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  const Target sm90 = testing::ArchTarget("sm_90");
  solver::HopperHaloFwdSolver s;
  testing::Sm90aBuilds builds(*be, s, sm90);
  for (const PerfConfig& c : AllValid(s, sm90, Inception3F())) builds.Build(Inception3F(), c);
  for (const Problem& p : HaloEdgeProblems()) builds.Build(p, s.DefaultConfig(sm90, p));
  std::printf("%zu distinct sm_90a builds\n", builds.distinct());
  CHECK(builds.distinct() >= 12);
}

TEST_CASE("hopper halo fwd matches the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  solver::HopperHaloFwdSolver s;
  testing::ConvChecker checker(*cuda->backend, *cuda->device, cuda->target);
  testing::DeviceTally tally;
  for (const Problem& p : HaloEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(cuda->target, p).ok());
    const std::vector<PerfConfig> valid = AllValid(s, cuda->target, p);
    tally.failures += checker.CheckAll(s, p, valid);
    tally.runs += static_cast<int>(valid.size());
  }
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 60);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
