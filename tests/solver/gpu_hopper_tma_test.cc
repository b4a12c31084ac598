// TunaHopperTmaFwd (1013) and TunaHopperTmaBwd (1014, backward data through the same kernel):
// TMA + wgmma on sm_90a, persistent and warp-specialised. Planning
// checks without a compiler (applicability, defaults valid on ResNet-50's layers, analytic
// pruning, the tensor maps it asks for), NVRTC builds for sm_90a of every valid FP16 config of a
// layer and the BF16 default, and, tagged "gpu", every ResNet-50 layer with C % 8 == 0 at batch 1
// and batch 8 (default + 2 random configs), BF16 and edge problems (1x7 / 7x1 filters with
// asymmetric padding, dilation, strides 2 and 3, groups, valid padding, padding above the filter
// extent, M and K/G tails, C/G not a multiple of 64, Inception-v3's C = 32 layers) checked against the CPU reference on
// poisoned outputs; the same for backward data on every layer (strided ones through sub-pixel phases) and edge
// shape, with a ping-pong, two split-K configs and two configs of each N tile between powers of two
// (96, 160, 192, 224) per problem where valid; and, tagged "gpu" and "thin", every config with a
// 32-channel k-tile or a 32-wide N tile on the edge problems where those apply.
#include <algorithm>
#include <cstdio>
#include <random>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

using testing::AllValid;
using testing::NhwcForward;

// Problems with 64 or more k-tiles and few output tiles, where split-K over a cluster is valid:
// an odd k-tile count (C = 520: a tap's partial chunk inside a share), K and M tails, 5x5 and 7x1
// filters, groups with dilation and stride, a deep 1x1, BF16, and strided backward data (four
// phases of 1 to 4 taps).
std::vector<Problem> SplitKProblems() {
  return {
      NhwcForward(8, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1),       // ResNet-50's 7x7 3x3 layer, batch 8
      NhwcForward(3, 520, 200, 9, 11, 3, 3, 1, 1, 1, 1, 1),      // 81 k-tiles, K = 200, odd extents
      NhwcForward(4, 192, 96, 17, 17, 5, 5, 2, 2, 1, 1, 1),      // 5x5, 75 k-tiles
      NhwcForward(2, 640, 128, 12, 12, 7, 1, 3, 0, 1, 1, 1),     // 7x1, 70 k-tiles
      NhwcForward(2, 1024, 256, 13, 13, 3, 3, 2, 2, 2, 2, 2),    // groups 2 (C/G 512), stride 2, dilation 2
      NhwcForward(1, 4096, 128, 7, 7, 1, 1, 0, 0, 1, 1, 1),      // 1x1, 64 k-tiles
      NhwcForward(4, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1, DataType::kBf16),
      testing::With(NhwcForward(2, 256, 1024, 14, 14, 3, 3, 1, 1, 2, 1, 1), Direction::kBackwardData, DataType::kFp16,
                    Layout::kNHWC),
  };
}

// Shapes beyond ResNet-50 that the tensor maps and the tile walk must get right.
std::vector<Problem> TmaEdgeProblems() {
  return {
      NhwcForward(4, 64, 96, 17, 23, 1, 7, 0, 3, 1, 1, 1),     // 1x7, asymmetric padding, K tail for 64-wide tiles
      NhwcForward(4, 128, 64, 23, 17, 7, 1, 3, 0, 1, 1, 1),    // 7x1
      NhwcForward(3, 64, 128, 30, 30, 3, 3, 2, 2, 1, 2, 1),    // dilation 2
      NhwcForward(5, 128, 200, 15, 15, 3, 3, 1, 1, 2, 1, 1),   // stride 2, K = 200
      NhwcForward(2, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 2),   // groups 2 (C/G 128)
      NhwcForward(3, 64, 64, 9, 11, 3, 3, 0, 0, 1, 1, 1),      // valid padding
      NhwcForward(2, 64, 64, 20, 21, 5, 3, 2, 0, 3, 1, 1),     // stride 3, 5x3
      NhwcForward(1, 128, 24, 7, 7, 3, 3, 1, 1, 1, 1, 1),      // K = 24, M = 49: tails in both
      NhwcForward(2, 512, 96, 10, 10, 3, 3, 1, 1, 1, 1, 4),    // groups 4, K/G = 24
      NhwcForward(2, 64, 64, 8, 8, 3, 3, 4, 4, 1, 1, 1),       // padding above the filter extent
      NhwcForward(2, 96, 64, 17, 17, 3, 3, 1, 1, 1, 1, 1),     // C = 96: a half-empty last channel chunk
      NhwcForward(3, 32, 48, 15, 15, 3, 3, 0, 0, 2, 1, 1),     // C = 32 (one half chunk), stride 2, valid
      NhwcForward(2, 80, 192, 13, 13, 3, 3, 0, 0, 1, 1, 1),    // C = 80 (Inception)
      NhwcForward(2, 96, 64, 9, 9, 3, 3, 1, 1, 1, 1, 2),       // groups 2 with C/G = 48: the next group's channels
      NhwcForward(2, 48, 64, 12, 12, 1, 7, 0, 3, 1, 1, 1),     // C = 48, 1x7
      NhwcForward(2, 32, 32, 17, 17, 3, 3, 0, 0, 1, 1, 1),     // Inception-v3 2F (C = K = 32, valid): TB_K 32, TB_N 32
      NhwcForward(2, 32, 64, 15, 15, 3, 3, 0, 0, 1, 1, 1),     // C = 32, K = 64, valid: TB_K 32
      NhwcForward(1, 32, 64, 13, 13, 3, 3, 1, 1, 1, 1, 1),     // Inception-v3 3F (C = 32, K = 64, padded)
      NhwcForward(2, 64, 160, 11, 11, 3, 3, 1, 1, 1, 1, 1),    // K = 160: 160- and 96-wide N tiles
      NhwcForward(3, 128, 384, 9, 9, 1, 1, 0, 0, 1, 1, 1),     // K = 384: two 192-wide N tiles
  };
}

// The edge problems where the thin tiles apply (TB_K 32: C/G % 64 in 1..32; TB_N 32: K/G <= 32).
std::vector<Problem> ThinTileProblems() {
  return {
      NhwcForward(2, 32, 32, 17, 17, 3, 3, 0, 0, 1, 1, 1),    // both
      NhwcForward(2, 32, 64, 15, 15, 3, 3, 0, 0, 1, 1, 1),    // TB_K 32
      NhwcForward(1, 128, 24, 7, 7, 3, 3, 1, 1, 1, 1, 1),     // TB_N 32 with a K tail (24 of 32)
      NhwcForward(2, 512, 96, 10, 10, 3, 3, 1, 1, 1, 1, 4),   // TB_N 32, groups 4 (K/G = 24)
      NhwcForward(2, 96, 64, 17, 17, 3, 3, 1, 1, 1, 1, 1),    // TB_K 32: C = 96 in three full chunks
      NhwcForward(2, 80, 192, 13, 13, 3, 3, 0, 0, 1, 1, 1),   // TB_K 32: C = 80, a half-empty third chunk
      NhwcForward(3, 32, 48, 15, 15, 3, 3, 0, 0, 2, 1, 1),    // TB_K 32, stride 2
  };
}

