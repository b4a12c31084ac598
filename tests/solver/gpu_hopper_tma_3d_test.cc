// TunaHopperTmaFwd3d, TunaHopperTmaBwd3d and TunaHopperTmaWrw3d (candidates) on 3-D (NDHWC)
// convolutions: TunaHopperTmaFwd's kernel built with SPATIAL3 (a 5-D im2col map, the filter's depth
// taps walked after its rows; stride-1 backward data with all taps rotated), NCDHW forward through a
// channels-last adapter over it, and TunaHopperTmaWrw's kernel with SPATIAL3 (x's 5-D im2col boxes
// per (T, R, S) tap, the reduction over every output pixel of every frame).
// Planning without a compiler (applicability and its limits, the map and phase words it asks
// for, what other directions and builds refuse), NVRTC builds for sm_90a of every valid tile shape
// of a layer, and, tagged "gpu", 3-D shapes (3x3x3 with padding, strides, dilation, a 1x3x3 and a
// 7x7x7 stem-like filter with C = 8, groups, K and pixel tails, BF16, NCDHW) against the CPU
// reference on poisoned outputs.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tests/solver/gpu_solver_check.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/channel_order_adapter.h"
#include "tuner_core/solver/conv/gpu_hopper_tma.h"
#include "tuner_core/solver/conv/gpu_hopper_tma_wrw.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

// In the builtin registry under its permanent id (candidates until they ran on the H100, 2026-12-05).
bool RegisteredAs(uint64_t id, std::string_view name) {
  const solver::RegisteredSolver* r = solver::SolverRegistry::Builtin().ById(id);
  return r != nullptr && r->solver->Name() == name;
}
using testing::AllValid;
using testing::Make3d;

constexpr Layout L3 = Layout::kNDHWC;
constexpr DataType F16 = DataType::kFp16;

Problem Ndhwc(int64_t n, int64_t c, int64_t k, Dhw in, Dhw fil, Dhw pad, Dhw stride, Dhw dil, int64_t groups = 1,
              DataType type = F16) {
  Problem p = Make3d(n, c, k, in, fil, pad, stride, dil, groups, type, L3, L3, L3);
  p.direction = Direction::kForward;
  return p;
}

// 3-D forward shapes: a 3D ResNet's 3x3x3 layers, a strided one, dilation, a (2+1)D-style 1x3x3,
// a 7x7x7 stride-2 stem with C = 8, groups, K = 24 and 200 (N tails), odd extents (M tails), C = 80.
Problem Bwd(Problem p) {
  p.direction = Direction::kBackwardData;
  return p;
}

// The stride-1 shapes of Shapes3d() as backward data, and dx channels C = 24 and C = 12 (12: the
// rotated copy of w, C/G % 8 != 0).
std::vector<Problem> BwdShapes3d();

