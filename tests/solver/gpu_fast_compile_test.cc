// The fast CUDA solvers (TunaFastTcFwd 1010, TunaFastSimtFwd 1011, TunaFastSimtBwd 1015, TunaFastSimtWrw 1016, TunaWinogradF2x3 1017, TunaWinogradWrw 1018, TunaWinogradF4x3 1027): planning
// checks that need no compiler (applicability incl. HIP, default configs valid on all 23
// ResNet-50 layers, pruning, the backward sub-pixel phases), and NVRTC compiles for sm_90 of
// every valid config of representative layers (skipped with a message where NVRTC is missing).
#include <algorithm>
#include <cstdio>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"
#include "tuner_core/solver/conv/gpu_fast_simt_wrw.h"
#include "tuner_core/solver/conv/gpu_winograd.h"
#include "tuner_core/solver/conv/gpu_winograd_wrw.h"
#include "tuner_core/solver/conv/gpu_fast_tc.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

using testing::AllValid;

TEST_CASE("fast solvers: applicability and default configs on ResNet-50", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<Target> sm75 = solver::TargetForArch("sm_75");
  absl::StatusOr<Target> gfx = solver::TargetForArch("gfx90a");
  REQUIRE(sm90.ok());
  REQUIRE(sm75.ok());
  REQUIRE(gfx.ok());
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  solver::FastTcFwdSolver tc;
  solver::FastSimtFwdSolver simt;
  solver::FastSimtBwdSolver simt_bwd;
  solver::FastSimtWrwSolver simt_wrw;
  solver::WinogradF2x3Solver wino;
  solver::WinogradWrwSolver wino_wrw;
  // The HMMA tile is searched briefly where the wgmma family applies (sm_90), fully before it.
  CHECK(tc.IsGeneric(*sm90, layers[1]));
  CHECK_FALSE(tc.IsGeneric(*sm75, layers[1]));
  CHECK_FALSE(simt.IsGeneric(*sm90, layers[1]));
  for (const Problem& b : layers) {
    const Problem fb = testing::With(b, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW);
    REQUIRE(simt_bwd.IsApplicable(*sm90, fb).ok());
    CHECK(simt_bwd.IsValid(*sm90, fb, simt_bwd.DefaultConfig(*sm90, fb)).ok());
    CHECK_FALSE(simt_bwd.IsApplicable(*gfx, fb).ok());
    const Problem fw = testing::With(b, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW);
    REQUIRE(simt_wrw.IsApplicable(*sm90, fw).ok());
    CHECK(simt_wrw.IsValid(*sm90, fw, simt_wrw.DefaultConfig(*sm90, fw)).ok());
    CHECK(AllValid(simt_wrw, *sm90, fw).size() >= 4);
    CHECK_FALSE(simt_wrw.IsApplicable(*sm90, fb).ok());
    // Winograd: exactly the 3x3 stride-1 layers, forward and backward data.
    const bool wino_shape = b.fil[1] == 3 && b.stride[1] == 1;
    const Problem ff = testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW);
    CHECK(wino.IsApplicable(*sm90, ff).ok() == wino_shape);
    CHECK(wino.IsApplicable(*sm90, fb).ok() == wino_shape);
    CHECK_FALSE(wino.IsApplicable(*sm90, fw).ok());
    CHECK(wino_wrw.IsApplicable(*sm90, fw).ok() == wino_shape);
    CHECK_FALSE(wino_wrw.IsApplicable(*sm90, ff).ok());
    if (wino_shape) CHECK(wino_wrw.IsValid(*sm90, fw, wino_wrw.DefaultConfig(*sm90, fw)).ok());
    if (wino_shape) {
      CHECK(wino.IsValid(*sm90, ff, wino.DefaultConfig(*sm90, ff)).ok());
      CHECK(wino.IsValid(*sm90, fb, wino.DefaultConfig(*sm90, fb)).ok());
    }
    CHECK_FALSE(simt_bwd.IsApplicable(*sm90, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW)).ok());
    const Problem h = testing::With(b, Direction::kForward, DataType::kFp16, Layout::kNHWC);
    const Problem bf = testing::With(b, Direction::kForward, DataType::kBf16, Layout::kNHWC);
    const Problem f = testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW);
    INFO(h.Canonical());
    REQUIRE(tc.IsApplicable(*sm90, h).ok());
    REQUIRE(tc.IsApplicable(*sm90, bf).ok());
    REQUIRE(simt.IsApplicable(*sm90, f).ok());
    CHECK(tc.IsValid(*sm90, h, tc.DefaultConfig(*sm90, h)).ok());
    CHECK(simt.IsValid(*sm90, f, simt.DefaultConfig(*sm90, f)).ok());
    CHECK(AllValid(tc, *sm90, h).size() >= 4);
    CHECK(AllValid(simt, *sm90, f).size() >= 4);
    // Wrong type/layout, HIP and pre-Ampere targets are refused with a reason.
    CHECK_FALSE(tc.IsApplicable(*sm90, f).ok());
    CHECK_FALSE(simt.IsApplicable(*sm90, h).ok());
    CHECK_FALSE(tc.IsApplicable(*gfx, h).ok());
    CHECK_FALSE(simt.IsApplicable(*gfx, f).ok());
    CHECK_FALSE(tc.IsApplicable(*sm75, h).ok());
    CHECK_FALSE(tc.IsApplicable(*sm90, testing::With(b, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC)).ok());
    CHECK_FALSE(simt.IsApplicable(*sm90, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNHWC)).ok());
  }
  // Shared-memory pruning: 256x256 with 4 stages (160 KiB) fits sm_90's 227 KiB, not 48 KiB.
  Problem big = testing::With(layers[1], Direction::kForward, DataType::kFp16, Layout::kNHWC);
  big.k = 1024;
  Target small = *sm90;
  small.max_shared_bytes_per_block = 48 * 1024;
  PerfConfig c;
  c.values = {256, 256, 64, 64, 4};  // 16 warps: too many threads, whatever the memory
  CHECK_FALSE(tc.IsValid(*sm90, big, c).ok());
  c.values = {128, 256, 64, 64, 4};  // 8 warps, 120 KiB
  CHECK(tc.IsValid(*sm90, big, c).ok());
  CHECK_FALSE(tc.IsValid(small, big, c).ok());
  CHECK(solver::FastTcFwdSolver::SharedBytes(128, 256, 4) == 4u * 384 * 80);
}

