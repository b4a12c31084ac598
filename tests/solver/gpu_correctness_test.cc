// (b) Runs the tunable GPU solvers through the CUDA backend and the generic Invoker and checks
// every result against the CPU reference (tuner_core/reference), printing one line per run:
// solver, problem, params, max abs / rel error, rms, device time. Tagged "gpu": on a host
// without the CUDA driver, NVRTC or a device it passes with a skip message.
//
// Coverage per solver: the edge problems of gpu_test_problems.h (odd sizes, stride classes
// without taps, dilation, groups, depthwise, 3D) in FP32/FP16/BF16 and NCHW/NHWC with the
// default config (FP16 also one random valid config), and ResNet-50 layers at batch 2 (FP32
// NCHW every other layer, FP16 NHWC and BF16 NHWC on a subset, some with a random config). Outputs are poisoned (all bits set: NaN in every type)
// before each run, so an unwritten element fails. Budget: about 1-2 minutes on an H100, mostly
// NVRTC compiles (cached per distinct build) and the CPU reference; each solver stops after 36 s
// and the whole test after 150 s, reporting what it skipped.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <set>
#include <string_view>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/invoker.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

struct Case {
  Problem problem;
  bool random_config = true;
  bool time_it = false;
};

struct HostData {
  std::vector<std::byte> x, w, y, expected;
};

HostData MakeData(const Problem& p, uint64_t seed) {
  const reference::ElementType et = reference::StorageType(p.data_type);
  HostData d;
  d.x = reference::RandomBuffer(et, p.XDesc().ElementCount(), seed + 1);
  d.w = reference::RandomBuffer(et, p.WDesc().ElementCount(), seed + 2);
  d.y = reference::RandomBuffer(et, p.YDesc().ElementCount(), seed + 3);
  const TensorDesc out = reference::OutputDesc(p, p.direction);
  d.expected.resize(out.ElementCount() * reference::OutputElementSize(p, p.direction));
  reference::ConvTensors t{d.x.data(), d.w.data(), d.y.data(), d.expected.data()};
  absl::Status st = reference::RunConv(p, t);
  INFO(st.message());
  REQUIRE(st.ok());
  return d;
}

std::vector<Case> Cases(const solver::Solver& s) {
  std::vector<Case> cases;
  const Direction dir = s.Directions()[0];
  const std::vector<std::pair<DataType, Layout>> variants = {{DataType::kFp32, Layout::kNCHW},
                                                             {DataType::kFp32, Layout::kNHWC},
                                                             {DataType::kFp16, Layout::kNHWC},
                                                             {DataType::kBf16, Layout::kNCHW}};
  for (const Problem& b : testing::EdgeProblems()) {
    for (const auto& [type, layout] : variants) {
      cases.push_back({testing::With(b, dir, type, layout), type == DataType::kFp16, false});
    }
  }
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  for (size_t i = 0; i < layers.size(); ++i) {
    Problem b = layers[i];
    b.n = 2;
    if (i % 2 == 0) cases.push_back({testing::With(b, dir, DataType::kFp32, Layout::kNCHW), i % 6 == 0, true});
    if (i % 4 == 1) cases.push_back({testing::With(b, dir, DataType::kFp16, Layout::kNHWC), i % 8 == 1, true});
    if (i % 6 == 3) cases.push_back({testing::With(b, dir, DataType::kBf16, Layout::kNHWC), false, false});
  }
  return cases;
}

