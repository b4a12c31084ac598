// TunaHopperTmaFwd, TunaHopperTmaBwd and TunaHopperTmaWrw on NCHW 1x1 layers (stride 1, no padding,
// one group): per-image GEMMs in the TMA kernels (-DNCHW_1X1=1), no layout copies. Planning without a compiler
// (which problems take the GEMM plan, why others do not, the tensor maps and sizes it asks for,
// the channels-last adapters stepping aside), NVRTC builds for sm_90a of every valid tile shape of
// a layer in each direction, and, tagged "gpu", ResNet-50's 56x56 and 28x28 1x1 layers and edge
// shapes (pixel, row and channel tails, a narrow k-tile, a channels-last filter, one image) in
// FP16 and BF16, in all three directions (backward weights also split and stream-K), against the
// CPU reference on poisoned outputs.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/channel_order_adapter.h"
#include "tuner_core/solver/conv/gpu_hopper_halo_wrw.h"
#include "tuner_core/solver/conv/gpu_hopper_tma.h"
#include "tuner_core/solver/conv/gpu_hopper_tma_wrw.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;
using testing::AllValid;
using testing::NhwcForward;

Problem Nchw(const Problem& p, Direction dir, DataType type = DataType::kFp16) {
  return testing::With(p, dir, type, Layout::kNCHW);
}

// 1x1 stride-1 unpadded problems (NCHW once re-laid-out): ResNet-50's 56x56 and 28x28 ones at small
// batches, then tails: H*W not a multiple of any N tile (120, 72, 8 pixels), output channels not a
// multiple of 64 (24, 200), summed channels with a partial 64-channel chunk (40, 96, 200), a deep
// reduction (1024), one image.
std::vector<Problem> NchwShapes() {
  return {
      NhwcForward(2, 64, 256, 56, 56, 1, 1, 0, 0, 1, 1, 1),  NhwcForward(2, 256, 64, 56, 56, 1, 1, 0, 0, 1, 1, 1),
      NhwcForward(3, 512, 128, 28, 28, 1, 1, 0, 0, 1, 1, 1), NhwcForward(2, 128, 512, 28, 28, 1, 1, 0, 0, 1, 1, 1),
      NhwcForward(3, 64, 24, 10, 12, 1, 1, 0, 0, 1, 1, 1),   NhwcForward(2, 40, 200, 9, 8, 1, 1, 0, 0, 1, 1, 1),
      NhwcForward(2, 96, 64, 17, 8, 1, 1, 0, 0, 1, 1, 1),    NhwcForward(1, 1024, 64, 4, 2, 1, 1, 0, 0, 1, 1, 1),
      NhwcForward(4, 200, 96, 16, 16, 1, 1, 0, 0, 1, 1, 1),  NhwcForward(1, 64, 64, 32, 32, 1, 1, 0, 0, 1, 1, 1),
  };
}

