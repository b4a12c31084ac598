// The fast CUDA forward solvers (TunaFastTcFwd 1010 in FP16 and BF16 NHWC, TunaFastSimtFwd 1011
// in FP32 NCHW) on all 23 ResNet-50 layers at batch 1: the default config plus 1 random valid
// config per layer (2 on the stem's gather path), each checked against the CPU reference on poisoned outputs,
// plus edge problems (odd sizes, C % 8 != 0, K odd, dilation, stride 3). Tagged "gpu": passes
// with a skip message where the CUDA driver, NVRTC or a device is missing.
#include <chrono>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"
#include "tuner_core/solver/conv/gpu_fast_tc.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

TEST_CASE("fast forward solvers match the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(80);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  solver::FastTcFwdSolver tc;
  solver::FastSimtFwdSolver simt;

  struct Case {
    const solver::Solver* s;
    Problem p;
    int randoms;
  };
  std::vector<Case> cases;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    Problem b = layers[i];
    b.n = 1;
    const int r = i == 0 ? 2 : 1;
    cases.push_back({&tc, testing::With(b, Direction::kForward, DataType::kFp16, Layout::kNHWC), r});
    cases.push_back({&simt, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW), r});
    if (i % 5 == 0) cases.push_back({&tc, testing::With(b, Direction::kForward, DataType::kBf16, Layout::kNHWC), 1});
  }
  for (Problem b : testing::EdgeProblems()) {
    if (b.spatial_dims != 2 || b.groups != 1) continue;
    b.k += 1;  // odd K: the epilogue's unpaired column
    cases.push_back({&tc, testing::With(b, Direction::kForward, DataType::kFp16, Layout::kNHWC), 1});
    cases.push_back({&simt, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW), 1});
  }

  std::mt19937_64 rng(99);
  testing::ConvChecker checker(*be, device, target);
  int runs = 0, failures = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const Case& c : cases) {
    const Problem& p = c.p;
    INFO(c.s->Name() << " " << p.Canonical());
    REQUIRE(c.s->IsApplicable(target, p).ok());
    std::vector<PerfConfig> configs = {c.s->DefaultConfig(target, p)};
    const solver::SearchSpace space = c.s->Space(target, p);
    for (int t = 0; t < 2000 && static_cast<int>(configs.size()) < 1 + c.randoms; ++t) {
      PerfConfig r = space.At(rng() % space.Size());
      if (c.s->IsValid(target, p, r).ok() && std::find(configs.begin(), configs.end(), r) == configs.end()) {
        configs.push_back(r);
      }
    }
    failures += checker.CheckAll(*c.s, p, configs);
    runs += static_cast<int>(configs.size());
  }
  std::printf("%d runs, %d failures, %.1f s\n", runs, failures,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  CHECK(runs >= 90);
  CHECK(failures == 0);
}

}  // namespace
}  // namespace tuna
