// The fast CUDA solvers (TunaFastTcFwd 1010 in FP16 and BF16 NHWC, TunaFastSimtFwd 1011 and
// TunaFastSimtBwd 1015, TunaFastSimtWrw 1016, TunaWinogradF2x3 1017, TunaWinogradWrw 1018,
// TunaWinogradF4x3 1027 in FP32 NCHW) on all 23 ResNet-50 layers at batch 1: the default config
// plus 1 random valid config per layer (2 on the stem's gather path) and the finishing step's
// build of the default where the solver offers one, each checked against the CPU
// reference on poisoned outputs, plus edge problems (odd sizes, C % 8 != 0, K odd, dilation,
// strides 2 and 3 with rows no tap reaches, asymmetric strides and filters, padding beyond the
// filter). Tagged "gpu": skips with a message where the CUDA driver, NVRTC or a device is missing.
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"
#include "tuner_core/solver/conv/gpu_fast_simt_wrw.h"
#include "tuner_core/solver/conv/gpu_winograd.h"
#include "tuner_core/solver/conv/gpu_winograd_wrw.h"
#include "tuner_core/solver/conv/gpu_fast_tc.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

struct Case {
  const solver::Solver* s;
  Problem p;
  int randoms;
};

// Winograd forward / backward data (`fb`: F(2x2) and F(4x4)) and backward weights (`wrw`) on odd
// sizes (tiles past the edge, partial 4x4 tiles), padding 0-2 (also unequal), C and K off every
// multiple, 1x1 and 2x2 images, and batches whose tiles cross images.
void AddWinogradEdgeCases(const Target& target, const std::vector<const solver::Solver*>& fb,
                          const solver::Solver& wrw, std::vector<Case>& cases) {
  for (const Problem& b : testing::WinogradEdgeProblems()) {
    for (Direction d : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
      const Problem q = testing::With(b, d, DataType::kFp32, Layout::kNCHW);
      std::vector<const solver::Solver*> solvers = fb;
      if (d == Direction::kBackwardWeights) solvers = {&wrw};
      for (const solver::Solver* s : solvers) {
        if (s->IsApplicable(target, q).ok()) cases.push_back({s, q, 1});
      }
    }
  }
}

TEST_CASE("fast solvers match the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(80);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  solver::FastTcFwdSolver tc;
  solver::FastSimtFwdSolver simt;
  solver::FastSimtBwdSolver simt_bwd;
  solver::FastSimtWrwSolver simt_wrw;
  solver::WinogradF2x3Solver wino;
  solver::WinogradF4x3Solver wino4;
  solver::WinogradWrwSolver wino_wrw;

  std::vector<Case> cases;
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    Problem b = layers[i];
    b.n = 1;
    const int r = i == 0 ? 2 : 1;
    cases.push_back({&tc, testing::With(b, Direction::kForward, DataType::kFp16, Layout::kNHWC), r});
    cases.push_back({&simt, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW), r});
    cases.push_back({&simt_bwd, testing::With(b, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW), 1});
    cases.push_back({&simt_wrw, testing::With(b, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW), 2});
    if (b.fil[1] == 3 && b.stride[1] == 1) {
      cases.push_back({&wino, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW), 2});
      cases.push_back({&wino, testing::With(b, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW), 2});
      cases.push_back({&wino4, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW), 2});
      cases.push_back({&wino4, testing::With(b, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW), 2});
      cases.push_back({&wino_wrw, testing::With(b, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW), 2});
    }
    if (i % 5 == 0) cases.push_back({&tc, testing::With(b, Direction::kForward, DataType::kBf16, Layout::kNHWC), 1});
  }
  for (Problem b : testing::EdgeProblems()) {
    if (b.spatial_dims != 2 || b.groups != 1) continue;
    b.k += 1;  // odd K: the epilogue's unpaired column
    cases.push_back({&tc, testing::With(b, Direction::kForward, DataType::kFp16, Layout::kNHWC), 1});
    cases.push_back({&simt, testing::With(b, Direction::kForward, DataType::kFp32, Layout::kNCHW), 1});
    const Problem bwd = testing::With(b, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW);
    if (simt_bwd.IsApplicable(target, bwd).ok()) cases.push_back({&simt_bwd, bwd, 2});
    cases.push_back({&simt_wrw, testing::With(b, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW), 2});
  }
  AddWinogradEdgeCases(target, {&wino, &wino4}, wino_wrw, cases);
  // Backward data beyond ResNet-50: asymmetric strides / filters / padding, padding past the
  // filter (phases whose rows start before dy), stride 4 with a 3-tap filter (empty phases).
  for (auto [h, w, fy, fx, ph, pw, sh, sw, dh, dw] : std::vector<std::array<int64_t, 10>>{
           {13, 10, 1, 7, 0, 3, 2, 1, 1, 1},
           {10, 13, 7, 1, 3, 0, 1, 2, 1, 1},
           {9, 11, 3, 3, 3, 0, 2, 3, 1, 1},
           {12, 12, 3, 3, 1, 1, 4, 4, 1, 1},
           {15, 9, 5, 3, 2, 1, 1, 2, 3, 1},
           {8, 8, 2, 2, 0, 0, 2, 2, 1, 1}}) {
    Problem b;
    b.n = 2, b.c = 5, b.k = 7;
    b.in = {1, h, w};
    b.fil = {1, fy, fx};
    b.pad = {0, ph, pw};
    b.stride = {1, sh, sw};
    b.dilation = {1, dh, dw};
    cases.push_back({&simt_bwd, testing::With(b, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW), 1});
    cases.push_back({&simt_wrw, testing::With(b, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW), 1});
  }

  // TUNA_TEST_ONLY=<substring>: only the cases of solvers whose name contains it (a device call
  // short of time re-checks the solvers it changed; the full run is the default).
  const char* only = std::getenv("TUNA_TEST_ONLY");
  if (only != nullptr && *only != '\0') {
    std::erase_if(cases, [&](const Case& c) { return std::string(c.s->Name()).find(only) == std::string::npos; });
    std::printf("TUNA_TEST_ONLY=%s: %zu cases\n", only, cases.size());
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
    // The finishing step's build of the default, where the solver offers one.
    if (std::optional<PerfConfig> spec = c.s->Specialize(target, p, configs.front())) configs.push_back(*spec);
    failures += checker.CheckAll(*c.s, p, configs);
    runs += static_cast<int>(configs.size());
  }
  std::printf("%d runs, %d failures, %.1f s\n", runs, failures,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  CHECK(runs >= (only != nullptr && *only != '\0' ? 10 : 200));
  CHECK(failures == 0);
}

}  // namespace
}  // namespace tuna
