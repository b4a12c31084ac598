// The fast CUDA forward solvers (TunaFastTcFwd 1010, TunaFastSimtFwd 1011): planning checks that
// need no compiler (applicability incl. HIP, default configs valid on all 23 ResNet-50 layers,
// pruning), and NVRTC compiles for sm_90 of every valid config of representative layers
// (skipped with a message where NVRTC is missing).
#include <cstdio>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"
#include "tuner_core/solver/conv/gpu_fast_tc.h"
#include "tuner_core/solver/invoker.h"

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
  for (const Problem& b : layers) {
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

TEST_CASE("fast solvers: every valid config compiles with NVRTC for sm_90", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  if (absl::Status st = be->CompilerStatus(); !st.ok()) {
    WARN("skipping: NVRTC unavailable: " << st.message());
    return;
  }
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  solver::FastTcFwdSolver tc;
  solver::FastSimtFwdSolver simt;
  std::set<std::string> done;
  int builds = 0;
  auto compile_all = [&](const solver::Solver& s, const Problem& p, bool every_config) {
    std::vector<PerfConfig> configs = every_config ? AllValid(s, *target, p) : std::vector<PerfConfig>{
                                                                                   s.DefaultConfig(*target, p)};
    for (const PerfConfig& c : configs) {
      absl::StatusOr<solver::Solution> sol = s.GetSolution(*target, p, c);
      INFO(s.Name() << " " << p.Canonical() << " params " << c.ToString());
      REQUIRE(sol.ok());
      std::string key;
      for (const auto& o : sol->kernels[0].options) key += o + " ";
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
  std::printf("%d distinct builds compiled for sm_90\n", builds);
  CHECK(builds >= 10);
}

}  // namespace
}  // namespace tuna
