// The channels-last adapters of the tensor-core solvers (TunaHopperTma{Fwd,Bwd,Wrw}Nchw,
// TunaFastTcFwdNchw, TunaMfmaFwdNchw, TunaHopper{Wrw,HaloWrw,Fwd,HaloFwd}Nchw; conv/channel_order_adapter.h): the layout kernel builds with
// NVRTC (sm_80, sm_90) and hiprtc (gfx908, gfx90a) for every element width, and (tag gpu) the
// adapters run NCHW and mixed-layout problems of their direction against the CPU reference on an
// sm_90 device: ResNet-50 layers at batch 2 in FP16 and BF16, and edge shapes; (tag gpu) 3-D layers
// whose depth or height and width are identities on the registered 2-D solvers (flattened,
// conv/flattening_solver.h) and the FP32 NCDHW depth-as-batch solvers (conv/depth_batch_adapter.h);
// the channel-padded TMA solvers (conv/channel_pad_adapter.h); the SIMT and Winograd solvers on
// FP32 NHWC and NDHWC through the channels-first adapter (*Nhwc).
#include <cstdio>
#include <random>
#include <tuple>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/solver/cpu_solver_harness.h"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::Target;

const solver::Solver& Registered(std::string_view name) {
  const solver::RegisteredSolver* r = solver::SolverRegistry::Builtin().ByName(name);
  REQUIRE(r != nullptr);
  return *r->solver;
}

TEST_CASE("layout kernel: NVRTC and hiprtc builds for every element width", "[solver]") {
  std::unique_ptr<backend::Backend> cuda = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  std::unique_ptr<backend::Backend> hip = backend::NewHipBackend(backend::HipBackendOptions::FromEnv());
  int built = 0;
  for (auto [be, arch] : {std::pair{cuda.get(), "sm_80"}, std::pair{cuda.get(), "sm_90"},
                          std::pair{hip.get(), "gfx908"}, std::pair{hip.get(), "gfx90a"}}) {
    if (!be->CompilerStatus().ok()) {
      ::tuna::testing::SkipUnlessCi("compiler unavailable: " + be->CompilerStatus().ToString());
      continue;
    }
    for (int bytes : {1, 2, 4}) {
      INFO(arch << " " << bytes << "-byte elements");
      solver::Solution sol;
      sol.kernels.push_back({"conv/layout_transpose.cu",
                             {"tuna_batched_transpose", "tuna_batched_transpose_packed", "tuna_fill_zero",
                              "tuna_transpose_runs", "tuna_transpose_runs_packed", "tuna_pad_rows", "tuna_lattice_rows",
                              "tuna_lattice_rows_packed"},
                             {"-DTUNA_ELEM_BYTES=" + std::to_string(bytes)}});
      absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*be, sol, arch);
      if (!code.ok()) std::printf("%s\n", std::string(code.status().message()).substr(0, 3000).c_str());
      REQUIRE(code.ok());
      ++built;
    }
  }
  if (built == 0) WARN("no NVRTC and no hiprtc: nothing was built");
}

// NCHW / mixed edge shapes of one direction: tails of the 32 x 32 transpose tiles (C, K and pixel
// counts off 32), one layout left channels-last, groups.
std::vector<Problem> NchwEdgeProblems(Direction dir) {
  const Layout C = Layout::kNCHW, L = Layout::kNHWC;
  const DataType F16 = DataType::kFp16, B16 = DataType::kBf16;
  std::vector<Problem> v = {
      testing::Make2d(2, 72, 40, 13, 11, 3, 3, 1, 1, 1, 1, 1, 1, 1, F16, C, C, C),
      testing::Make2d(3, 64, 200, 7, 9, 1, 1, 0, 0, 1, 1, 1, 1, 1, B16, C, C, C),
      testing::Make2d(2, 128, 64, 14, 14, 3, 3, 1, 1, 2, 2, 1, 1, 1, F16, C, L, C),  // w stays in place
      testing::Make2d(2, 64, 96, 9, 9, 3, 3, 1, 1, 1, 1, 1, 1, 1, F16, L, C, L),     // only w moves
      testing::Make2d(2, 128, 128, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 2, F16, C, C, C), // groups 2
  };
  for (Problem& p : v) p.direction = dir;
  return v;
}

