// Named tile axes (#16): every tunable solver's axes are the -D names its kernel reads, decoded
// by name; params strings written before the rename (lower_snake_case axes, same order) read
// back with the same values under the new names. Pure planning, no compiler or device.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catch2/catch.hpp"
#include "kernels/sources.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/solver/conv/channel_order_adapter.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/perf_config.h"

namespace tuna {
namespace {

using solver::AxisUse;
using solver::PerfConfig;
using solver::SearchSpace;
using solver::Solver;
using solver::Target;

Target Arch(const std::string& arch) {
  absl::StatusOr<Target> t = solver::TargetForArch(arch, 16);
  REQUIRE(t.ok());
  return *t;
}

solver::SolverList AllTunable() {
  solver::SolverList all = solver::GpuTunableSolvers();
  for (auto& entry : solver::CpuTunableSolvers()) all.push_back(std::move(entry));
  return all;
}

const Solver& ByName(const solver::SolverList& list, std::string_view name) {
  for (const auto& [id, s] : list)
    if (s->Name() == name) return *s;
  FAIL("no solver " << name);
  return *list.front().second;
}

bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// True when `name` occurs as a whole word outside a // comment of `text`.
bool ReadsMacro(std::string_view text, std::string_view name) {
  for (size_t at = text.find(name); at != std::string_view::npos; at = text.find(name, at + 1)) {
    if (at > 0 && IsIdentChar(text[at - 1])) continue;
    if (at + name.size() < text.size() && IsIdentChar(text[at + name.size()])) continue;
    const size_t line = text.rfind('\n', at);
    const std::string_view before = text.substr(line == std::string_view::npos ? 0 : line, at - (line == std::string_view::npos ? 0 : line));
    if (before.find("//") != std::string_view::npos) continue;
    return true;
  }
  return false;
}

TEST_CASE("SearchSpace: values by name, configs by name, -D per kernel axis") {
  const SearchSpace space({{"TB_M", {64, 128}}, {"TB_N", {32, 64}}, {"SPLIT_K", {1, 2, 4}, AxisUse::kSolver}});
  const PerfConfig c{{128, 32, 4}};
  CHECK(space.IndexOf("TB_N") == 1);
  CHECK(space.IndexOf("tb_n") == -1);  // names are exact
  CHECK(space.Value(c, "TB_M") == 128);
  CHECK(space.Value(c, "SPLIT_K") == 4);
  CHECK(*space.Find(c, "TB_N") == 32);
  CHECK_THAT(std::string(space.Find(c, "WARP_M").status().message()), Catch::Contains("no axis 'WARP_M'"));
  CHECK_FALSE(space.Find(PerfConfig{{128}}, "TB_N").ok());

  CHECK(space.Make({{"SPLIT_K", 4}, {"TB_N", 32}, {"TB_M", 128}}) == c);  // any order
  CHECK_THAT(std::string(space.TryMake({{"TB_M", 128}, {"TB_N", 32}}).status().message()),
             Catch::Contains("SPLIT_K not given"));
  CHECK_THAT(std::string(space.TryMake({{"TB_M", 96}, {"TB_N", 32}, {"SPLIT_K", 1}}).status().message()),
             Catch::Contains("TB_M=96 is outside {64,128}"));
  CHECK_FALSE(space.TryMake({{"TB_M", 64}, {"TB_M", 64}, {"TB_N", 32}, {"SPLIT_K", 1}}).ok());
  CHECK_FALSE(space.TryMake({{"TB_M", 64}, {"TB_N", 32}, {"SPLIT_K", 1}, {"STAGES", 2}}).ok());

  CHECK(space.Defines(c) == std::vector<std::string>{"-DTB_M=128", "-DTB_N=32"});  // SPLIT_K: solver only
  CHECK(space.Describe(c) == "TB_M=128 TB_N=32 SPLIT_K=4");
  CHECK(c.ToString() == "128,32,4");
}

TEST_CASE("SearchSpace: an axis the search holds still is skipped by Size, At and Index, read by Parse") {
  const SearchSpace space({{"TB_M", {64, 128}},
                           {"FIX", {0, 1}, AxisUse::kSolver, 0, /*searched=*/false},
                           {"STAGES", {2, 3, 4}}});
  CHECK(space.Size() == 6);
  CHECK(space.At(0) == PerfConfig{{64, 0, 2}});
  CHECK(space.At(5) == PerfConfig{{128, 0, 4}});
  for (uint64_t i = 0; i < space.Size(); ++i) CHECK(space.Index(space.At(i)) == i);
  CHECK(space.Index(PerfConfig{{128, 1, 3}}) == space.Index(PerfConfig{{128, 0, 3}}));  // the point a search times
  CHECK_FALSE(space.Index(PerfConfig{{128, 2, 3}}).has_value());
  CHECK_FALSE(space.Index(PerfConfig{{128, 0}}).has_value());
  CHECK(space.Searched(PerfConfig{{128, 1, 3}}) == PerfConfig{{128, 0, 3}});
  CHECK(*space.Parse("128,1,3") == PerfConfig{{128, 1, 3}});
  CHECK(space.Contains(PerfConfig{{128, 1, 3}}));
  CHECK(space.Make({{"TB_M", 64}, {"STAGES", 3}}) == PerfConfig{{64, 0, 3}});  // may be left out
  CHECK(space.Make({{"TB_M", 64}, {"STAGES", 3}, {"FIX", 1}}) == PerfConfig{{64, 1, 3}});
  CHECK_FALSE(space.TryMake({{"TB_M", 64}}).ok());  // a searched axis may not
}

// Params strings as the code before the rename wrote them (most from bench/kernels/results/*.log,
// others in the old axis order), with the values the new names must give.
struct OldParams {
  const char* solver;
  const char* params;
  std::vector<std::pair<const char*, int64_t>> expect;
  const char* written = nullptr;  // how the config writes back, when an axis was appended since
};

TEST_CASE("params written with the old axis names read back by the new names") {
  const std::vector<OldParams> cases = {
      // old: tb_m, tb_n, tb_k, thread_m, thread_n, vec, stages[, split_k]
      {"TunaIgemmFwd", "128,64,16,8,4,4,2",
       {{"TB_M", 128}, {"TB_N", 64}, {"TB_K", 16}, {"THREAD_M", 8}, {"THREAD_N", 4}, {"VEC_K", 4}, {"STAGES", 2}}},
      {"TunaIgemmBwd", "64,16,16,4,1,1,2",  // fp32_all.log 01B
       {{"TB_M", 64}, {"TB_N", 16}, {"TB_K", 16}, {"THREAD_M", 4}, {"THREAD_N", 1}, {"VEC_K", 1}, {"STAGES", 2}}},
      {"TunaIgemmWrw", "64,64,16,4,4,4,2,64",  // fp32_all.log 01W
       {{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 16}, {"THREAD_M", 4}, {"THREAD_N", 4}, {"VEC_K", 4}, {"STAGES", 2},
        {"SPLIT_K", 64}}},
      // old: tb_h, tb_w, tb_k (output channels), tb_c (input channels), thread_k
      {"TunaDirectTiledFwd", "8,16,16,4,2",
       {{"TB_OH", 8}, {"TB_OW", 16}, {"TB_OC", 16}, {"TB_IC", 4}, {"THREAD_OC", 2}}},
      // old: tb_m, tb_n, warp_m, warp_n, stages (fp16_fwd.log)
      {"TunaFastTcFwd", "128,128,64,32,3", {{"TB_M", 128}, {"TB_N", 128}, {"WARP_M", 64}, {"WARP_N", 32}, {"STAGES", 3}}},
      // old: tb_m (output channels), tb_n (pixels), tb_k, stages (fp32_all.log 01F): the GEMM is
      // now named like the other forward solvers, so channels are TB_N and pixels TB_M.
      {"TunaFastSimtFwd", "64,128,8,3", {{"TB_N", 64}, {"TB_M", 128}, {"TB_K", 8}, {"STAGES", 3}}},
      {"TunaFastSimtBwd", "64,128,8,3", {{"TB_N", 64}, {"TB_M", 128}, {"TB_K", 8}, {"STAGES", 3}}},  // its axes
      {"TunaWinogradF2x3", "64,128,8,3", {{"TB_N", 64}, {"TB_M", 128}, {"TB_K", 8}, {"STAGES", 3}}},  // its GEMM's
      {"TunaWinogradF4x3", "64,128,8,3", {{"TB_N", 64}, {"TB_M", 128}, {"TB_K", 8}, {"STAGES", 3}}},  // new; its GEMM's
      {"TunaWinogradWrw", "128,64,8,3,4", {{"TB_M", 128}, {"TB_N", 64}, {"TB_K", 8}, {"STAGES", 3}, {"SPLIT_K", 4}}},
      {"TunaHopperWrw", "128,128,2,4,16",
       {{"TB_M", 128}, {"TB_N", 128}, {"WG_M", 2}, {"STAGES", 4}, {"SPLIT_K", 16}}},
      // TB_M, TB_N, WG_M, STAGES, SPLIT_K, CLUSTER_N (dilated_bf16_wrw_tma.json); STREAM_K appended
      // later: params stored without it read as 0
      {"TunaHopperTmaWrw", "256,128,2,4,7,1",
       {{"TB_M", 256}, {"TB_N", 128}, {"WG_M", 2}, {"STAGES", 4}, {"SPLIT_K", 7}, {"CLUSTER_N", 1}, {"STREAM_K", 0}},
       "256,128,2,4,7,1,0"},
      {"TunaHopperTmaWrw", "256,128,2,4,1,1,1",
       {{"TB_M", 256}, {"TB_N", 128}, {"WG_M", 2}, {"STAGES", 4}, {"SPLIT_K", 1}, {"CLUSTER_N", 1}, {"STREAM_K", 1}}},
      {"TunaFastSimtWrw", "128,64,8,3,16", {{"TB_M", 128}, {"TB_N", 64}, {"TB_K", 8}, {"STAGES", 3}, {"SPLIT_K", 16}}},
      // TB_M, TB_N, WG_M, STAGES, SPLIT_K (unchanged; hopper_fp16_fwd.log)
      {"TunaHopperFwd", "128,256,2,4,1", {{"TB_M", 128}, {"TB_N", 256}, {"WG_M", 2}, {"STAGES", 4}, {"SPLIT_K", 1}}},
      // TB_M, TB_N, WG_M, STAGES (new with these names; hopper_fp16_fwd.json, hopper_fp16_bwd.json)
      // PINGPONG appended later: params stored without it read as 0 (cooperative warpgroups);
      // TB_K after it: params stored without it read as 64 (one 128-byte swizzle row per k-tile);
      // SPLIT_K last: params stored without it read as 1
      {"TunaHopperTmaFwd", "128,256,2,4",
       {{"TB_M", 128}, {"TB_N", 256}, {"WG_M", 2}, {"STAGES", 4}, {"PINGPONG", 0}, {"TB_K", 64}, {"FIX_SIZES", 0}, {"SPLIT_K", 1}},
       "128,256,2,4,0,64,0,1"},
      {"TunaHopperTmaBwd", "256,64,2,5",
       {{"TB_M", 256}, {"TB_N", 64}, {"WG_M", 2}, {"STAGES", 5}, {"PINGPONG", 0}, {"TB_K", 64}, {"FIX_SIZES", 0}, {"SPLIT_K", 1}},
       "256,64,2,5,0,64,0,1"},
      // with PINGPONG (inception_v3_fp16_fwd.log 03F), without TB_K
      {"TunaHopperTmaFwd", "256,64,1,4,1",
       {{"TB_M", 256}, {"TB_N", 64}, {"WG_M", 1}, {"STAGES", 4}, {"PINGPONG", 1}, {"TB_K", 64}, {"FIX_SIZES", 0}, {"SPLIT_K", 1}},
       "256,64,1,4,1,64,0,1"},
      // TB_K 32 and TB_N 32 (new: the thin Inception-v3 layers), without FIX_SIZES
      {"TunaHopperTmaFwd", "128,32,1,8,0,32",
       {{"TB_M", 128}, {"TB_N", 32}, {"WG_M", 1}, {"STAGES", 8}, {"PINGPONG", 0}, {"TB_K", 32}, {"FIX_SIZES", 0}, {"SPLIT_K", 1}},
       "128,32,1,8,0,32,0,1"},
      // FIX_SIZES 1 (new: the finishing step's build for one problem)
      {"TunaHopperTmaFwd", "128,128,1,6,0,64,1",
       {{"TB_M", 128}, {"TB_N", 128}, {"WG_M", 1}, {"STAGES", 6}, {"PINGPONG", 0}, {"TB_K", 64}, {"FIX_SIZES", 1}, {"SPLIT_K", 1}},
       "128,128,1,6,0,64,1,1"},
      // SPLIT_K 2 (new: two blocks of a cluster share each tile's k-tiles; older params read as 1)
      {"TunaHopperTmaFwd", "128,128,2,5,0,64,0,2",
       {{"TB_M", 128}, {"TB_N", 128}, {"WG_M", 2}, {"STAGES", 5}, {"PINGPONG", 0}, {"TB_K", 64}, {"FIX_SIZES", 0}, {"SPLIT_K", 2}}},
      // THREAD_H, THREAD_W, THREAD_C, STEPS_H, TB_THREADS / THREAD_H, THREAD_W, THREAD_C, TB_CV, TB_THREADS, SPLIT (new)
      {"TunaDepthwiseFwd", "2,2,8,4,128",
       {{"THREAD_H", 2}, {"THREAD_W", 2}, {"THREAD_C", 8}, {"STEPS_H", 4}, {"TB_THREADS", 128}}},
      {"TunaDepthwiseBwd", "2,2,8,4,128",
       {{"THREAD_H", 2}, {"THREAD_W", 2}, {"THREAD_C", 8}, {"STEPS_H", 4}, {"TB_THREADS", 128}}},
      {"TunaDepthwiseWrw", "2,2,8,16,256,4",
       {{"THREAD_H", 2}, {"THREAD_W", 2}, {"THREAD_C", 8}, {"TB_CV", 16}, {"TB_THREADS", 256}, {"SPLIT", 4}}},
      {"TunaThinBwd", "4,4,32,128", {{"THREAD_H", 4}, {"THREAD_W", 4}, {"K_CHUNK", 32}, {"TB_THREADS", 128}}},
      // TB_H, TB_W, TB_K, K_PER_THREAD, PIX (new; the Inception-v3 stem's default)
      // UNROLL_R appended later: params stored without it read as 0 (the same tile, the filter
      // rows a loop); 1 is the finishing step's build (the rows unrolled)
      {"TunaSmallCFwd", "8,16,32,8,4",
       {{"TB_H", 8}, {"TB_W", 16}, {"TB_K", 32}, {"K_PER_THREAD", 8}, {"PIX", 4}, {"UNROLL_R", 0}}, "8,16,32,8,4,0"},
      {"TunaSmallCFwd", "8,16,32,8,4,1",
       {{"TB_H", 8}, {"TB_W", 16}, {"TB_K", 32}, {"K_PER_THREAD", 8}, {"PIX", 4}, {"UNROLL_R", 1}}},
      // TB_H, TB_W, TB_N, WARP_M, WARP_N, A_PAIRS (new; the ResNet-50 stem's default)
      {"TunaSmallCTcFwd", "8,32,64,64,32,1",
       {{"TB_H", 8}, {"TB_W", 32}, {"TB_N", 64}, {"WARP_M", 64}, {"WARP_N", 32}, {"A_PAIRS", 1}}},
      // TB_M, TILE_W, WG_M, PINGPONG (new; the halo kernel's default on Inception-v3's C = 32 layers)
      {"TunaHopperHaloFwd", "256,8,2,0", {{"TB_M", 256}, {"TILE_W", 8}, {"WG_M", 2}, {"PINGPONG", 0}}},
      // TB_M, WG_M, STAGES, SPLIT_K, TILE_W (new with these names; a device run's winner, 2026-12-05)
      {"TunaHopperHaloWrw", "64,1,8,43,8", {{"TB_M", 64}, {"WG_M", 1}, {"STAGES", 8}, {"SPLIT_K", 43}, {"TILE_W", 8}}},
      // TB_M, TB_N, TB_K, WARP_M, WARP_N, STAGES (new with these names; MFMA, gfx908/gfx90a)
      {"TunaMfmaFwd", "128,128,32,64,64,2",
       {{"TB_M", 128}, {"TB_N", 128}, {"TB_K", 32}, {"WARP_M", 64}, {"WARP_N", 64}, {"STAGES", 2}}},
      // The 3-D TMA solvers: the 2-D ones' axes (x_r3d18_n8_fp16_{fwd,bwd,wrw}.log, H100, 2026-12-05)
      {"TunaHopperTmaFwd3d", "128,64,1,6,1,64,0,1",
       {{"TB_M", 128}, {"TB_N", 64}, {"WG_M", 1}, {"STAGES", 6}, {"PINGPONG", 1}, {"TB_K", 64}, {"FIX_SIZES", 0}, {"SPLIT_K", 1}}},
      {"TunaHopperTmaBwd3d", "128,128,1,4,0,64,0,1",
       {{"TB_M", 128}, {"TB_N", 128}, {"WG_M", 1}, {"STAGES", 4}, {"PINGPONG", 0}, {"TB_K", 64}, {"FIX_SIZES", 0}, {"SPLIT_K", 1}}},
      {"TunaHopperTmaWrw3d", "64,256,1,5,56,1,0",
       {{"TB_M", 64}, {"TB_N", 256}, {"WG_M", 1}, {"STAGES", 5}, {"SPLIT_K", 56}, {"CLUSTER_N", 1}, {"STREAM_K", 0}}},
      // old: tile_m, tile_n, tile_k, micro_m, micro_n, split_k (cpu_gemm_test)
      {"TunaCpuGemmConv", "8,64,8,4,8,4",
       {{"TB_M", 8}, {"TB_N", 64}, {"TB_K", 8}, {"THREAD_M", 4}, {"THREAD_N", 8}, {"SPLIT_K", 4}}},
  };
  const solver::SolverList all = AllTunable();
  std::set<std::string> seen;
  for (const OldParams& old : cases) {
    INFO(old.solver << " '" << old.params << "'");
    const Solver& s = ByName(all, old.solver);
    const bool cpu = std::string_view(old.solver) == "TunaCpuGemmConv";
    const SearchSpace space = s.Space(Arch(cpu ? "cpu-avx2" : "sm_90"), Problem{});
    absl::StatusOr<PerfConfig> parsed = space.Parse(old.params);
    REQUIRE(parsed.ok());
    REQUIRE(space.axes().size() == old.expect.size());
    for (const auto& [name, value] : old.expect) {
      INFO(name);
      CHECK(space.Value(*parsed, name) == value);
    }
    std::vector<std::pair<std::string_view, int64_t>> named(old.expect.begin(), old.expect.end());
    CHECK(space.Make(named) == *parsed);
    CHECK(parsed->ToString() == (old.written != nullptr ? old.written : old.params));  // written back unchanged
    seen.insert(old.solver);
  }
  for (const auto& [id, s] : all) {  // every tunable solver (an adapter's params are its inner solver's)
    if (dynamic_cast<const solver::TensorMoveAdapter*>(s.get()) == nullptr) CHECK(seen.count(std::string(s->Name())) == 1);
  }
}

TEST_CASE("every -D a tunable solver emits is read by its kernel; every kernel axis is emitted") {
  solver::SolverList all = AllTunable();
  for (auto& entry : solver::CandidateGpuSolvers()) all.push_back(std::move(entry));  // they never wrote params
  std::vector<Problem> problems;
  for (int layer : {2, 5}) {
    for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      problems.push_back(testing::With(testing::ResNet50Layers()[layer], dir, DataType::kFp32, Layout::kNCHW));
      problems.push_back(testing::With(testing::ResNet50Layers()[layer], dir, DataType::kFp16, Layout::kNHWC));
      problems.push_back(testing::With(testing::ResNet50Layers()[layer], dir, DataType::kFp16, Layout::kNCHW));
      problems.push_back(testing::With(testing::ResNet50Layers()[layer], dir, DataType::kFp32, Layout::kNHWC));  // *Nhwc
    }
  }
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    Problem dw = testing::ResNet50Layers()[2];  // 3x3: made depthwise (groups = C = K)
    dw.k = dw.c;
    dw.groups = dw.c;
    problems.push_back(testing::With(dw, dir, DataType::kFp16, Layout::kNHWC));
  }
  for (Direction dir : {Direction::kForward, Direction::kBackwardData}) {  // the stem (C = 3)
    problems.push_back(testing::With(testing::ResNet50Layers()[0], dir, DataType::kFp32, Layout::kNCHW));
  }
  problems.push_back(testing::With(testing::ResNet50Layers()[0], Direction::kForward, DataType::kFp16, Layout::kNHWC));
  {  // a 3-D layer in all three directions (TunaHopperTma{Fwd,Bwd,Wrw}3d), then as FP32 NCDHW 1x3x3
    Problem p3 = testing::With(testing::ResNet50Layers()[2], Direction::kForward, DataType::kFp16, Layout::kNHWC);
    p3.spatial_dims = 3;
    p3.in = {4, 14, 14};
    p3.fil = {3, 3, 3};
    p3.pad = {1, 1, 1};
    p3.in_layout = p3.fil_layout = p3.out_layout = Layout::kNDHWC;
    problems.push_back(p3);
    p3.direction = Direction::kBackwardData;  // TunaHopperTmaBwd3d
    problems.push_back(p3);
    p3.direction = Direction::kBackwardWeights;  // TunaHopperTmaWrw3d
    problems.push_back(p3);
    Problem ncdhw = p3;  // the same as NCDHW in every direction (TunaHopperTma{Fwd,Bwd,Wrw}3dNchw)
    ncdhw.in_layout = ncdhw.fil_layout = ncdhw.out_layout = Layout::kNCDHW;
    for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      ncdhw.direction = dir;
      problems.push_back(ncdhw);
    }
    Problem proj = p3;  // a stride-2 1x1x1 projection: FP32 NCDHW and FP16 NDHWC (the *Strided adapters)
    proj.fil = {1, 1, 1}, proj.pad = {0, 0, 0}, proj.stride = {2, 2, 2};
    for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      proj.direction = dir;
      proj.data_type = DataType::kFp16;
      proj.in_layout = proj.fil_layout = proj.out_layout = Layout::kNDHWC;
      problems.push_back(proj);
      proj.data_type = DataType::kFp32;
      proj.in_layout = proj.fil_layout = proj.out_layout = Layout::kNCDHW;
      problems.push_back(proj);
    }
    p3.fil = {1, 3, 3};  // FP32 NCDHW 1x3x3 in every direction (the *Ncdhw depth-as-batch solvers)
    p3.pad = {0, 1, 1};
    p3.data_type = DataType::kFp32;
    p3.in_layout = p3.fil_layout = p3.out_layout = Layout::kNCDHW;
    for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      p3.direction = dir;
      problems.push_back(p3);
    }
  }
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    // C or K off 16-byte rows (TunaHopperTma*Pad): padded to 104 (TB_K 64) and to 24 (TB_K 32).
    for (auto [c, k] : {std::pair{100, 64}, std::pair{64, 100}, std::pair{20, 64}, std::pair{64, 20}}) {
      Problem odd = testing::With(testing::ResNet50Layers()[2], dir, DataType::kFp16, Layout::kNHWC);
      odd.c = c, odd.k = k;
      problems.push_back(odd);
    }
  }
  std::set<std::string> checked;
  for (const auto& [id, s] : all) {
    for (const std::string arch : {"sm_90", "gfx90a", "cpu-avx2"}) {  // gfx90a: TunaMfmaFwd
      const Target target = Arch(arch);
      for (const Problem& p : problems) {
        if (!s->IsApplicable(target, p).ok()) continue;
        INFO(s->Name() << " on " << arch << ": " << DirectionName(p.direction) << " " << DataTypeName(p.data_type));
        const SearchSpace space = s->Space(target, p);
        const PerfConfig config = s->DefaultConfig(target, p);
        absl::StatusOr<solver::Solution> sol = s->GetSolution(target, p, config);
        REQUIRE(sol.ok());
        const solver::KernelBuild& build = sol->kernels.at(0);
        // The default's build and, where the solver offers one, the finishing step's.
        std::vector<solver::KernelBuild> builds = {build};
        if (const std::optional<PerfConfig> spec = s->Specialize(target, p, config)) {
          absl::StatusOr<solver::Solution> special = s->GetSolution(target, p, *spec);
          REQUIRE(special.ok());
          builds.push_back(special->kernels.at(0));
          CHECK(builds.back().options != build.options);
        }
        for (const solver::KernelBuild& b : builds) {
          const char* source = kernels::FindSource(b.source);
          REQUIRE(source != nullptr);
          for (const std::string& option : b.options) {
            if (option.rfind("-D", 0) != 0) continue;
            const std::string name = option.substr(2, option.find('=') - 2);
            INFO(option);
            bool read = ReadsMacro(source, name);
            for (const kernels::KernelSourceFile& f : kernels::AllSources()) {  // or an included header
              if (f.path != nullptr && std::string_view(f.path).ends_with(".h")) read = read || ReadsMacro(f.text, name);
            }
            CHECK(read);
          }
        }
        for (const solver::ParamAxis& axis : space.axes()) {
          INFO(axis.name);
          const int64_t value = space.Value(config, axis.name);
          const std::string define = "-D" + axis.name + "=" + std::to_string(value);
          const bool emitted = std::find(build.options.begin(), build.options.end(), define) != build.options.end();
          // A solver axis appended later (with an `absent` value) may reach the kernel as a derived
          // option at its other values only, so builds at the old value keep their options and keys
          // (TunaHopperTma*'s TB_K 32, STREAM_K 1).
          const bool derived = axis.use == AxisUse::kSolver && axis.absent.has_value() && value != *axis.absent;
          if (axis.use == AxisUse::kDefine) {
            CHECK(emitted);
          } else if (!derived) {
            CHECK_FALSE(emitted);
          }
          CHECK(axis.name == [&] {  // UPPER_CASE
            std::string u = axis.name;
            for (char& ch : u) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
            return u;
          }());
        }
        checked.insert(std::string(s->Name()));
      }
    }
  }
  for (const auto& [id, s] : all) CHECK(checked.count(std::string(s->Name())) == 1);
}

}  // namespace
}  // namespace tuna