TEST_CASE("hopper tma nchw: which problems take per-image GEMMs, and the launch", "[solver]") {
  const Target sm90 = testing::ArchTarget("sm_90");
  solver::HopperTmaFwdSolver fwd;
  solver::HopperTmaBwdSolver bwd;
  for (const Problem& shape : NchwShapes()) {
    for (Direction dir : {Direction::kForward, Direction::kBackwardData}) {
      const Problem p = Nchw(shape, dir);
      INFO(p.Canonical());
      const solver::Solver& s = dir == Direction::kForward ? static_cast<const solver::Solver&>(fwd) : bwd;
      REQUIRE(solver::hopper_tma::NchwGemm(p));
      REQUIRE(s.IsApplicable(sm90, p).ok());
      CHECK(s.IsValid(sm90, p, s.DefaultConfig(sm90, p)).ok());
      const std::vector<PerfConfig> valid = AllValid(s, sm90, p);
      CHECK(!valid.empty());
      CHECK(valid.size() <= 128);
    }
  }
  // Not per-image GEMMs: NHWC, strides, padding, 3x3, groups; and GEMMs the copy engine cannot
  // address: H*W or the summed channels not a multiple of 8 (14x14: 196 pixels).
  const Problem base = NhwcForward(2, 64, 256, 56, 56, 1, 1, 0, 0, 1, 1, 1);
  CHECK_FALSE(solver::hopper_tma::NchwGemm(base));
  CHECK_FALSE(solver::hopper_tma::NchwGemm(Nchw(NhwcForward(2, 64, 256, 56, 56, 1, 1, 0, 0, 2, 1, 1), Direction::kForward)));
  CHECK_FALSE(solver::hopper_tma::NchwGemm(Nchw(NhwcForward(2, 64, 256, 56, 56, 1, 1, 1, 1, 1, 1, 1), Direction::kForward)));
  CHECK_FALSE(solver::hopper_tma::NchwGemm(Nchw(NhwcForward(2, 64, 256, 56, 56, 3, 3, 1, 1, 1, 1, 1), Direction::kForward)));
  CHECK_FALSE(solver::hopper_tma::NchwGemm(Nchw(NhwcForward(2, 64, 256, 56, 56, 1, 1, 0, 0, 1, 1, 2), Direction::kForward)));
  const Problem p196 = Nchw(NhwcForward(2, 64, 256, 14, 14, 1, 1, 0, 0, 1, 1, 1), Direction::kForward);
  CHECK_THAT(std::string(fwd.IsApplicable(sm90, p196).message()), Catch::Contains("H*W a multiple of 8"));
  const Problem c12 = Nchw(NhwcForward(2, 12, 256, 8, 8, 1, 1, 0, 0, 1, 1, 1), Direction::kForward);
  CHECK_THAT(std::string(fwd.IsApplicable(sm90, c12).message()), Catch::Contains("summed channels"));
  CHECK(fwd.IsApplicable(sm90, Nchw(NhwcForward(2, 256, 12, 8, 8, 1, 1, 0, 0, 1, 1, 1), Direction::kForward)).ok());
  CHECK_FALSE(bwd.IsApplicable(sm90, Nchw(NhwcForward(2, 256, 12, 8, 8, 1, 1, 0, 0, 1, 1, 1), Direction::kBackwardData)).ok());
  CHECK_FALSE(fwd.IsApplicable(sm90, Nchw(base, Direction::kForward, DataType::kFp32)).ok());
  CHECK_FALSE(fwd.IsApplicable(testing::ArchTarget("sm_80"), Nchw(base, Direction::kForward)).ok());
  // No split-K for the GEMMs, even where the k-loop is long enough (C = 8192: 128 k-tiles).
  const Problem deep = Nchw(NhwcForward(1, 8192, 64, 8, 8, 1, 1, 0, 0, 1, 1, 1), Direction::kForward);
  REQUIRE(fwd.IsApplicable(sm90, deep).ok());
  const int split_axis = fwd.Space(sm90, deep).IndexOf("SPLIT_K");
  for (const PerfConfig& c : AllValid(fwd, sm90, deep)) CHECK(c.values[split_axis] == 1);
  // The channels-last adapters step aside where the inner solver runs the layouts itself, and keep
  // the rest (14x14, strided).
  const solver::ChannelsLastAdapter adapter("TunaHopperTmaFwdNchw", std::make_unique<solver::HopperTmaFwdSolver>());
  const Problem f = Nchw(base, Direction::kForward);
  CHECK_THAT(std::string(adapter.IsApplicable(sm90, f).message()), Catch::Contains("without copies"));
  CHECK(adapter.IsApplicable(sm90, p196).ok());
  // Forward, ResNet-50's 56x56 C = 64 -> K = 256 at batch 32: rows are output channels, columns
  // pixels, one GEMM per image.
  Problem big = f;
  big.n = 32;
  const solver::hopper_tma::ConvPlan plan = solver::hopper_tma::ForwardPlan(big);
  REQUIRE(plan.nchw);
  CHECK(plan.Rows() == 256);
  CHECK(plan.groups == 32);
  CHECK(plan.c / plan.groups == 64);
  CHECK(plan.k / plan.groups == 3136);
  const PerfConfig c{{128, 128, 2, 6, 0, 64, 0, 1}};
  REQUIRE(fwd.IsValid(sm90, big, c).ok());
  absl::StatusOr<solver::Solution> sol = fwd.GetSolution(sm90, big, c);
  REQUIRE(sol.ok());
  const std::vector<std::string>& opts = sol->kernels[0].options;
  CHECK(std::find(opts.begin(), opts.end(), "-DNCHW_1X1=1") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "-DPHASED=0") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "-DVEC_OUT=1") != opts.end());
  for (const std::string& o : opts) CHECK((o.rfind("-DFLIP_W", 0) != 0 && o.rfind("-DLAST_K", 0) != 0));
  REQUIRE(sol->launches.size() == 1);
  const solver::Launch& l = sol->launches[0];
  REQUIRE(l.args.size() == 13);  // w's map, x's map, the phase, y, 9 sizes
  CHECK(l.args[0].role == solver::BufferRole::kW);
  CHECK(l.args[0].tensor_map.rank == 2);  // (C, K): TB_K x TB_M boxes
  CHECK(l.args[0].tensor_map.dims[0] == 64);
  CHECK(l.args[0].tensor_map.dims[1] == 256);
  CHECK(l.args[0].tensor_map.box[0] == 64);
  CHECK(l.args[0].tensor_map.box[1] == 128);
  CHECK(l.args[1].role == solver::BufferRole::kX);
  const backend::TensorMapSpec& xm = l.args[1].tensor_map;
  CHECK(xm.rank == 3);  // (P, C, N): 64-pixel slabs x TB_K channels x 1 image
  CHECK(xm.dims[0] == 3136);
  CHECK(xm.dims[1] == 64);
  CHECK(xm.dims[2] == 32);
  CHECK(xm.strides_bytes[1] == 64u * 3136 * 2);
  CHECK(xm.box[0] == 64);
  CHECK(xm.box[1] == 64);
  CHECK(xm.box[2] == 1);
  CHECK(l.args[3].role == solver::BufferRole::kY);
  // The sizes as the kernel takes them: one "image" of 256 rows, C/G = C, 32 groups of 3136 columns.
  const std::vector<int64_t> sizes = {1, 64, 32 * 3136, 1, 256, 1, 1, 32, 3136};
  for (size_t i = 0; i < sizes.size(); ++i) CHECK(l.args[4 + i].i == sizes[i]);
  CHECK(l.grid.x == static_cast<uint32_t>(sm90.num_cu));  // 2 x 25 x 32 tiles
  // Backward data: one launch, w read transposed (M-major A in 64-row boxes), dy as x, dx written.
  const Problem b = Nchw(big, Direction::kBackwardData);
  absl::StatusOr<solver::Solution> bs = bwd.GetSolution(sm90, b, bwd.DefaultConfig(sm90, b));
  REQUIRE(bs.ok());
  REQUIRE(bs->launches.size() == 1);
  CHECK(bs->workspace_bytes == 0);
  const std::vector<std::string>& bo = bs->kernels[0].options;
  CHECK(std::find(bo.begin(), bo.end(), "-DTRANS_A=1") != bo.end());
  const backend::TensorMapSpec& am = bs->launches[0].args[0].tensor_map;
  CHECK(bs->launches[0].args[0].role == solver::BufferRole::kW);
  CHECK(am.dims[0] == 64);   // (C, K): dx's channels, the GEMM rows, inner
  CHECK(am.dims[1] == 256);  // K summed
  CHECK(am.box[0] == 64);
  CHECK(am.swizzle == backend::TensorMapSpec::Swizzle::k128B);
  CHECK(bs->launches[0].args[1].role == solver::BufferRole::kY);
  CHECK(bs->launches[0].args[3].role == solver::BufferRole::kX);
  CHECK_THAT(std::string(bwd.IsApplicable(sm90, Nchw(NhwcForward(2, 12, 64, 8, 8, 1, 1, 0, 0, 1, 1, 1),
                                                     Direction::kBackwardData)).message()),
             Catch::Contains("C a multiple of 8"));
  // Backward weights: dy and x as (P, channels, N) maps of K-major 64 x 64 slabs; no clusters.
  solver::HopperTmaWrwSolver wrw;
  const Problem w = Nchw(big, Direction::kBackwardWeights);
  REQUIRE(wrw.IsApplicable(sm90, w).ok());
  absl::StatusOr<solver::Solution> ws = wrw.GetSolution(sm90, w, wrw.DefaultConfig(sm90, w));
  REQUIRE(ws.ok());
  const std::vector<std::string>& wo = ws->kernels[0].options;
  CHECK(std::find(wo.begin(), wo.end(), "-DNCHW_1X1=1") != wo.end());
  for (const std::string& o : wo) CHECK((o.rfind("-DX_TILED", 0) != 0 && o.rfind("-DTMA_3D", 0) != 0));
  const solver::Launch& wl = ws->launches[ws->launches.size() > 1 && ws->launches[0].entry != "tuna_hopper_tma_wrw"];
  REQUIRE(wl.entry == "tuna_hopper_tma_wrw");
  CHECK(wl.args[0].tensor_map.dims[0] == 3136);
  CHECK(wl.args[0].tensor_map.dims[1] == 64);  // x's C
  CHECK(wl.args[1].tensor_map.dims[1] == 256);  // dy's K
  CHECK(wl.args[1].tensor_map.box[0] == 64);
  const solver::SearchSpace wspace = wrw.Space(sm90, w);
  for (const PerfConfig& c : AllValid(wrw, sm90, w)) CHECK(wspace.Value(c, "CLUSTER_N") == 1);
  CHECK_FALSE(wrw.IsApplicable(sm90, Nchw(NhwcForward(2, 64, 256, 14, 14, 1, 1, 0, 0, 1, 1, 1),
                                          Direction::kBackwardWeights)).ok());  // 196 pixels
  // The halo wrw kernel reads NHWC only: it declines the GEMM plan (its adapter takes the layer).
  CHECK_THAT(std::string(solver::HopperHaloWrwSolver().IsApplicable(sm90, w).message()), Catch::Contains("2D NHWC only"));
  // The finishing step's build of the GEMM plan.
  const std::optional<PerfConfig> spec = fwd.Specialize(sm90, big, c);
  REQUIRE(spec.has_value());
  absl::StatusOr<solver::Solution> fixed = fwd.GetSolution(sm90, big, *spec);
  REQUIRE(fixed.ok());
  const std::vector<std::string>& fo = fixed->kernels[0].options;
  CHECK(std::find(fo.begin(), fo.end(), "-DTUNA_FIX_G=32") != fo.end());
  CHECK(std::find(fo.begin(), fo.end(), "-DTUNA_FIX_KG=3136") != fo.end());
}