TEST_CASE("channels-last adapters match the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  const Target target = cuda->target;
  const std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  std::mt19937_64 rng(1031);
  int applicable = 0;
  for (std::string_view name : {"TunaHopperTmaFwdNchw", "TunaHopperTmaBwdNchw", "TunaHopperTmaWrwNchw",
                                "TunaFastTcFwdNchw", "TunaHopperWrwNchw", "TunaHopperHaloWrwNchw", "TunaHopperFwdNchw",
                                "TunaHopperHaloFwdNchw"}) {
    const solver::Solver& s = Registered(name);
    const Direction dir = s.Directions().front();
    std::vector<Problem> problems;
    for (size_t i = 1; i < layers.size(); i += 3) {
      Problem b = layers[i];
      b.n = 2;
      problems.push_back(testing::With(b, dir, i % 2 == 1 ? DataType::kFp16 : DataType::kBf16, Layout::kNCHW));
    }
    for (const Problem& p : NchwEdgeProblems(dir)) problems.push_back(p);
    Problem stem = layers[0];  // the RGB stem (C = 3): TunaHopperWrw's and TunaHopperFwd's
    stem.n = 2;
    problems.push_back(testing::With(stem, dir, DataType::kFp16, Layout::kNCHW));
    std::vector<Problem> runnable;
    for (const Problem& p : problems) {
      if (s.IsApplicable(target, p).ok()) runnable.push_back(p);
    }
    INFO(name << ": " << runnable.size() << " of " << problems.size() << " applicable");
    // The TMA and mma.sync solvers take most shapes; the others (thin inputs, halo tiles) at least two.
    const bool broad = name.find("Tma") != std::string_view::npos || name == "TunaFastTcFwdNchw";
    CHECK((broad ? runnable.size() * 2 >= problems.size() : runnable.size() >= 2));
    applicable += static_cast<int>(runnable.size());
    testing::CheckOnDevice(checker, s, target, runnable, rng, -1, tally);
  }
  std::printf("%d problems, %d runs, %d failures\n", applicable, tally.runs, tally.failures);
  CHECK(tally.failures == 0);
}

// A 3-D problem of batch 2 (C = 64, K = 96) in `dir`.
Problem Make3d(Direction dir, DataType type, Layout layout, Dhw in, Dhw fil, Dhw pad, Dhw stride) {
  Problem p;
  p.spatial_dims = 3;
  p.n = 2, p.c = 64, p.k = 96;
  p.in = in, p.fil = fil, p.pad = pad, p.stride = stride;
  p.in_layout = p.fil_layout = p.out_layout = layout;
  p.data_type = type;
  p.direction = dir;
  return p;
}