TEST_CASE("fast SIMT backward data: sub-pixel phases partition the taps and the dx rows", "[solver]") {
  // For every stride / filter / padding: each tap lands in exactly one phase, each dx row / column
  // in exactly one phase, and each phase's padding maps its first row to the right dy row.
  for (int64_t stride = 1; stride <= 4; ++stride) {
    for (int64_t fil = 1; fil <= 7; ++fil) {
      for (int64_t pad = 0; pad <= fil + 1; ++pad) {
        Problem p;
        p.direction = Direction::kBackwardData;
        p.n = 1, p.c = 3, p.k = 2;
        p.in = {1, 13, 1};
        p.fil = {1, fil, 1};
        p.pad = {0, pad, 0};
        p.stride = {1, stride, 1};
        if (p.Out()[1] < 1) continue;
        const solver::fast_simt::Plan plan = solver::fast_simt::BackwardDataPlan(p);
        INFO("stride " << stride << " filter " << fil << " pad " << pad);
        REQUIRE(static_cast<int64_t>(plan.phases.size()) == stride);
        int64_t taps = 0, rows = 0;
        for (const auto& ph : plan.phases) {
          CHECK(ph.w_offset == taps * p.k * p.c);
          taps += ph.taps_h;
          rows += ph.rows;
          // dx row out_a (i = 0) takes dy row ho = -pad_h + t from reversed tap t, i.e. filter tap
          // r = (out_a + pad - ho * stride): the first tap of the phase must satisfy that.
          if (ph.taps_h > 0) {
            const int64_t ho = -ph.pad_h + (ph.taps_h - 1);  // reversed tap taps_h - 1 = original tap r0
            const int64_t r = ph.out_a + pad - ho * stride;
            CHECK(r >= 0);
            CHECK(r < stride);
            CHECK((ph.out_a + pad - r) % stride == 0);
          }
        }
        CHECK(taps == fil);
        CHECK(rows == 13);
      }
    }
  }
}