TEST_CASE("hopper tma nchw: every valid tile shape builds for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  const Target target = testing::ArchTarget("sm_90");
  solver::HopperTmaFwdSolver fwd;
  solver::HopperTmaBwdSolver bwd;
  size_t distinct = 0;
  for (const solver::Solver* s : {static_cast<const solver::Solver*>(&fwd), static_cast<const solver::Solver*>(&bwd)}) {
    testing::Sm90aBuilds builds(*be, *s, target);
    const Direction dir = s == &fwd ? Direction::kForward : Direction::kBackwardData;
    for (const Problem& shape : {NhwcForward(32, 64, 256, 56, 56, 1, 1, 0, 0, 1, 1, 1),
                                 NhwcForward(8, 96, 200, 16, 16, 1, 1, 0, 0, 1, 1, 1, DataType::kBf16)}) {
      const Problem p = Nchw(shape, dir, shape.data_type);
      for (const PerfConfig& c : testing::OnePerTileShape(*s, target, p)) builds.Build(p, c);
      if (std::optional<PerfConfig> spec = s->Specialize(target, p, s->DefaultConfig(target, p))) builds.Build(p, *spec);
    }
    distinct += builds.distinct();
  }
  solver::HopperTmaWrwSolver wrw;
  testing::Sm90aBuilds wrw_builds(*be, wrw, target);
  for (const Problem& shape : {NhwcForward(32, 256, 64, 56, 56, 1, 1, 0, 0, 1, 1, 1),
                               NhwcForward(8, 96, 200, 16, 16, 1, 1, 0, 0, 1, 1, 1, DataType::kBf16)}) {
    const Problem p = Nchw(shape, Direction::kBackwardWeights, shape.data_type);
    for (const PerfConfig& c : AllValid(wrw, target, p)) wrw_builds.Build(p, c);
  }
  distinct += wrw_builds.distinct();
  std::printf("%zu distinct sm_90a builds of the NCHW GEMMs\n", distinct);
  CHECK(distinct >= 26);
}