// The configs of `p` that use a thin tile (TB_K 32 or TB_N 32).
std::vector<PerfConfig> ThinConfigs(const solver::Solver& s, const Target& t, const Problem& p) {
  const solver::SearchSpace space = s.Space(t, p);
  std::vector<PerfConfig> out;
  for (const PerfConfig& c : AllValid(s, t, p)) {
    if (space.Value(c, "TB_K") == 32 || space.Value(c, "TB_N") == 32) out.push_back(c);
  }
  return out;
}

// Strided backward-data shapes: sub-pixel phases with 1..16 taps, phases no tap reaches (1x1
// stride 2), odd extents, even filters, groups.
std::vector<Problem> StridedBwdProblems() {
  std::vector<Problem> out;
  for (const Problem& p : {
           NhwcForward(2, 64, 64, 15, 15, 3, 3, 1, 1, 2, 1, 1),     // odd extent
           NhwcForward(2, 96, 128, 14, 13, 1, 1, 0, 0, 2, 1, 1),    // 1x1: three phases are zeros
           NhwcForward(2, 32, 64, 16, 16, 5, 5, 2, 2, 2, 1, 1),     // 5x5
           NhwcForward(1, 64, 128, 11, 11, 7, 7, 3, 3, 2, 1, 1),    // 7x7, C = 64 outputs
           NhwcForward(2, 64, 64, 12, 12, 4, 4, 1, 1, 2, 1, 1),     // even filter
           NhwcForward(2, 128, 128, 9, 9, 3, 3, 0, 0, 2, 1, 2),     // groups 2, valid padding
       }) {
    out.push_back(testing::With(p, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC));
  }
  return out;
}