TEST_CASE("3-D layers on the 2-D solvers (flattened; depth-as-batch) match the CPU reference on an sm_90 device",
          "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  const Target target = cuda->target;
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  std::mt19937_64 rng(1043);
  const Layout cf = Layout::kNCDHW, cl = Layout::kNDHWC;
  // Registered solvers through FlatteningSolver: 1x3x3 NDHWC (N*D images), 3x1x1 with a depth
  // stride ((D, H*W)), NCDHW 1x3x3 through the channels-last adapter, FP32 NCDHW 3x1x1 and 1x1x1.
  struct Case {
    std::string_view solver;
    DataType type;
    Layout layout;
    Dhw fil, pad, stride;
  };
  const std::vector<Case> flat = {
      {"TunaHopperTmaFwd", DataType::kFp16, cl, {1, 3, 3}, {0, 1, 1}, {1, 2, 2}},
      {"TunaHopperTmaFwd", DataType::kBf16, cl, {3, 1, 1}, {1, 0, 0}, {2, 1, 1}},
      {"TunaHopperTmaBwd", DataType::kFp16, cl, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}},
      {"TunaHopperTmaWrw", DataType::kFp16, cl, {3, 1, 1}, {1, 0, 0}, {1, 1, 1}},
      {"TunaHopperTmaFwdNchw", DataType::kFp16, cf, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}},
      {"TunaHopperTmaWrwNchw", DataType::kFp16, cf, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}},
      {"TunaFastSimtFwd", DataType::kFp32, cf, {3, 1, 1}, {1, 0, 0}, {1, 1, 1}},
      {"TunaFastSimtBwd", DataType::kFp32, cf, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}},
      {"TunaFastSimtWrw", DataType::kFp32, cf, {3, 1, 1}, {1, 0, 0}, {1, 1, 1}},
  };
  for (const Case& c : flat) {
    const solver::Solver& s = Registered(c.solver);
    const Problem p = Make3d(s.Directions().front(), c.type, c.layout, {6, 12, 10}, c.fil, c.pad, c.stride);
    INFO(c.solver << ": " << p.Canonical());
    testing::CheckOnDevice(checker, s, target, {p}, rng, -1, tally, 3);
  }
  const int flat_runs = tally.runs;
  // The *Ncdhw solvers on FP32 NCDHW 1xRxS layers: strides, a padded 1x1x3, one frame.
  const solver::SolverList registered = solver::GpuTunableSolvers();
  int depth_batch = 0;
  for (const auto& [id, s] : registered) {
    if (s->Name().find("Ncdhw") == std::string_view::npos) continue;
    const Direction dir = s->Directions().front();
    std::vector<Problem> problems;
    for (const Problem& p : {Make3d(dir, DataType::kFp32, cf, {4, 14, 14}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}),
                             Make3d(dir, DataType::kFp32, cf, {4, 15, 13}, {1, 3, 3}, {0, 1, 1}, {1, 2, 2}),
                             Make3d(dir, DataType::kFp32, cf, {3, 9, 9}, {1, 1, 3}, {0, 1, 1}, {1, 1, 1}),
                             Make3d(dir, DataType::kFp32, cf, {1, 12, 12}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1})}) {
      if (s->IsApplicable(target, p).ok()) problems.push_back(p);
    }
    INFO(s->Name() << ": " << problems.size() << " applicable");
    CHECK(problems.size() >= 1);
    testing::CheckOnDevice(checker, *s, target, problems, rng, -1, tally, 2);
    ++depth_batch;
  }
  CHECK(depth_batch == 6);
  const int batch_runs = tally.runs - flat_runs;
  // The *Pad solvers (1052-1054): C/G or K/G off 16-byte rows (R(2+1)D's 230 and 45), groups, BF16, a 3-D layer.
  int padded = 0;
  for (const auto& [id, s] : registered) {
    if (!s->Name().ends_with("Pad")) continue;
    ++padded;
    const Direction dir = s->Directions().front();
    std::vector<Problem> problems;
    for (auto [c, k, g, type] : {std::tuple{230, 128, 1, DataType::kFp16}, std::tuple{64, 230, 1, DataType::kFp16},
                                 std::tuple{45, 64, 1, DataType::kBf16}, std::tuple{64, 80, 4, DataType::kFp16}}) {
      Problem p = testing::Make2d(2, c, k, 14, 13, 3, 3, 1, 1, 1, 1, 1, 1, g, type, Layout::kNHWC, Layout::kNHWC,
                                  Layout::kNHWC);
      p.direction = dir;
      if (s->IsApplicable(target, p).ok()) problems.push_back(p);
    }
    Problem temporal = Make3d(dir, DataType::kFp16, cl, {6, 12, 10}, {3, 1, 1}, {1, 0, 0}, {1, 1, 1});
    temporal.c = 230;
    if (s->IsApplicable(target, temporal).ok()) problems.push_back(temporal);
    INFO(s->Name() << ": " << problems.size() << " applicable");
    CHECK(problems.size() >= 2);
    testing::CheckOnDevice(checker, *s, target, problems, rng, -1, tally, 2);
  }
  CHECK(padded == 3);
  const int pad_runs = tally.runs - flat_runs - batch_runs;
  // The *Nhwc solvers on FP32 channels-last layers: 3x3 with stride and padding, a mixed
  // NHWC/NCHW one, groups, and an NDHWC 1x3x3 layer (flattened to NHWC images, then NCHW copies).
  for (std::string_view name : {"TunaFastSimtFwdNhwc", "TunaFastSimtBwdNhwc", "TunaFastSimtWrwNhwc", "TunaWinogradF2x3Nhwc",
                                "TunaWinogradWrwNhwc", "TunaWinogradF4x3Nhwc"}) {
    const solver::Solver& s = Registered(name);
    const Direction dir = s.Directions().front();
    const Layout l = Layout::kNHWC, c = Layout::kNCHW;
    std::vector<Problem> problems;
    for (Problem p : {testing::Make2d(2, 64, 64, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, DataType::kFp32, l, l, l),
                      testing::Make2d(2, 32, 48, 15, 13, 3, 3, 1, 1, 2, 2, 1, 1, 1, DataType::kFp32, l, l, l),
                      testing::Make2d(3, 24, 40, 12, 12, 3, 3, 1, 1, 1, 1, 1, 1, 1, DataType::kFp32, l, c, l),
                      testing::Make2d(2, 64, 64, 10, 10, 3, 3, 1, 1, 1, 1, 1, 1, 4, DataType::kFp32, l, l, l),
                      Make3d(dir, DataType::kFp32, cl, {4, 12, 12}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1})}) {
      p.direction = dir;
      if (s.IsApplicable(target, p).ok()) problems.push_back(p);
    }
    INFO(name << ": " << problems.size() << " applicable");
    CHECK(problems.size() >= 2);
    CHECK(s.IsApplicable(target, problems.back()).ok());
    CHECK(problems.back().spatial_dims == 3);  // the NDHWC layer, through the registry's flattening
    testing::CheckOnDevice(checker, s, target, problems, rng, -1, tally, 2);
  }
  const int nhwc_runs = tally.runs - flat_runs - batch_runs - pad_runs;
  // The *Strided candidates: stride-2 1x1x1 projections (FP32 NCDHW on the SIMT solvers, FP16 / BF16
  // NDHWC backward data on the TMA kernel), sizes the strides do not divide, a depth stride alone.
  int strided = 0;
  for (const auto& [id, s] : solver::CandidateGpuSolvers()) {
    if (!s->Name().ends_with("Strided")) continue;
    ++strided;
    const Direction dir = s->Directions().front();
    const bool tma = s->Name().find("Tma") != std::string_view::npos;
    std::vector<Problem> problems;
    for (auto [in, stride, type] : {std::tuple{Dhw{6, 12, 10}, Dhw{2, 2, 2}, tma ? DataType::kFp16 : DataType::kFp32},
                                    std::tuple{Dhw{5, 13, 11}, Dhw{2, 2, 2}, tma ? DataType::kBf16 : DataType::kFp32},
                                    std::tuple{Dhw{6, 8, 8}, Dhw{2, 1, 1}, tma ? DataType::kFp16 : DataType::kFp32}}) {
      Problem p = Make3d(dir, type, tma ? cl : cf, in, {1, 1, 1}, {0, 0, 0}, stride);
      if (s->IsApplicable(target, p).ok()) problems.push_back(p);
    }
    INFO(s->Name() << ": " << problems.size() << " applicable");
    CHECK(problems.size() == 3);
    testing::CheckOnDevice(checker, *s, target, problems, rng, -1, tally, 2);
  }
  CHECK(strided == 4);
  std::printf("3-D on 2-D solvers: %d flattened runs, %d depth-as-batch runs; channel-padded: %d runs; "
              "channels-first (FP32 NHWC, NDHWC): %d runs; strided 1x1x1: %d runs; %d failures\n",
              flat_runs, batch_runs, pad_runs, nhwc_runs, tally.runs - flat_runs - batch_runs - pad_runs - nhwc_runs,
              tally.failures);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