TEST_CASE("hopper tma nchw: per-image GEMMs match the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  const Target target = cuda->target;
  solver::HopperTmaFwdSolver fwd;
  solver::HopperTmaBwdSolver bwd;
  solver::HopperTmaWrwSolver wrw;
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  std::mt19937_64 rng(1036);
  std::vector<Problem> fwd_problems, bwd_problems, wrw_problems;
  for (const Problem& shape : NchwShapes()) {
    for (DataType t : {DataType::kFp16, DataType::kBf16}) {
      fwd_problems.push_back(Nchw(shape, Direction::kForward, t));
      const Problem b = Nchw(shape, Direction::kBackwardData, t);
      if (bwd.IsApplicable(target, b).ok()) bwd_problems.push_back(b);
      const Problem w = Nchw(shape, Direction::kBackwardWeights, t);
      if (wrw.IsApplicable(target, w).ok()) wrw_problems.push_back(w);
    }
  }
  // A filter in NHWC (the same bytes for 1x1) beside NCHW x and y.
  Problem mixed = Nchw(NchwShapes()[4], Direction::kForward);
  mixed.fil_layout = Layout::kNHWC;
  fwd_problems.push_back(mixed);
  testing::CheckOnDevice(checker, fwd, target, fwd_problems, rng, -1, tally, 3);
  testing::CheckOnDevice(checker, bwd, target, bwd_problems, rng, -1, tally, 3);
  // Backward weights: the default, 3 random configs and the first split one; then stream-K.
  const solver::SearchSpace wspace = wrw.Space(target, wrw_problems[0]);
  testing::CheckOnDevice(checker, wrw, target, wrw_problems, rng, wspace.IndexOf("SPLIT_K"), tally, 3);
  for (const Problem& p : wrw_problems) {
    INFO(p.Canonical());
    const std::vector<PerfConfig> sk = testing::FirstAndLastWith(wrw, target, p, wspace.IndexOf("STREAM_K"), 1, 2);
    tally.failures += checker.CheckAll(wrw, p, sk);
    tally.runs += static_cast<int>(sk.size());
  }
  // Two consumers on alternate tiles, and every N tile between powers of two where valid.
  const int pingpong = fwd.Space(target, fwd_problems[0]).IndexOf("PINGPONG");
  const int tb_n = fwd.Space(target, fwd_problems[0]).IndexOf("TB_N");
  for (const auto& [s, ps] : {std::pair<const solver::Solver*, const std::vector<Problem>*>{&fwd, &fwd_problems},
                              {&bwd, &bwd_problems}}) {
    for (const Problem& p : *ps) {
      INFO(p.Canonical());
      std::vector<PerfConfig> picked = testing::FirstAndLastWith(*s, target, p, pingpong, 1, 2);
      for (int64_t n : {96, 160, 192, 224}) {
        for (const PerfConfig& c : testing::FirstAndLastWith(*s, target, p, tb_n, n, 1)) picked.push_back(c);
      }
      if (picked.empty()) continue;
      tally.failures += checker.CheckAll(*s, p, picked);
      tally.runs += static_cast<int>(picked.size());
    }
  }
  std::printf("%zu forward, %zu backward-data and %zu backward-weights NCHW problems: %d runs, %d failures\n",
              fwd_problems.size(), bwd_problems.size(), wrw_problems.size(), tally.runs, tally.failures);
  CHECK(bwd_problems.size() >= 18);
  CHECK(wrw_problems.size() >= 18);
  CHECK(tally.runs >= 300);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