TEST_CASE("hopper tma fwd: applicability, defaults, pruning and tensor maps", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<Target> sm80 = solver::TargetForArch("sm_80");
  REQUIRE(sm90.ok());
  REQUIRE(sm80.ok());
  solver::HopperTmaFwdSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    const Problem h = testing::With(layers[i], Direction::kForward, DataType::kFp16, Layout::kNHWC);
    INFO(h.Canonical());
    if (i == 0) {  // the 3-channel stem is TunaHopperFwd's
      CHECK_FALSE(s.IsApplicable(*sm90, h).ok());
      continue;
    }
    REQUIRE(s.IsApplicable(*sm90, h).ok());
    REQUIRE(s.IsApplicable(*sm90, testing::With(layers[i], Direction::kForward, DataType::kBf16, Layout::kNHWC)).ok());
    CHECK(s.IsValid(*sm90, h, s.DefaultConfig(*sm90, h)).ok());
    const std::vector<PerfConfig> valid = AllValid(s, *sm90, h);
    CHECK(valid.size() >= 4);
    CHECK(valid.size() <= 96);
    CHECK_FALSE(s.IsApplicable(*sm80, h).ok());
    CHECK_FALSE(s.IsApplicable(*sm90, testing::With(layers[i], Direction::kForward, DataType::kFp32, Layout::kNHWC)).ok());
    // NCHW: only the 1x1 stride-1 layers of 56x56 and 28x28 (per-image GEMMs; 14x14 has 196 pixels).
    const Problem nchw = testing::With(layers[i], Direction::kForward, DataType::kFp16, Layout::kNCHW);
    CHECK(s.IsApplicable(*sm90, nchw).ok() ==
          (solver::hopper_tma::NchwGemm(nchw) && nchw.in[1] * nchw.in[2] % 8 == 0));
  }
  for (const Problem& p : TmaEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
  }
  CHECK(s.IsApplicable(*sm90, NhwcForward(2, 32, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());           // a partial chunk
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcForward(2, 12, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1)).ok());     // C/G % 8 != 0
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcForward(2, 128, 64, 9, 9, 3, 3, 1, 1, 1, 1, 128)).ok());  // depthwise
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcForward(2, 64, 64, 90, 90, 3, 3, 1, 1, 9, 1, 1)).ok());   // stride 9
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcForward(1, 64, 64, 300, 300, 3, 3, 130, 130, 1, 1, 1)).ok());  // pad 130
  // Analytic pruning: accumulators, warpgroup rows, shared memory, shallow rings.
  const Problem big = NhwcForward(32, 256, 1024, 28, 28, 3, 3, 1, 1, 1, 1, 1);
  CHECK(s.IsValid(*sm90, big, PerfConfig{{128, 256, 2, 4, 0, 64, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 1, 4, 0, 64, 0, 1}}).ok());  // 256 accumulators
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 128, 2, 4, 0, 64, 0, 1}}).ok());   // 32-row warpgroups
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 2, 5, 0, 64, 0, 1}}).ok());  // 241 KiB > 227 KiB
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{64, 64, 1, 3, 0, 64, 0, 1}}).ok());    // 8 stages fit
  // Ping-pong: two consumers on alternate whole tiles (WG_M 1 only; each holds TB_M x TB_N).
  CHECK(s.IsValid(*sm90, big, PerfConfig{{128, 128, 1, 5, 1, 64, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 128, 2, 6, 1, 64, 0, 1}}).ok());  // WG_M 2
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 256, 1, 4, 1, 64, 0, 1}}).ok());  // 256 accumulators
  CHECK(solver::hopper_tma::SharedBytes({128, 256, 2, 4}) == 1024u + 4 * 384 * 128 + 8 * 16 * 72 * 2 + 64);
  {
    absl::StatusOr<solver::Solution> pp = s.GetSolution(*sm90, big, PerfConfig{{128, 128, 1, 5, 1, 64, 0, 1}});
    REQUIRE(pp.ok());
    CHECK(pp->launches[0].block.x == 384);  // producer + two consumers
    CHECK(std::find(pp->kernels[0].options.begin(), pp->kernels[0].options.end(), "-DPINGPONG=1") !=
          pp->kernels[0].options.end());
  }
  // Split-K over a cluster of two blocks: only with fewer than two waves of tiles and 64 or more
  // k-tiles (ResNet-50's 7x7 3x3 layer: 13 x 4 tiles of 128 x 128, 72 k-tiles), never with
  // PINGPONG; the launch groups the blocks in pairs and the receive slot takes TB_M x TB_N / 2
  // floats.
  const Problem late = NhwcForward(32, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1);
  CHECK(s.IsValid(*sm90, late, PerfConfig{{128, 128, 2, 5, 0, 64, 0, 2}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, big, PerfConfig{{128, 128, 2, 5, 0, 64, 0, 2}}).ok());  // 392 tiles
  CHECK_FALSE(s.IsValid(*sm90, late, PerfConfig{{128, 128, 1, 5, 1, 64, 0, 2}}).ok());  // PINGPONG
  CHECK_FALSE(s.IsValid(*sm90, NhwcForward(32, 2048, 512, 7, 7, 1, 1, 0, 0, 1, 1, 1),
                        PerfConfig{{128, 128, 2, 5, 0, 64, 0, 2}}).ok());  // 32 k-tiles
  // A tap's partial last chunk (C/G % TB_K != 0) issues only the k16 steps that hold channels.
  {
    auto options = [&](const Problem& p) {
      absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, p, s.DefaultConfig(*sm90, p));
      REQUIRE(sol.ok());
      return sol->kernels[0].options;
    };
    const std::vector<std::string> c80 = options(NhwcForward(2, 80, 192, 13, 13, 3, 3, 0, 0, 1, 1, 1));
    CHECK(std::find(c80.begin(), c80.end(), "-DPARTIAL_K=1") != c80.end());
    const std::vector<std::string> c128 = options(NhwcForward(2, 128, 192, 13, 13, 3, 3, 0, 0, 1, 1, 1));
    CHECK(std::find(c128.begin(), c128.end(), "-DPARTIAL_K=1") == c128.end());
  }
  // Every problem of the device check's split-K list has split configs.
  for (const Problem& p : SplitKProblems()) {
    INFO(p.Canonical());
    const solver::HopperTmaBwdSolver bwd_solver;
    const solver::Solver& sv = p.direction == Direction::kForward ? static_cast<const solver::Solver&>(s) : bwd_solver;
    const int axis = sv.Space(*sm90, p).IndexOf("SPLIT_K");
    const std::vector<PerfConfig> valid = AllValid(sv, *sm90, p);
    CHECK(std::count_if(valid.begin(), valid.end(), [&](const PerfConfig& c) { return c.values[axis] == 2; }) >= 2);
  }
  CHECK(solver::hopper_tma::SharedBytes({128, 128, 2, 5, 0, 64, 0, 2}) ==
        1024u + 5 * 256 * 128 + 8 * 16 * 72 * 2 + 128 * 64 * 4 + 16 + 80);
  {
    absl::StatusOr<solver::Solution> sk = s.GetSolution(*sm90, late, PerfConfig{{128, 128, 2, 5, 0, 64, 0, 2}});
    REQUIRE(sk.ok());
    const std::vector<std::string>& opts = sk->kernels[0].options;
    CHECK(std::find(opts.begin(), opts.end(), "-DSPLIT_K=2") != opts.end());
    CHECK(sk->launches[0].grid.x == 2 * 52);  // 52 tiles, each on a cluster of two blocks
    absl::StatusOr<solver::Solution> unsplit = s.GetSolution(*sm90, late, PerfConfig{{128, 128, 2, 5, 0, 64, 0, 1}});
    REQUIRE(unsplit.ok());
    const std::vector<std::string>& o1 = unsplit->kernels[0].options;
    CHECK(std::none_of(o1.begin(), o1.end(), [](const std::string& o) { return o.rfind("-DSPLIT_K", 0) == 0; }));
  }
  // The launch: persistent grid, one producer warpgroup, the two tensor maps of the problem.
  absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, big, PerfConfig{{128, 256, 2, 4, 0, 64, 0, 1}});
  REQUIRE(sol.ok());
  CHECK(sol->kernels[0].options[0] == "-DTB_M=128");
  CHECK(sol->kernels[0].options[3] == "-DSTAGES=4");
  CHECK(solver::BuildArch(sol->kernels[0], "sm_90") == "sm_90a");
  const solver::Launch& l = sol->launches[0];
  CHECK(l.grid.x == static_cast<uint32_t>(sm90->num_cu));
  CHECK(l.block.x == 384);
  REQUIRE(l.args.size() == 13);  // x's im2col map, w's map, the one-phase table, y, 9 sizes
  CHECK(l.args[2].kind == solver::KernelArg::Kind::kWords);
  CHECK(l.args[2].words.size() == 29);  // 20 geometry fields + 8 division magic numbers, the count
  CHECK(l.args[2].words.back() == 1);  // one phase
  // The decode's magic numbers: by the pixels of a 28x28 output image, by its width.
  const std::vector<int32_t>& pw = l.args[2].words;
  CHECK(static_cast<uint32_t>(pw[20]) == solver::gpu::MakeFastDiv(big.Out()[1] * big.Out()[2]).mul);
  CHECK(static_cast<uint32_t>(pw[22]) == solver::gpu::MakeFastDiv(big.Out()[2]).mul);
  CHECK(l.args[5].i == 256);    // C/G
  CHECK(l.args[12].i == 1024);  // K/G: the kernel divides nothing
  REQUIRE(l.args[0].kind == solver::KernelArg::Kind::kTensorMap);
  const backend::TensorMapSpec& xm = l.args[0].tensor_map;
  CHECK(xm.mode == backend::TensorMapSpec::Mode::kIm2col);
  CHECK(xm.rank == 4);
  CHECK(xm.dims[0] == 256);
  CHECK(xm.pixels_per_column == 128);
  CHECK(xm.lower_corner[0] == -1);
  CHECK(xm.upper_corner[0] == -1);
  const backend::TensorMapSpec& wm = l.args[1].tensor_map;
  CHECK(wm.mode == backend::TensorMapSpec::Mode::kTiled);
  CHECK(wm.rank == 3);  // (C/G, R*S, K): a chunk never reads past its tap's channels
  CHECK(wm.dims[0] == 256);
  CHECK(wm.dims[1] == 9);
  CHECK(wm.box[0] == 64);
  CHECK(wm.box[1] == 1);
  CHECK(wm.box[2] == 256);
  // Asymmetric: the corners follow each dimension (W first).
  absl::StatusOr<solver::Solution> asym = s.GetSolution(*sm90, TmaEdgeProblems()[0], s.DefaultConfig(*sm90, TmaEdgeProblems()[0]));
  REQUIRE(asym.ok());
  CHECK(asym->launches[0].args[0].tensor_map.lower_corner[0] == -3);
  CHECK(asym->launches[0].args[0].tensor_map.lower_corner[1] == 0);
  CHECK(asym->launches[0].args[0].tensor_map.upper_corner[0] == -3);
}