std::vector<Problem> Shapes3d() {
  return {
      Ndhwc(2, 64, 64, {8, 14, 14}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
      Ndhwc(2, 64, 128, {8, 14, 14}, {3, 3, 3}, {1, 1, 1}, {2, 2, 2}, {1, 1, 1}),
      Ndhwc(1, 32, 64, {9, 11, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {2, 2, 2}),
      Ndhwc(2, 64, 96, {6, 12, 12}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, {1, 1, 1}),
      Ndhwc(1, 8, 64, {16, 32, 32}, {7, 7, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}),
      Ndhwc(2, 128, 128, {5, 7, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 2),
      Ndhwc(3, 64, 24, {5, 9, 7}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
      Ndhwc(1, 80, 200, {4, 10, 10}, {3, 1, 3}, {1, 0, 1}, {1, 1, 1}, {1, 1, 1}),
      Ndhwc(2, 256, 64, {4, 8, 8}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {1, 1, 1}),
  };
}

// Every shape of Shapes3d() as backward weights, and C = 24 (a partial 64-channel chunk).
std::vector<Problem> WrwShapes3d() {
  std::vector<Problem> out = Shapes3d();
  out.push_back(Ndhwc(2, 24, 64, {6, 9, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}));
  for (Problem& p : out) p.direction = Direction::kBackwardWeights;
  return out;
}

std::vector<Problem> BwdShapes3d() {
  std::vector<Problem> out;
  for (const Problem& p : Shapes3d()) {
    if (p.stride[0] == 1 && p.stride[1] == 1 && p.stride[2] == 1) out.push_back(Bwd(p));
  }
  out.push_back(Bwd(Ndhwc(2, 24, 64, {6, 9, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})));
  out.push_back(Bwd(Ndhwc(2, 12, 64, {6, 9, 9}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1})));
  return out;
}

TEST_CASE("hopper tma bwd 3-D: stride-1 backward data with every tap rotated", "[solver]") {
  const Target sm90 = testing::ArchTarget("sm_90");
  solver::HopperTmaBwd3dSolver bwd;
  CHECK(RegisteredAs(1041, "TunaHopperTmaBwd3d"));
  for (const Problem& p : BwdShapes3d()) {
    INFO(p.Canonical());
    REQUIRE(bwd.IsApplicable(sm90, p).ok());
    CHECK(bwd.IsValid(sm90, p, bwd.DefaultConfig(sm90, p)).ok());
    const solver::hopper_tma::ConvPlan plan = solver::hopper_tma::BackwardDataPlan(p);
    REQUIRE(plan.spatial3);
    CHECK(plan.Rows() == p.n * p.in[0] * p.in[1] * p.in[2]);  // every dx pixel
    CHECK(plan.flip_w == (p.c % 8 == 0));
    absl::StatusOr<solver::Solution> sol = bwd.GetSolution(sm90, p, bwd.DefaultConfig(sm90, p));
    REQUIRE(sol.ok());
    CHECK(sol->launches.size() == (plan.flip_w ? 1u : 2u));  // the rotated copy first where not in place
    if (!plan.flip_w) CHECK(sol->workspace_bytes == static_cast<uint64_t>(p.c * p.k * 27) * 2);
  }
  Problem strided = Bwd(Shapes3d()[1]);
  CHECK_THAT(std::string(bwd.IsApplicable(sm90, strided).message()), Catch::Contains("stride 1 only"));
  CHECK_THAT(std::string(solver::HopperTmaBwdSolver().IsApplicable(sm90, Bwd(Shapes3d()[0])).message()),
             Catch::Contains("2D only"));
  // The depth of the plan: dy's 8 frames padded by dil * (T - 1) - pad = 1 on each side.
  const solver::hopper_tma::ConvPlan plan = solver::hopper_tma::BackwardDataPlan(Bwd(Shapes3d()[0]));
  CHECK(plan.depth.taps == 3);
  CHECK(plan.depth.lower == -1);
  CHECK(plan.depth.upper == -1);
  CHECK(plan.phases[0].n_i == 8 * 14);
}

TEST_CASE("hopper tma wrw 3-D: applicability, the 5-D map and the depth arguments", "[solver]") {
  const Target sm90 = testing::ArchTarget("sm_90");
  solver::HopperTmaWrw3dSolver wrw;
  CHECK(RegisteredAs(1042, "TunaHopperTmaWrw3d"));
  for (const Problem& p : WrwShapes3d()) {
    INFO(p.Canonical());
    REQUIRE(wrw.IsApplicable(sm90, p).ok());
    const PerfConfig def = wrw.DefaultConfig(sm90, p);
    CHECK(wrw.IsValid(sm90, p, def).ok());
    CHECK(!AllValid(wrw, sm90, p).empty());
    absl::StatusOr<solver::Solution> sol = wrw.GetSolution(sm90, p, def);
    REQUIRE(sol.ok());
    const std::vector<std::string>& opts = sol->kernels[0].options;
    CHECK(std::find(opts.begin(), opts.end(), "-DSPATIAL3=1") != opts.end());
    CHECK(std::find(opts.begin(), opts.end(), "-DX_TILED=1") == opts.end());
  }
  CHECK_THAT(std::string(solver::HopperTmaWrwSolver().IsApplicable(sm90, WrwShapes3d()[0]).message()),
             Catch::Contains("TunaHopperTmaWrw3d"));
  Problem flat = WrwShapes3d()[0];
  flat.spatial_dims = 2, flat.in[0] = flat.fil[0] = 1, flat.pad[0] = 0, flat.in_layout = flat.fil_layout =
      flat.out_layout = Layout::kNHWC;
  REQUIRE(ValidateProblem(flat).ok());  // the same layer without its depth
  CHECK_THAT(std::string(wrw.IsApplicable(sm90, flat).message()), Catch::Contains("3-D only"));
  // The launch of a 3x3x3 layer, N = 8, 8 x 14 x 14 frames, one split: the 5-D x map, dy as the
  // (K, N*Do*Ho*Wo) matrix, the depth arguments after the 2-D ones.
  Problem big = WrwShapes3d()[0];
  big.n = 8;
  const solver::SearchSpace space = wrw.Space(sm90, big);
  const PerfConfig c = space.Make({{"TB_M", 64}, {"TB_N", 128}, {"WG_M", 1}, {"STAGES", 8}, {"SPLIT_K", 1},
                                   {"CLUSTER_N", 1}, {"STREAM_K", 0}});
  REQUIRE(wrw.IsValid(sm90, big, c).ok());
  absl::StatusOr<solver::Solution> sol = wrw.GetSolution(sm90, big, c);
  REQUIRE(sol.ok());
  REQUIRE(sol->launches.size() == 1);
  const solver::Launch& l = sol->launches[0];
  const backend::TensorMapSpec& xm = l.args[0].tensor_map;
  CHECK(xm.mode == backend::TensorMapSpec::Mode::kIm2col);
  CHECK(xm.rank == 5);
  CHECK(xm.dims[3] == 8);
  CHECK(xm.lower_corner[2] == -1);
  CHECK(xm.pixels_per_column == 64);
  CHECK(l.args[1].tensor_map.dims[1] == 8 * 8 * 14 * 14);  // dy's P = N*Do*Ho*Wo (a (64, P, K / 64) view)
  // x, dy, dw, its offset; n, Ho, Wo, lower_h, lower_w, strides, dilations, R, S, C/G, K, groups,
  // chunks, splits, partials; then the depth: Do, lower_d, stride_d, dil_d, T.
  REQUIRE(l.args.size() == 4 + 17 + 5);
  std::vector<int64_t> args;
  for (size_t i = 4; i < l.args.size(); ++i) args.push_back(l.args[i].i);
  CHECK(args == std::vector<int64_t>{8, 14, 14, -1, -1, 1, 1, 1, 1, 3, 3, 64, 64, 1, 1, 1, 0, 8, -1, 1, 1, 3});
}

TEST_CASE("hopper tma fwd 3-D: applicability, the 5-D map and the depth words", "[solver]") {
  const Target sm90 = testing::ArchTarget("sm_90");
  solver::HopperTmaFwd3dSolver fwd;
  for (const Problem& p : Shapes3d()) {
    INFO(p.Canonical());
    REQUIRE(fwd.IsApplicable(sm90, p).ok());
    CHECK(fwd.IsValid(sm90, p, fwd.DefaultConfig(sm90, p)).ok());
    const std::vector<PerfConfig> valid = AllValid(fwd, sm90, p);
    CHECK(!valid.empty());
    const solver::SearchSpace space = fwd.Space(sm90, p);
    for (const PerfConfig& c : valid) CHECK(space.Value(c, "SPLIT_K") == 1);
    CHECK_FALSE(fwd.Specialize(sm90, p, fwd.DefaultConfig(sm90, p)).has_value());  // sizes stay arguments
  }
  // Registered (a candidate until it ran on the H100, 2026-12-05); TunaHopperTmaFwd itself stays 2D. Beyond the rank-5 copy
  // engine's box (-16..15): padding 17; other directions; FP32; NCDHW natively (an adapter takes it).
  CHECK(RegisteredAs(1040, "TunaHopperTmaFwd3d"));
  CHECK_THAT(std::string(solver::HopperTmaFwdSolver().IsApplicable(sm90, Shapes3d()[0]).message()),
             Catch::Contains("2D only"));
  CHECK_THAT(std::string(fwd.IsApplicable(sm90, Ndhwc(1, 64, 64, {8, 40, 40}, {3, 3, 3}, {17, 1, 1}, {1, 1, 1},
                                                      {1, 1, 1})).message()),
             Catch::Contains("-16..15"));
  const Problem base = Shapes3d()[0];
  Problem b = base;
  b.direction = Direction::kBackwardData;
  CHECK_FALSE(solver::HopperTmaBwdSolver().IsApplicable(sm90, b).ok());
  b.direction = Direction::kBackwardWeights;
  CHECK_FALSE(solver::HopperTmaWrwSolver().IsApplicable(sm90, b).ok());
  CHECK_FALSE(fwd.IsApplicable(sm90, Ndhwc(2, 64, 64, {8, 14, 14}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1,
                                           DataType::kFp32)).ok());
  Problem ncdhw = base;
  ncdhw.in_layout = ncdhw.fil_layout = ncdhw.out_layout = Layout::kNCDHW;
  CHECK_FALSE(fwd.IsApplicable(sm90, ncdhw).ok());
  const solver::ChannelsLastAdapter adapter("TunaHopperTmaFwd3dNchw", std::make_unique<solver::HopperTmaFwd3dSolver>());
  CHECK(adapter.IsApplicable(sm90, ncdhw).ok());
  // The plan and the launch: phase rows are depth x height rows, x through a 5-D im2col map.
  Problem big = base;
  big.n = 8;
  const solver::hopper_tma::ConvPlan plan = solver::hopper_tma::ForwardPlan(big);
  REQUIRE(plan.spatial3);
  CHECK(plan.phases[0].n_i == 8 * 14);
  CHECK(plan.Rows() == 8 * 8 * 14 * 14);
  CHECK(plan.Taps() == 27);
  const PerfConfig c{{128, 64, 2, 6, 0, 64, 0, 1}};
  REQUIRE(fwd.IsValid(sm90, big, c).ok());
  absl::StatusOr<solver::Solution> sol = fwd.GetSolution(sm90, big, c);
  REQUIRE(sol.ok());
  const std::vector<std::string>& opts = sol->kernels[0].options;
  CHECK(std::find(opts.begin(), opts.end(), "-DSPATIAL3=1") != opts.end());
  CHECK(std::find(opts.begin(), opts.end(), "-DPHASED=0") != opts.end());
  const solver::Launch& l = sol->launches[0];
  const backend::TensorMapSpec& xm = l.args[0].tensor_map;
  CHECK(xm.mode == backend::TensorMapSpec::Mode::kIm2col);
  CHECK(xm.rank == 5);
  CHECK(xm.dims[3] == 8);  // D
  CHECK(xm.dims[4] == 8);  // N
  CHECK(xm.lower_corner[2] == -1);
  CHECK(xm.upper_corner[2] == -1);
  CHECK(l.args[1].tensor_map.dims[1] == 27);  // w's taps (T, R, S)
  REQUIRE(l.args[2].kind == solver::KernelArg::Kind::kWords);
  const std::vector<int32_t>& words = l.args[2].words;
  REQUIRE(words.size() == 29 + 7);  // one phase, the count, then the depth words
  CHECK(words[28] == 1);
  CHECK(std::vector<int32_t>(words.begin() + 29, words.begin() + 34) == std::vector<int32_t>{3, 1, -1, 1, 14});
  CHECK(static_cast<uint32_t>(words[34]) == solver::gpu::MakeFastDiv(14).mul);
  CHECK(static_cast<uint32_t>(words[20]) == solver::gpu::MakeFastDiv(8 * 14 * 14).mul);  // pixels per image
}

TEST_CASE("hopper tma fwd 3-D: every valid tile shape builds for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  const Target target = testing::ArchTarget("sm_90");
  solver::HopperTmaFwd3dSolver fwd;
  testing::Sm90aBuilds builds(*be, fwd, target);
  for (const Problem& p : {Ndhwc(8, 64, 128, {8, 28, 28}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}),
                           Ndhwc(8, 80, 200, {8, 28, 28}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1,
                                 DataType::kBf16)}) {
    for (const PerfConfig& c : testing::OnePerTileShape(fwd, target, p)) builds.Build(p, c);
  }
  solver::HopperTmaBwd3dSolver bwd;
  testing::Sm90aBuilds bwd_builds(*be, bwd, target);
  for (const Problem& p : BwdShapes3d()) bwd_builds.Build(p, bwd.DefaultConfig(target, p));
  solver::HopperTmaWrw3dSolver wrw;
  testing::Sm90aBuilds wrw_builds(*be, wrw, target);
  Problem layer = Ndhwc(8, 128, 256, {8, 28, 28}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1});
  layer.direction = Direction::kBackwardWeights;
  for (const PerfConfig& c : testing::OnePerTileShape(wrw, target, layer)) wrw_builds.Build(layer, c);
  std::printf("%zu distinct sm_90a builds of 3-D forward, %zu of backward data, %zu of backward weights\n",
              builds.distinct(), bwd_builds.distinct(), wrw_builds.distinct());
  CHECK(builds.distinct() >= 12);
  CHECK(bwd_builds.distinct() >= 2);
  CHECK(wrw_builds.distinct() >= 8);
}

// Each of `ps` as it is (FP16) and in BF16.
std::vector<Problem> WithBf16(const std::vector<Problem>& ps) {
  std::vector<Problem> out;
  for (const Problem& p : ps) {
    out.push_back(p);
    out.push_back(p);
    out.back().data_type = DataType::kBf16;
  }
  return out;
}

TEST_CASE("hopper tma fwd and bwd 3-D match the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  const Target target = cuda->target;
  solver::HopperTmaFwd3dSolver fwd;
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  std::mt19937_64 rng(3013);
  const std::vector<Problem> problems = WithBf16(Shapes3d());
  testing::CheckOnDevice(checker, fwd, target, problems, rng, -1, tally, 4);
  // NCDHW through the channels-last adapter.
  const solver::ChannelsLastAdapter adapter("TunaHopperTmaFwd3dNchw", std::make_unique<solver::HopperTmaFwd3dSolver>());
  std::vector<Problem> ncdhw;
  for (size_t i = 0; i < 4; ++i) {
    Problem p = Shapes3d()[i];
    p.in_layout = p.fil_layout = p.out_layout = Layout::kNCDHW;
    ncdhw.push_back(p);
  }
  testing::CheckOnDevice(checker, adapter, target, ncdhw, rng, -1, tally, 1);
  // Backward data (stride 1), FP16 and BF16.
  solver::HopperTmaBwd3dSolver bwd;
  const std::vector<Problem> bwd_problems = WithBf16(BwdShapes3d());
  testing::CheckOnDevice(checker, bwd, target, bwd_problems, rng, -1, tally, 3);
  // Backward weights, FP16 and BF16.
  solver::HopperTmaWrw3dSolver wrw;
  const std::vector<Problem> wrw_problems = WithBf16(WrwShapes3d());
  testing::CheckOnDevice(checker, wrw, target, wrw_problems, rng, -1, tally, 3);
  std::printf("%zu 3-D forward problems, %zu NCDHW, %zu backward data and %zu backward weights: %d runs, %d failures\n",
              problems.size(), ncdhw.size(), bwd_problems.size(), wrw_problems.size(), tally.runs, tally.failures);
  CHECK(tally.runs >= 200);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