TEST_CASE("fast SIMT: filter taps beyond 1x1 are run-time arguments, one build for every filter", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  std::vector<Problem> layers = testing::ResNet50Layers();
  solver::FastSimtFwdSolver simt;
  solver::FastSimtBwdSolver simt_bwd;
  solver::FastSimtWrwSolver simt_wrw;
  auto options = [&](const solver::Solver& s, const Problem& p, const PerfConfig& c) {
    absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, p, c);
    REQUIRE(sol.ok());
    std::vector<std::vector<std::string>> out;
    for (const auto& k : sol->kernels) out.push_back(k.options);
    return out;
  };
  auto has = [](const std::vector<std::string>& o, const char* opt) { return std::count(o.begin(), o.end(), opt) == 1; };
  const Problem stem = testing::With(layers[0], Direction::kForward, DataType::kFp32, Layout::kNCHW);
  const Problem l3x3 = testing::With(layers[2], Direction::kForward, DataType::kFp32, Layout::kNCHW);
  const Problem l1x1 = testing::With(layers[1], Direction::kForward, DataType::kFp32, Layout::kNCHW);
  // One build serves the 7x7 and the 3x3 filter with the same tile; 1x1 stays compiled in.
  const PerfConfig c = simt.Space(*sm90, l3x3).Make({{"TB_N", 64}, {"TB_M", 64}, {"TB_K", 8}, {"STAGES", 3}});
  REQUIRE(simt.IsValid(*sm90, stem, c).ok());
  REQUIRE(simt.IsValid(*sm90, l3x3, c).ok());
  CHECK(options(simt, stem, c) == options(simt, l3x3, c));
  CHECK(has(options(simt, l3x3, c).at(0), "-DTUNA_FR=0"));
  CHECK(has(options(simt, l1x1, c).at(0), "-DTUNA_FR=1"));
  CHECK_FALSE(simt.Specialize(*sm90, l3x3, c).has_value());  // compiling the taps in did not pay
  // Backward data, 3x3 stride 2: phases of 2x2, 2x1, 1x2 and 1x1 taps take two builds (run-time
  // taps and 1x1), where one per phase filter was compiled before.
  const Problem bwd = testing::With(layers[6], Direction::kBackwardData, DataType::kFp32, Layout::kNCHW);
  const PerfConfig d = simt_bwd.DefaultConfig(*sm90, bwd);
  CHECK(options(simt_bwd, bwd, d).size() == 2u);
  absl::StatusOr<solver::Solution> sol = simt_bwd.GetSolution(*sm90, bwd, d);
  REQUIRE(sol.ok());
  for (const solver::Launch& l : sol->launches) {
    if (l.entry != "tuna_fast_simt_fwd") continue;
    // The taps after the 19 sizes: R*S, S and their magic numbers (mul 0 for a divisor of 1).
    const int64_t rs = l.args[4 + 19].i, taps_s = l.args[4 + 20].i;
    CHECK(rs >= 1);
    CHECK(taps_s >= 1);
    CHECK((l.args[4 + 21].i == 0) == (rs == 1));
    CHECK((l.args[4 + 23].i == 0) == (taps_s == 1));
  }
  // Backward weights: the taps split once per thread, at run time beyond 1x1.
  const Problem wrw = testing::With(layers[0], Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW);
  CHECK(has(options(simt_wrw, wrw, simt_wrw.DefaultConfig(*sm90, wrw)).at(0), "-DTUNA_FR=0"));
  CHECK_FALSE(simt_wrw.Specialize(*sm90, wrw, simt_wrw.DefaultConfig(*sm90, wrw)).has_value());
}