TEST_CASE("Tunable GPU solvers match the CPU reference on the CUDA device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(0);
  if (!cuda) return;
  backend::Backend* be = cuda->backend.get();
  backend::Device& device = *cuda->device;
  const Target target = cuda->target;
  std::printf("device %s (%s), %d SMs\n", device.Info().name.c_str(), target.arch.c_str(), target.num_cu);

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  // Each solver gets its share, so a slow one cannot starve the others of coverage.
  constexpr double kBudgetSeconds = 150;
  constexpr double kSolverBudgetSeconds = 36;
  std::map<std::string, std::vector<backend::CodeObject>> code_cache;  // by kernel build

  std::mt19937_64 rng(2024);
  std::map<std::string, HostData> data_cache;  // by problem: shared by the solvers of a direction
  int runs = 0, failures = 0, skipped = 0;
  const solver::SolverList solvers = solver::GpuTunableSolvers();
  // Solvers of another vendor's GPUs: none of their cases may apply on this device.
  const std::set<std::string_view> other_vendor = {"TunaMfmaFwd"};
  for (const auto& [id, s] : solvers) {
    int solver_runs = 0, applicable = 0;
    const double solver_start = elapsed();
    for (const Case& c : Cases(*s)) {
      const Problem& p = c.problem;
      if (!s->IsApplicable(target, p).ok()) continue;
      ++applicable;
      if (elapsed() > kBudgetSeconds || elapsed() - solver_start > kSolverBudgetSeconds) {
        ++skipped;
        continue;
      }
      std::vector<PerfConfig> configs = {s->DefaultConfig(target, p)};
      if (c.random_config) {
        const solver::SearchSpace space = s->Space(target, p);
        for (int tries = 0; tries < 4000; ++tries) {
          PerfConfig r = space.At(rng() % space.Size());
          if (!(r == configs[0]) && s->IsValid(target, p, r).ok()) {
            configs.push_back(r);
            break;
          }
        }
      }
      const std::string key = p.Canonical();
      auto it = data_cache.find(key);
      if (it == data_cache.end()) {
        if (data_cache.size() > 64) data_cache.clear();
        it = data_cache.emplace(key, MakeData(p, std::hash<std::string>()(key))).first;
      }
      const HostData& d = it->second;

      absl::StatusOr<backend::DeviceBuffer> x = device.Alloc(d.x.size());
      absl::StatusOr<backend::DeviceBuffer> w = device.Alloc(d.w.size());
      absl::StatusOr<backend::DeviceBuffer> y = device.Alloc(d.y.size());
      REQUIRE(x.ok());
      REQUIRE(w.ok());
      REQUIRE(y.ok());
      REQUIRE(device.CopyToDevice(*x, d.x.data(), d.x.size()).ok());
      REQUIRE(device.CopyToDevice(*w, d.w.data(), d.w.size()).ok());
      REQUIRE(device.CopyToDevice(*y, d.y.data(), d.y.size()).ok());
      backend::DeviceBuffer* out = p.direction == Direction::kForward        ? &*y
                                   : p.direction == Direction::kBackwardData ? &*x
                                                                              : &*w;
      for (const PerfConfig& cfg : configs) {
        INFO(s->Name() << " " << p.Canonical() << " params " << cfg.ToString());
        absl::StatusOr<solver::Solution> sol = s->GetSolution(target, p, cfg);
        REQUIRE(sol.ok());
        std::string build_key;
        for (const auto& k : sol->kernels) {
          build_key += k.source;
          for (const auto& o : k.options) build_key += " " + o;
        }
        auto code_it = code_cache.find(build_key);
        if (code_it == code_cache.end()) {
          absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(*be, *sol, target.arch);
          if (!code.ok()) std::printf("compile failed: %s\n", std::string(code.status().message()).substr(0, 3000).c_str());
          REQUIRE(code.ok());
          code_it = code_cache.emplace(build_key, *std::move(code)).first;
        }
        absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(device, *sol, code_it->second);
        REQUIRE(inv.ok());
        backend::DeviceBuffer ws;
        if (sol->workspace_bytes > 0) {
          absl::StatusOr<backend::DeviceBuffer> b = device.Alloc(sol->workspace_bytes);
          REQUIRE(b.ok());
          ws = *std::move(b);
          REQUIRE(device.Memset(ws, 0xff, ws.bytes()).ok());  // poisoned: the solution must zero it
        }
        REQUIRE(device.Memset(*out, 0xff, out->bytes()).ok());
        solver::ConvBuffers bufs{&*x, &*w, &*y, ws.valid() ? &ws : nullptr};
        absl::Status run = (*inv)->Run(bufs);
        if (run.ok()) run = device.Synchronize();
        INFO(run.message());
        REQUIRE(run.ok());
        std::vector<std::byte> got(d.expected.size());
        REQUIRE(device.CopyToHost(got.data(), *out, got.size()).ok());
        absl::StatusOr<reference::VerifyReport> rep =
            reference::VerifyConvOutput(p, p.direction, got.data(), d.expected.data());
        REQUIRE(rep.ok());
        double ms = 0;
        if (c.time_it && rep->ok) {
          absl::StatusOr<std::vector<double>> t = device.TimeLaunches([&] { return (*inv)->Run(bufs); }, 5);
          if (t.ok() && !t->empty()) {
            std::vector<double> v = *t;
            std::sort(v.begin(), v.end());
            ms = v[v.size() / 2];
          }
        }
        std::printf("%-4s %-18s %-4s %-4s max_abs %.3g max_rel %.3g rms %.3g %8.4f ms  params %-22s %s\n",
                    rep->ok ? "ok" : "FAIL", std::string(s->Name()).c_str(),
                    std::string(DataTypeName(p.data_type)).c_str(), std::string(LayoutName(p.in_layout)).c_str(),
                    rep->max_abs_error, rep->max_rel_error, rep->rms_error, ms, cfg.ToString().c_str(),
                    p.Canonical().c_str());
        if (!rep->ok) {
          ++failures;
          std::printf("     %s\n", rep->Summary().c_str());
        }
        CHECK(rep->ok);
        ++runs;
        ++solver_runs;
      }
    }
    std::printf("%s: %d verified runs in %.1f s\n", std::string(s->Name()).c_str(), solver_runs,
                elapsed() - solver_start);
    INFO(s->Name() << ": " << applicable << " applicable cases on " << target.arch);
    if (other_vendor.count(s->Name())) {
      CHECK(applicable == 0);
    } else {
      CHECK(solver_runs > 0);
    }
  }
  std::printf("%d runs, %d failures, %d cases skipped past the %.0f s budget, %.1f s\n", runs, failures, skipped,
              kBudgetSeconds, elapsed());
  if (skipped > 0) WARN(skipped << " cases skipped: time budget exhausted");
  CHECK(failures == 0);
}

}  // namespace
}  // namespace tuna