TEST_CASE("hopper tma fwd: 32-channel k-tiles and 32-wide N tiles only where they pay", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::HopperTmaFwdSolver s;
  const solver::SearchSpace space = s.Space(*sm90, Problem{});
  // Inception-v3's 2F and 3F at batch 32 (C = 32; K = 32 and 64).
  const Problem thin = NhwcForward(32, 32, 32, 149, 149, 3, 3, 0, 0, 1, 1, 1);
  const Problem thin64 = NhwcForward(32, 32, 64, 147, 147, 3, 3, 1, 1, 1, 1, 1);
  for (const Problem& p : {thin, thin64}) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    const PerfConfig def = s.DefaultConfig(*sm90, p);
    CHECK(s.IsValid(*sm90, p, def).ok());
    CHECK(space.Value(def, "TB_K") == 32);
    CHECK(space.Value(def, "TB_N") == (p.k == 32 ? 32 : 64));
    const std::vector<PerfConfig> valid = AllValid(s, *sm90, p);
    const size_t thin_tiles = ThinConfigs(s, *sm90, p).size();
    std::printf("%s: %zu valid configs, %zu with a thin tile\n", p.Canonical().c_str(), valid.size(), thin_tiles);
    CHECK(thin_tiles >= 8);
    CHECK(valid.size() <= 160);
    // What ran before the axes stays valid: old params, TB_K 64.
    CHECK(s.IsValid(*sm90, p, PerfConfig{{256, 64, 1, 4, 1, 64, 0, 1}}).ok());
  }
  // Where they do not pay: C/G % 64 == 0 or > 32 (TB_K 32); K/G > 32 (TB_N 32).
  const Problem wide = NhwcForward(32, 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1);
  CHECK(s.IsValid(*sm90, wide, PerfConfig{{128, 64, 2, 8, 0, 64, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, wide, PerfConfig{{128, 64, 2, 8, 0, 32, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, wide, PerfConfig{{128, 32, 2, 8, 0, 64, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, NhwcForward(2, 48, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1), PerfConfig{{128, 64, 2, 8, 0, 32, 0, 1}}).ok());
  CHECK(s.IsValid(*sm90, NhwcForward(2, 288, 64, 9, 9, 3, 3, 1, 1, 1, 1, 1), PerfConfig{{128, 64, 2, 8, 0, 32, 0, 1}}).ok());
  CHECK(s.IsValid(*sm90, NhwcForward(2, 512, 96, 10, 10, 3, 3, 1, 1, 1, 1, 4), PerfConfig{{128, 32, 2, 8, 0, 64, 0, 1}}).ok());
  CHECK(space.Value(s.DefaultConfig(*sm90, wide), "TB_K") == 64);
  // The launch of a thin config: 64-byte rows in the 64-byte swizzle, -DTB_K=32 passed.
  const PerfConfig c{{128, 32, 1, 8, 0, 32, 0, 1}};
  absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, thin, c);
  REQUIRE(sol.ok());
  const std::vector<std::string>& opts = sol->kernels[0].options;
  CHECK(std::find(opts.begin(), opts.end(), "-DTB_K=32") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "-DTB_N=32") != opts.end());
  const solver::Launch& l = sol->launches[0];
  CHECK(l.shared_bytes == solver::hopper_tma::SharedBytes({128, 32, 1, 8, 0, 32}));
  CHECK(solver::hopper_tma::SharedBytes({128, 32, 1, 8, 0, 32}) == 1024u + 8 * 160 * 64 + 4 * 16 * 40 * 2 + 128);
  CHECK(l.block.x == 256);
  const backend::TensorMapSpec& xm = l.args[0].tensor_map;
  CHECK(xm.channels_per_pixel == 32);
  CHECK(xm.pixels_per_column == 128);
  CHECK(xm.swizzle == backend::TensorMapSpec::Swizzle::k64B);
  const backend::TensorMapSpec& wm = l.args[1].tensor_map;
  CHECK(wm.box[0] == 32);
  CHECK(wm.box[2] == 32);
  CHECK(wm.swizzle == backend::TensorMapSpec::Swizzle::k64B);
  // TB_K 64 builds keep the options they had before the axis: no -DTB_K.
  absl::StatusOr<solver::Solution> old = s.GetSolution(*sm90, thin, PerfConfig{{256, 64, 1, 4, 1, 64, 0, 1}});
  REQUIRE(old.ok());
  for (const std::string& o : old->kernels[0].options) CHECK(o.rfind("-DTB_K", 0) != 0);
  CHECK(old->launches[0].args[0].tensor_map.channels_per_pixel == 64);
  CHECK(old->launches[0].args[0].tensor_map.swizzle == backend::TensorMapSpec::Swizzle::k128B);
  // Backward data of the same layer: dy's K = 32 channels are the k-tile's, x's C = 32 the N tile.
  solver::HopperTmaBwdSolver bwd;
  const Problem thin_bwd = testing::With(thin, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
  REQUIRE(bwd.IsApplicable(*sm90, thin_bwd).ok());
  const PerfConfig bdef = bwd.DefaultConfig(*sm90, thin_bwd);
  CHECK(bwd.IsValid(*sm90, thin_bwd, bdef).ok());
  CHECK(space.Value(bdef, "TB_K") == 32);
  CHECK(space.Value(bdef, "TB_N") == 32);
}

// The TB_N values of a problem's valid configs.
std::set<int64_t> ValidTbN(const solver::Solver& s, const Target& t, const Problem& p) {
  const solver::SearchSpace space = s.Space(t, p);
  std::set<int64_t> out;
  for (const PerfConfig& c : AllValid(s, t, p)) out.insert(space.Value(c, "TB_N"));
  return out;
}

TEST_CASE("hopper tma fwd: N tiles between powers of two only where they tile K/G better", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::HopperTmaFwdSolver s;
  auto tb_n = [&](int64_t k) { return ValidTbN(s, *sm90, NhwcForward(32, 80, k, 73, 73, 3, 3, 0, 0, 1, 1, 1)); };
  // K/G = 192: one 192 (no padding) beats a 256 (64 padded) and two 128s; two 96s beat three 64s
  // and two 128s. K/G = 160: a 192 pads more than a 160.
  CHECK(tb_n(192) == std::set<int64_t>{64, 96, 128, 192, 256});
  CHECK(tb_n(96) == std::set<int64_t>{64, 96, 128});
  CHECK(tb_n(160) == std::set<int64_t>{64, 96, 128, 160, 256});
  CHECK(tb_n(200) == std::set<int64_t>{64, 128, 224, 256});   // 224: 24 padded against 56
  CHECK(tb_n(384) == std::set<int64_t>{64, 128, 192, 256});   // two 192s against three 128s
  CHECK(tb_n(768) == std::set<int64_t>{64, 128, 256});        // 256 tiles it in fewer
  for (int64_t k : {64, 128, 256, 512, 1024, 2048}) CHECK(tb_n(k).size() == (k == 64 ? 1 : k == 128 ? 2 : 3));
  // Accumulators: a 192-wide tile fits 64 rows per consumer warpgroup only.
  const Problem p = NhwcForward(32, 80, 192, 73, 73, 3, 3, 0, 0, 1, 1, 1);
  CHECK(s.IsValid(*sm90, p, PerfConfig{{128, 192, 2, 5, 0, 64, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, p, PerfConfig{{256, 192, 2, 3, 0, 64, 0, 1}}).ok());
  CHECK_FALSE(s.IsValid(*sm90, p, PerfConfig{{128, 192, 1, 5, 0, 64, 0, 1}}).ok());
  // The default takes the fit where it pads less in as many N-tiles: 192 for 256 here.
  const solver::SearchSpace space = s.Space(*sm90, p);
  CHECK(space.Value(s.DefaultConfig(*sm90, p), "TB_N") == 192);
  CHECK(space.Value(s.DefaultConfig(*sm90, NhwcForward(32, 64, 96, 35, 35, 3, 3, 1, 1, 1, 1, 1)), "TB_N") == 96);
  CHECK(space.Value(s.DefaultConfig(*sm90, NhwcForward(32, 64, 256, 35, 35, 3, 3, 1, 1, 1, 1, 1)), "TB_N") == 256);
  // The epilogue stages 64 columns of a 192 tile, 32 of 96/160/224, 16 of a 48/80/112 split band.
  using solver::hopper_tma::SharedBytes;
  CHECK(SharedBytes({128, 192, 2, 5, 0, 64}) == 1024u + 5 * 320 * 128 + 2 * 4 * 16 * 72 * 2 + 80);
  CHECK(SharedBytes({128, 96, 2, 5, 0, 64}) == 1024u + 5 * 224 * 128 + 2 * 4 * 16 * 40 * 2 + 80);
  CHECK(SharedBytes({128, 96, 2, 5, 0, 64, 0, 2}) ==
        1024u + 5 * 224 * 128 + 2 * 4 * 16 * 24 * 2 + 128 * 48 * 4 + 16 + 80);
  absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, p, PerfConfig{{128, 192, 2, 5, 0, 64, 0, 1}});
  REQUIRE(sol.ok());
  const std::vector<std::string>& opts = sol->kernels[0].options;
  CHECK(std::find(opts.begin(), opts.end(), "-DTB_N=192") != opts.end());
  CHECK(sol->launches[0].args[1].tensor_map.box[2] == 192);
}

TEST_CASE("hopper tma fwd: a tap's narrow last chunk copied as 16 or 32 channels (LAST_K)", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::HopperTmaFwdSolver s;
  auto options = [&](const Problem& p, const PerfConfig& c) {
    absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, p, c);
    REQUIRE(sol.ok());
    return *sol;
  };
  auto has = [](const solver::Solution& sol, const std::string& o) {
    const std::vector<std::string>& opts = sol.kernels[0].options;
    return std::find(opts.begin(), opts.end(), o) != opts.end();
  };
  const PerfConfig wide{{128, 64, 2, 6, 0, 64, 0, 1}}, half{{128, 64, 2, 6, 0, 32, 0, 1}};
  // C = 80: 64 + 16 channels per tap; the launch adds x's and w's 16-channel maps (32-byte rows).
  const Problem c80 = NhwcForward(32, 80, 192, 73, 73, 3, 3, 0, 0, 1, 1, 1);
  const solver::Solution sol = options(c80, wide);
  CHECK(has(sol, "-DLAST_K=16"));
  CHECK(has(sol, "-DPARTIAL_K=1"));
  const std::vector<solver::KernelArg>& args = sol.launches[0].args;
  REQUIRE(args.size() == 4 + 1 + 1 + 9);  // x, w, x last, w last, phases, y, sizes
  CHECK(args[0].tensor_map.channels_per_pixel == 64);
  CHECK(args[2].tensor_map.channels_per_pixel == 16);
  CHECK(args[2].tensor_map.pixels_per_column == 128);
  CHECK(args[2].tensor_map.swizzle == backend::TensorMapSpec::Swizzle::k32B);
  CHECK(args[3].tensor_map.box[0] == 16);
  CHECK(args[3].tensor_map.box[2] == 64);
  CHECK(args[3].tensor_map.swizzle == backend::TensorMapSpec::Swizzle::k32B);
  // C = 96 and C = 32: 32-channel last chunks (64-byte rows); C = 520 (520 % 64 = 8): 16.
  // The default takes 64-channel k-tiles where the last chunk is 16 channels or fewer, else 32.
  const solver::SearchSpace space = s.Space(*sm90, c80);
  CHECK(space.Value(s.DefaultConfig(*sm90, c80), "TB_K") == 64);
  CHECK(space.Value(s.DefaultConfig(*sm90, NhwcForward(32, 96, 96, 35, 35, 3, 3, 1, 1, 1, 1, 1)), "TB_K") == 32);
  CHECK(has(options(NhwcForward(8, 96, 96, 17, 17, 3, 3, 1, 1, 1, 1, 1), wide), "-DLAST_K=32"));
  CHECK(has(options(NhwcForward(8, 32, 64, 17, 17, 3, 3, 1, 1, 1, 1, 1), wide), "-DLAST_K=32"));
  CHECK(has(options(NhwcForward(3, 520, 200, 9, 11, 3, 3, 1, 1, 1, 1, 1), wide), "-DLAST_K=16"));
  // None where the last chunk holds more than 32 (C = 48), is whole (C = 64), with 32-channel
  // k-tiles, or with several output phases (strided backward data).
  auto no_last = [&](const solver::Solver& sv, const Problem& p, const PerfConfig& c) {
    absl::StatusOr<solver::Solution> x = sv.GetSolution(*sm90, p, c);
    REQUIRE(x.ok());
    for (const std::string& o : x->kernels[0].options) CHECK(o.rfind("-DLAST_K", 0) != 0);
  };
  no_last(s, NhwcForward(8, 48, 64, 17, 17, 5, 5, 2, 2, 1, 1, 1), wide);
  no_last(s, NhwcForward(8, 64, 64, 17, 17, 3, 3, 1, 1, 1, 1, 1), wide);
  no_last(s, c80, half);
  solver::HopperTmaBwdSolver bwd;
  const Problem strided = testing::With(NhwcForward(2, 64, 80, 16, 16, 3, 3, 1, 1, 2, 1, 1), Direction::kBackwardData,
                                        DataType::kFp16, Layout::kNHWC);
  REQUIRE(bwd.IsApplicable(*sm90, strided).ok());
  no_last(bwd, strided, wide);
}

TEST_CASE("hopper tma bwd: backward data as a forward convolution over dy", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::HopperTmaBwdSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  int applicable = 0, flipped = 0;
  for (const Problem& layer : layers) {
    const Problem b = testing::With(layer, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
    INFO(b.Canonical());
    const bool ok = s.IsApplicable(*sm90, b).ok();
    CHECK(ok == ((b.k / b.groups) % 8 == 0));
    if (!ok) continue;
    ++applicable;
    CHECK(s.IsValid(*sm90, b, s.DefaultConfig(*sm90, b)).ok());
    const solver::hopper_tma::ConvPlan plan = solver::hopper_tma::BackwardDataPlan(b);
    CHECK(plan.phases.size() == static_cast<size_t>(b.stride[1] * b.stride[2]));
    CHECK(plan.Rows() == b.n * b.in[1] * b.in[2]);  // every dx pixel in exactly one phase
    CHECK(plan.c == b.k);
    CHECK(plan.k == b.c);
    absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, b, s.DefaultConfig(*sm90, b));
    REQUIRE(sol.ok());
    // The filter is read in place (rotated and transposed by the kernel) where dx's channels per
    // group make 16-byte rows; the RGB stem's C = 3 takes the rotated copy.
    CHECK(plan.flip_w == (b.c / b.groups % 8 == 0));
    const std::vector<std::string>& opts = sol->kernels[0].options;
    CHECK((std::find(opts.begin(), opts.end(), "-DFLIP_W=1") != opts.end()) == plan.flip_w);
    const solver::Launch& conv = sol->launches.back();
    const int w_arg = b.stride[1] > 1 ? 4 : 1;  // after x's im2col maps (four when phased)
    REQUIRE(conv.args[w_arg].kind == solver::KernelArg::Kind::kTensorMap);
    const backend::TensorMapSpec& wm = conv.args[w_arg].tensor_map;
    if (plan.flip_w) {
      CHECK(sol->launches.size() == 1);
      CHECK(sol->workspace_bytes == 0);
      CHECK(conv.args[w_arg].role == solver::BufferRole::kW);
      CHECK(wm.rank == 4);  // (C/G, R*S, K/G, G) of the problem: zeros past a group's own rows
      CHECK(wm.dims[0] == static_cast<uint64_t>(b.c / b.groups));
      CHECK(wm.dims[2] == static_cast<uint64_t>(b.k / b.groups));
      CHECK(wm.box[2] == 64);  // TB_K rows of the filter
    } else {
      REQUIRE(sol->launches.size() == 2);
      CHECK(sol->launches[0].entry == "tuna_flip_filter");
      CHECK(sol->workspace_bytes == static_cast<uint64_t>(b.c * b.k * b.fil[1] * b.fil[2]) * 2);
      CHECK(conv.args[w_arg].role == solver::BufferRole::kWorkspace);
      CHECK(wm.rank == 3);
    }
    CHECK(conv.args[b.stride[1] > 1 ? 6 : 3].role == solver::BufferRole::kX);  // dx is written
    CHECK(conv.args[0].role == solver::BufferRole::kY);  // from dy
    flipped += plan.flip_w ? 1 : 0;
  }
  CHECK(applicable == 23);
  CHECK(flipped == 22);
  // N tiles not a multiple of 64 (dx channels C = 96: TB_N 96) take 32-column slabs in the 64-byte
  // swizzle.
  {
    const Problem k96 = testing::With(NhwcForward(2, 96, 64, 11, 11, 3, 3, 1, 1, 1, 1, 1), Direction::kBackwardData,
                                      DataType::kFp16, Layout::kNHWC);
    const solver::hopper_tma::ConvPlan plan = solver::hopper_tma::BackwardDataPlan(k96);
    REQUIRE(plan.flip_w);
    const solver::SearchSpace space = s.Space(*sm90, k96);
    int narrow = 0;
    for (const PerfConfig& c : AllValid(s, *sm90, k96)) {
      if (space.Value(c, "TB_N") % 64 == 0) continue;
      absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, k96, c);
      REQUIRE(sol.ok());
      const backend::TensorMapSpec& wm = sol->launches[0].args[1].tensor_map;
      CHECK(wm.box[0] == 32);
      CHECK(wm.swizzle == backend::TensorMapSpec::Swizzle::k64B);
      ++narrow;
    }
    CHECK(narrow > 0);
  }
  // 1x1 stride 2: one phase carries the filter, three write zeros.
  const solver::hopper_tma::ConvPlan one = solver::hopper_tma::BackwardDataPlan(StridedBwdProblems()[1]);
  REQUIRE(one.phases.size() == 4);
  CHECK(one.phases[0].taps_h == 1);
  CHECK(one.phases[1].taps_h + one.phases[2].taps_h + one.phases[3].taps_h == 0);
  // 3x3 stride 2 pad 1: residue 0 takes the middle row, residue 1 the outer two.
  const solver::hopper_tma::ConvPlan three = solver::hopper_tma::BackwardDataPlan(StridedBwdProblems()[0]);
  CHECK(three.phases[0].taps_h == 1);
  CHECK(three.phases[3].taps_h == 2);
  CHECK(three.phases[3].taps_w == 2);
  CHECK_FALSE(s.IsApplicable(*sm90, testing::With(layers[3], Direction::kForward, DataType::kFp16, Layout::kNHWC)).ok());
  for (const Problem& p : StridedBwdProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
  }
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcForward(2, 64, 64, 20, 20, 3, 3, 1, 1, 3, 1, 1)).ok());  // forward
  const Problem s3 = testing::With(NhwcForward(2, 64, 64, 20, 20, 3, 3, 1, 1, 3, 1, 1), Direction::kBackwardData,
                                   DataType::kFp16, Layout::kNHWC);
  CHECK_FALSE(s.IsApplicable(*sm90, s3).ok());  // stride 3: 9 phases
}

// The finishing step's build (Specialize: FIX_SIZES 1): offered where the plan has one output
// phase, with the sizes and the phase as -D constants; the search never proposes it.
TEST_CASE("hopper tma fwd and bwd: the winner built for its problem alone", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::HopperTmaFwdSolver fwd;
  solver::HopperTmaBwdSolver bwd;
  const Problem p = NhwcForward(32, 256, 512, 14, 14, 3, 3, 1, 1, 1, 1, 2);  // groups 2
  const PerfConfig def = fwd.DefaultConfig(*sm90, p);
  const solver::SearchSpace space = fwd.Space(*sm90, p);
  CHECK(space.Value(def, "FIX_SIZES") == 0);
  for (uint64_t i = 0; i < space.Size(); ++i) CHECK(space.Value(space.At(i), "FIX_SIZES") == 0);
  const std::optional<PerfConfig> spec = fwd.Specialize(*sm90, p, def);
  REQUIRE(spec.has_value());
  CHECK(space.Value(*spec, "FIX_SIZES") == 1);
  CHECK(space.Searched(*spec) == def);
  CHECK(fwd.IsValid(*sm90, p, *spec).ok());
  CHECK_FALSE(fwd.Specialize(*sm90, p, *spec).has_value());  // already one
  absl::StatusOr<solver::Solution> a = fwd.GetSolution(*sm90, p, def);
  absl::StatusOr<solver::Solution> b = fwd.GetSolution(*sm90, p, *spec);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const std::vector<std::string>& opts = b->kernels[0].options;
  auto has = [&](const std::string& o) { return std::find(opts.begin(), opts.end(), o) != opts.end(); };
  CHECK(has("-DFIX_SIZES=1"));
  for (const char* o : {"-DTUNA_FIX_N=32", "-DTUNA_FIX_CG=128", "-DTUNA_FIX_K=512", "-DTUNA_FIX_HY=14",
                        "-DTUNA_FIX_WY=14", "-DTUNA_FIX_R=3", "-DTUNA_FIX_S=3", "-DTUNA_FIX_G=2", "-DTUNA_FIX_KG=256"}) {
    CHECK(has(o));
  }
  // The phase: the 28 words of the launch's phase table, without its count.
  std::string words;
  for (const solver::KernelArg& arg : a->launches[0].args) {
    if (arg.kind != solver::KernelArg::Kind::kWords) continue;
    REQUIRE(arg.words.size() == 29);
    for (size_t i = 0; i + 1 < arg.words.size(); ++i) words += (i ? "," : "") + std::to_string(arg.words[i]);
  }
  CHECK(has("-DTUNA_FIX_PHASE=" + words));
  for (const std::string& o : a->kernels[0].options) CHECK(has(o));  // the run-time build's options, plus these
  CHECK(a->launches[0].args.size() == b->launches[0].args.size());    // the same launch
  // Backward data: stride 1 has one phase; stride 2 has four, and no build for one problem.
  const Problem b1 = testing::With(p, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
  REQUIRE(bwd.IsApplicable(*sm90, b1).ok());
  CHECK(bwd.Specialize(*sm90, b1, bwd.DefaultConfig(*sm90, b1)).has_value());
  const Problem b2 = StridedBwdProblems()[0];
  const PerfConfig d2 = bwd.DefaultConfig(*sm90, b2);
  CHECK_FALSE(bwd.Specialize(*sm90, b2, d2).has_value());
  PerfConfig forced = d2;
  forced.values[space.IndexOf("FIX_SIZES")] = 1;
  CHECK_THAT(std::string(bwd.IsValid(*sm90, b2, forced).message()), Catch::Contains("FIX_SIZES needs one output phase"));
}

TEST_CASE("hopper tma fwd: every valid FP16 config and the BF16 default build for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  solver::HopperTmaFwdSolver s;
  testing::Sm90aBuilds builds(*be, s, *target);
  auto build = [&](const Problem& p, const PerfConfig& c) { builds.Build(p, c); };
  const Problem wide = NhwcForward(32, 256, 1024, 14, 14, 3, 3, 1, 1, 1, 1, 1);
  for (const PerfConfig& c : AllValid(s, *target, wide)) build(wide, c);
  const Problem bf = NhwcForward(32, 256, 1024, 14, 14, 3, 3, 1, 1, 1, 1, 1, DataType::kBf16);
  build(bf, s.DefaultConfig(*target, bf));
  // The thin tiles (TB_K 32, TB_N 32) on Inception-v3's 2F, and their BF16 default.
  const Problem thin = NhwcForward(32, 32, 32, 149, 149, 3, 3, 0, 0, 1, 1, 1);
  for (const PerfConfig& c : ThinConfigs(s, *target, thin)) build(thin, c);
  const Problem thin_bf = NhwcForward(32, 32, 32, 149, 149, 3, 3, 0, 0, 1, 1, 1, DataType::kBf16);
  build(thin_bf, s.DefaultConfig(*target, thin_bf));
  // Up to `most` valid configs of `p` with each of `axes` at its value (one per tile shape: the
  // ring depth changes no code path); how many.
  auto build_with = [&](const Problem& p, std::vector<std::pair<const char*, int64_t>> axes, int most) {
    const solver::SearchSpace space = s.Space(*target, p);
    const int stages = space.IndexOf("STAGES");
    std::set<std::vector<int64_t>> shapes;
    int n = 0;
    for (PerfConfig c : AllValid(s, *target, p)) {
      const bool match = std::all_of(axes.begin(), axes.end(), [&](const auto& av) {
        return space.Value(c, av.first) == av.second;
      });
      if (!match || n >= most) continue;
      const PerfConfig built = c;
      c.values[stages] = 0;
      if (!shapes.insert(c.values).second) continue;
      build(p, built), ++n;
    }
    return n;
  };
  // Split-K (clusters of two) on ResNet-50's 7x7 3x3 layer.
  CHECK(build_with(NhwcForward(32, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1), {{"SPLIT_K", 2}}, 6) >= 4);
  // A partial last chunk per tap (PARTIAL_K): Inception-v3's C = 80 layer with 64-channel k-tiles.
  const Problem c80 = NhwcForward(32, 80, 192, 73, 73, 3, 3, 0, 0, 1, 1, 1);
  CHECK(build_with(c80, {{"TB_K", 64}}, 6) >= 4);  // with LAST_K 16 (64 + 16 channels per tap)
  CHECK(build_with(NhwcForward(32, 96, 96, 35, 35, 3, 3, 1, 1, 1, 1, 1), {{"TB_K", 64}}, 2) == 2);  // LAST_K 32
  // N tiles between powers of two: 192 on the C = 80 layer, 96, 160 and 224 on K = 96, 160, 200,
  // and each split in two (bands of 96, 48, 80 and 112 columns: epilogue passes of 64, 32, 16).
  CHECK(build_with(c80, {{"TB_N", 192}}, 2) == 2);
  for (const auto& [k, tb_n] : {std::pair{192, 192}, {96, 96}, {160, 160}, {200, 224}}) {
    CHECK(build_with(NhwcForward(32, 64, k, 35, 35, 3, 3, 1, 1, 1, 1, 1), {{"TB_N", tb_n}}, 1) == 1);
    CHECK(build_with(NhwcForward(8, 512, k, 7, 7, 3, 3, 1, 1, 1, 1, 1), {{"TB_N", tb_n}, {"SPLIT_K", 2}}, 1) == 1);
  }
  // The finishing step's builds (sizes compiled in) of the wide layer and the thin one.
  for (const Problem& p : {wide, thin}) {
    const std::optional<PerfConfig> spec = s.Specialize(*target, p, s.DefaultConfig(*target, p));
    REQUIRE(spec.has_value());
    build(p, *spec);
  }
  std::printf("%zu distinct sm_90a builds\n", builds.distinct());
  CHECK(builds.distinct() >= 8);
  // Backward data reading w in place (FLIP_W): each valid tile shape (any ring depth) of a late
  // 3x3 layer (64-column slabs, split-K) and of C = 96 (TB_N 96: 32-column slabs), a 64-channel
  // k-tile with a narrow last chunk (K = 80: LAST_K 16), the thin tiles of C = K = 32 and a
  // strided layer.
  solver::HopperTmaBwdSolver bwd;
  testing::Sm90aBuilds bwd_builds(*be, bwd, *target);
  auto bwd_of = [](const Problem& p) { return testing::With(p, Direction::kBackwardData, p.data_type, Layout::kNHWC); };
  for (const Problem& p : {bwd_of(NhwcForward(32, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1)),
                           bwd_of(NhwcForward(8, 96, 64, 35, 35, 3, 3, 1, 1, 1, 1, 1))}) {
    for (const PerfConfig& c : testing::OnePerTileShape(bwd, *target, p)) bwd_builds.Build(p, c);
  }
  for (const Problem& p : {bwd_of(NhwcForward(8, 64, 80, 35, 35, 3, 3, 1, 1, 1, 1, 1)),
                           bwd_of(NhwcForward(8, 32, 32, 35, 35, 3, 3, 1, 1, 1, 1, 1)),
                           bwd_of(NhwcForward(8, 256, 512, 28, 28, 1, 1, 0, 0, 2, 1, 1, DataType::kBf16))}) {
    REQUIRE(solver::hopper_tma::BackwardDataPlan(p).flip_w);
    bwd_builds.Build(p, bwd.DefaultConfig(*target, p));
    for (const PerfConfig& c : ThinConfigs(bwd, *target, p)) bwd_builds.Build(p, c);
  }
  std::printf("%zu distinct sm_90a backward-data builds\n", bwd_builds.distinct());
  CHECK(bwd_builds.distinct() >= 20);
}

TEST_CASE("hopper tma fwd and bwd match the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  solver::HopperTmaFwdSolver s;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  // Batch 8 makes the persistent blocks walk several tiles.
  const std::vector<Problem> problems = testing::HopperDeviceProblems(
      Direction::kForward, layers, TmaEdgeProblems(), [](size_t i) { return i % 3 == 0 ? 8 : 1; });
  // Backward data: every stride-1 problem above whose dy channels per group are a multiple of 8.
  solver::HopperTmaBwdSolver bwd;
  std::vector<Problem> bwd_problems;
  for (const Problem& p : problems) {
    const Problem b = testing::With(p, Direction::kBackwardData, p.data_type, Layout::kNHWC);
    if (bwd.IsApplicable(target, b).ok()) bwd_problems.push_back(b);
  }
  for (const Problem& p : StridedBwdProblems()) {
    bwd_problems.push_back(p);
    bwd_problems.push_back(testing::With(p, Direction::kBackwardData, DataType::kBf16, Layout::kNHWC));
  }
  // Every ResNet-50 layer, strided ones included, at batch 1.
  for (const Problem& layer : layers) {
    Problem b = testing::With(layer, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
    b.n = 1;
    if (b.stride[1] > 1) bwd_problems.push_back(b);
  }
  std::printf("%zu forward and %zu backward-data problems\n", problems.size(), bwd_problems.size());
  CHECK(bwd_problems.size() >= 40);
  std::mt19937_64 rng(1013);
  testing::ConvChecker checker(*be, device, target);
  testing::DeviceTally tally;
  testing::CheckOnDevice(checker, s, target, problems, rng, -1, tally);
  testing::CheckOnDevice(checker, bwd, target, bwd_problems, rng, -1, tally);
  // Ping-pong walks each block's tiles with two consumers (its first config per problem that has
  // one); split-K shares each tile's k-tiles between the two blocks of a cluster (its first and
  // last config: the narrowest and the widest column bands).
  const solver::SearchSpace space = s.Space(target, problems[0]);
  int split_runs = 0;
  auto with_axis = [&](const solver::Solver& sv, const std::vector<Problem>& ps, const char* axis, int64_t value,
                       size_t most) {
    const int a = space.IndexOf(axis);
    for (const Problem& p : ps) {
      INFO(p.Canonical() << " " << axis << " " << value);
      const std::vector<PerfConfig> picked = testing::FirstAndLastWith(sv, target, p, a, value, most);
      if (picked.empty()) continue;
      tally.failures += checker.CheckAll(sv, p, picked);
      tally.runs += static_cast<int>(picked.size());
      if (std::string_view(axis) == "SPLIT_K") split_runs += static_cast<int>(picked.size());
    }
  };
  int fit_runs = 0, last_k_runs = 0;
  for (const auto& [sv, ps] : {std::pair<const solver::Solver*, const std::vector<Problem>*>{&s, &problems}, {&bwd, &bwd_problems}}) {
    with_axis(*sv, *ps, "PINGPONG", 1, 1);
    with_axis(*sv, *ps, "SPLIT_K", 2, 2);
    // N tiles between powers of two (K/G or, backward, C/G = 96, 160, 192, 200, 384, 80).
    const int before = tally.runs;
    for (int64_t tb_n : {96, 160, 192, 224}) with_axis(*sv, *ps, "TB_N", tb_n, 2);
    fit_runs += tally.runs - before;
    // A narrow last chunk per tap (LAST_K): 64-channel k-tiles where C/G % 64 is 1..32.
    std::vector<Problem> narrow;
    for (const Problem& p : *ps) {
      const bool fwd = p.direction == Direction::kForward;
      const int64_t rest = (fwd ? p.c : p.k) / p.groups % 64;
      if (rest != 0 && rest <= 32 && (fwd || (p.stride[1] == 1 && p.stride[2] == 1))) narrow.push_back(p);
    }
    const int before_last = tally.runs;
    with_axis(*sv, narrow, "TB_K", 64, 2);
    last_k_runs += tally.runs - before_last;
  }
  std::vector<Problem> split_fwd, split_bwd;
  for (const Problem& p : SplitKProblems()) (p.direction == Direction::kForward ? split_fwd : split_bwd).push_back(p);
  with_axis(s, split_fwd, "SPLIT_K", 2, 2);
  with_axis(bwd, split_bwd, "SPLIT_K", 2, 2);
  for (const auto& [sv, ps] : {std::pair<const solver::Solver*, const std::vector<Problem>*>{&s, &split_fwd}, {&bwd, &split_bwd}}) {
    const int before = tally.runs;
    for (int64_t tb_n : {96, 192, 224}) with_axis(*sv, *ps, "TB_N", tb_n, 2);
    fit_runs += tally.runs - before;
  }
  std::printf("%d split-K runs, %d with N tiles between powers of two, %d with 64-channel k-tiles where C/G %% 64 "
              "is 1..32\n", split_runs, fit_runs, last_k_runs);
  CHECK(split_runs >= 16);
  CHECK(fit_runs >= 16);
  CHECK(last_k_runs >= 16);
  // The finishing step's build (sizes compiled in) of each problem's default, where offered.
  int specialized = 0;
  auto fixed = [&](const solver::Solver& sv, const std::vector<Problem>& ps) {
    for (const Problem& p : ps) {
      INFO(p.Canonical() << " sizes compiled in");
      const std::optional<PerfConfig> spec = sv.Specialize(target, p, sv.DefaultConfig(target, p));
      if (!spec) continue;
      tally.failures += checker.CheckAll(sv, p, {*spec});
      ++tally.runs, ++specialized;
    }
  };
  fixed(s, problems);
  fixed(bwd, bwd_problems);
  std::printf("%d runs (%d with sizes compiled in), %d failures\n", tally.runs, specialized, tally.failures);
  CHECK(specialized >= 40);
  CHECK(tally.runs >= 200);
  CHECK(tally.failures == 0);
}

// Every config with a thin tile (TB_K 32: 64-byte swizzle rows; TB_N 32: wgmma n32) on the edge
// problems where those apply, forward and backward data, FP16, plus the BF16 defaults.
TEST_CASE("hopper tma fwd and bwd: every thin-tile config matches the CPU reference on an sm_90 device", "[gpu][thin]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  const Target target = cuda->target;
  solver::HopperTmaFwdSolver fwd;
  solver::HopperTmaBwdSolver bwd;
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  auto check = [&](const solver::Solver& s, const Problem& p, const std::vector<PerfConfig>& configs) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(target, p).ok());
    tally.failures += checker.CheckAll(s, p, configs);
    tally.runs += static_cast<int>(configs.size());
  };
  for (const Problem& p : ThinTileProblems()) {
    check(fwd, p, ThinConfigs(fwd, target, p));
    const Problem bf = testing::With(p, Direction::kForward, DataType::kBf16, Layout::kNHWC);
    check(fwd, bf, {fwd.DefaultConfig(target, bf)});
    const Problem b = testing::With(p, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
    if (!bwd.IsApplicable(target, b).ok()) continue;
    const std::vector<PerfConfig> thin = ThinConfigs(bwd, target, b);
    if (!thin.empty()) check(bwd, b, thin);
  }
  std::printf("%d thin-tile runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 100);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