TEST_CASE("fast solvers: every valid config compiles with NVRTC for sm_90", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  solver::FastTcFwdSolver tc;
  solver::FastSimtFwdSolver simt;
  solver::FastSimtBwdSolver simt_bwd;
  solver::FastSimtWrwSolver simt_wrw;
  solver::WinogradF2x3Solver wino;
  solver::WinogradWrwSolver wino_wrw;
  std::set<std::string> done;
  int builds = 0;
  auto compile_all = [&](const solver::Solver& s, const Problem& p, bool every_config) {
    std::vector<PerfConfig> configs = every_config ? AllValid(s, *target, p) : std::vector<PerfConfig>{
                                                                                   s.DefaultConfig(*target, p)};
    // The finishing step's build of the default, where the solver offers one.
    if (std::optional<PerfConfig> spec = s.Specialize(*target, p, s.DefaultConfig(*target, p))) configs.push_back(*spec);
    for (const PerfConfig& c : configs) {
      absl::StatusOr<solver::Solution> sol = s.GetSolution(*target, p, c);
      INFO(s.Name() << " " << p.Canonical() << " params " << c.ToString());
      REQUIRE(sol.ok());
      std::string key;
      for (const auto& k : sol->kernels) {
        for (const auto& o : k.options) key += o + " ";
        key += "| ";
      }
      if (!done.insert(key).second) continue;
      absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*be, *sol, target->arch);
      if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 4000).c_str());
      REQUIRE(code.ok());
      ++builds;
    }
  };
  // conv1 (C = 3: gather path, 7x7) and a 3x3 layer (vector path) in FP16, every config;
  // BF16 and the SIMT solver on 1x1 (vector B), 3x3 and 7x7 layers.
  compile_all(tc, testing::With(layers[0], Direction::kForward, DataType::kFp16, Layout::kNHWC), false);
  compile_all(tc, testing::With(layers[2], Direction::kForward, DataType::kFp16, Layout::kNHWC), true);
  compile_all(tc, testing::With(layers[2], Direction::kForward, DataType::kBf16, Layout::kNHWC), false);
  for (int i : {0, 1, 2}) {
    compile_all(simt, testing::With(layers[i], Direction::kForward, DataType::kFp32, Layout::kNCHW), i == 2);
  }
  // Backward data: 1x1 stride 2 (one phase with a tap, three empty), 3x3 stride 2 (four phase
  // filters), 3x3 stride 1, every config of the last.
  for (int i : {8, 6, 2}) {
    compile_all(simt_bwd, testing::With(layers[i], Direction::kBackwardData, DataType::kFp32, Layout::kNCHW), i == 2);
  }
  // Backward weights: default configs of a 1x1, a 3x3 stride 2 and the stem (the GPU test runs random ones).
  for (int i : {1, 6, 0}) {
    compile_all(simt_wrw, testing::With(layers[i], Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW), false);
  }
  // Winograd F(2x2, 3x3): forward and backward data of a 3x3 stride-1 layer.
  compile_all(wino, testing::With(layers[2], Direction::kForward, DataType::kFp32, Layout::kNCHW), false);
  compile_all(wino, testing::With(layers[10], Direction::kBackwardData, DataType::kFp32, Layout::kNCHW), false);
  compile_all(wino_wrw, testing::With(layers[10], Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW), false);
  std::printf("%d distinct builds compiled for sm_90\n", builds);
  CHECK(builds >= 28);
}

TEST_CASE("Winograd F(4x4): applicability, spaces and plans next to F(2x2); NVRTC builds for sm_80 and sm_90",
          "[solver][nvrtc]") {
  const solver::RegisteredSolver* registered = solver::SolverRegistry::Builtin().ById(1027);
  REQUIRE(registered != nullptr);
  CHECK(registered->solver->Name() == "TunaWinogradF4x3");
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<Target> sm80 = solver::TargetForArch("sm_80");
  absl::StatusOr<Target> gfx = solver::TargetForArch("gfx90a");
  REQUIRE(sm90.ok());
  REQUIRE(sm80.ok());
  REQUIRE(gfx.ok());
  solver::WinogradF2x3Solver wino2;
  solver::WinogradF4x3Solver wino4;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  int wino_layers = 0;
  for (const Problem& b : layers) {
    const bool shape = b.fil[1] == 3 && b.stride[1] == 1;
    wino_layers += shape ? 1 : 0;
    for (Direction d : {Direction::kForward, Direction::kBackwardData}) {
      const Problem p = testing::With(b, d, DataType::kFp32, Layout::kNCHW);
      INFO(p.Canonical());
      CHECK(wino4.IsApplicable(*sm90, p).ok() == shape);
      CHECK_FALSE(wino4.IsApplicable(*gfx, p).ok());
      if (!shape) continue;
      // The same GEMM axes as F(2x2); every listed point valid builds a plan of 36 GEMMs.
      CHECK(wino4.Space(*sm90, p).axes().size() == wino2.Space(*sm90, p).axes().size());
      const std::vector<PerfConfig> valid = AllValid(wino4, *sm90, p);
      CHECK(valid.size() >= 4);
      CHECK(wino4.IsValid(*sm90, p, wino4.DefaultConfig(*sm90, p)).ok());
      for (const PerfConfig& c : valid) {
        absl::StatusOr<solver::Solution> sol = wino4.GetSolution(*sm90, p, c);
        REQUIRE(sol.ok());
        REQUIRE(sol->launches.size() == 4);
        CHECK(sol->launches[2].grid.z == 36);
        CHECK(sol->kernels.back().source == "conv/winograd_f4x3.cu");
      }
    }
    CHECK_FALSE(wino4.IsApplicable(*sm90, testing::With(b, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW)).ok());
  }
  CHECK(wino_layers == 4);
  // Workspace: 36 * (K*C + C*T4 + K*T4) floats, T4 = N * ceil(Ho/4) * ceil(Wo/4) rounded to 4.
  auto layer7 = std::find_if(layers.begin(), layers.end(),
                             [](const Problem& b) { return b.fil[1] == 3 && b.stride[1] == 1 && b.in[1] == 7; });
  REQUIRE(layer7 != layers.end());
  const Problem p7 = testing::With(*layer7, Direction::kForward, DataType::kFp32, Layout::kNCHW);
  const int64_t t4 = (p7.n * 2 * 2 + 3) / 4 * 4;
  CHECK(wino4.GetSolution(*sm90, p7, wino4.DefaultConfig(*sm90, p7))->workspace_bytes ==
        uint64_t(36 * (p7.k * p7.c + p7.c * t4 + p7.k * t4) * 4));

  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  int builds = 0;
  for (const Target& t : {*sm80, *sm90}) {
    for (Direction d : {Direction::kForward, Direction::kBackwardData}) {
      const Problem p = testing::With(layers[10], d, DataType::kFp32, Layout::kNCHW);
      absl::StatusOr<solver::Solution> sol = wino4.GetSolution(t, p, wino4.DefaultConfig(t, p));
      REQUIRE(sol.ok());
      absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*be, *sol, t.arch);
      if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 4000).c_str());
      REQUIRE(code.ok());
      ++builds;
    }
  }
  std::printf("TunaWinogradF4x3: %d solutions built for sm_80 and sm_90\n", builds);
  CHECK(builds == 4);
}

}  // namespace
}  // namespace tuna
