// (a) Every tunable GPU solver's kernels compile: hiprtc for gfx908/gfx90a and NVRTC for sm_90
// (each skipped with a message where its compiler library is missing), for ResNet-50 layers
// across F/B/W, FP32/FP16/BF16, NCHW/NHWC, with the default config and random valid configs.
// Identical builds (same source and options) are compiled once.
#include <chrono>
#include <cstdio>
#include <map>
#include <cstdlib>
#include <random>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/invoker.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

// Up to `count` random valid configs (rejection sampling over the declared space).
std::vector<PerfConfig> RandomValid(const solver::Solver& s, const Target& t, const Problem& p, int count,
                                    std::mt19937_64& rng) {
  std::vector<PerfConfig> out;
  const solver::SearchSpace space = s.Space(t, p);
  for (int tries = 0; tries < 4000 && static_cast<int>(out.size()) < count; ++tries) {
    PerfConfig c = space.At(rng() % space.Size());
    if (s.IsValid(t, p, c).ok()) out.push_back(c);
  }
  return out;
}

// Compiles every distinct build of the solutions for the chosen problems on `arch`.
// Default configs for every problem; `random_configs` random valid configs for every
// `random_every`-th problem (compiles dominate the run time: about 0.1-1 s each).
// CI runs a sample (every 4th ResNet-50 layer + the edge problems, at most kCiBuildsPerSolver
// distinct builds per solver and arch: about a minute on 2 cores); TUNA_FULL_COMPILE_TEST=1
// compiles every problem (about 1,000 builds, 5 minutes).
constexpr int kCiBuildsPerSolver = 24;

bool FullCompileTest() {
  const char* v = std::getenv("TUNA_FULL_COMPILE_TEST");
  return v != nullptr && std::string(v) == "1";
}

void CompileAll(const backend::Backend& be, const std::string& arch, int random_configs, int random_every) {
  const auto start = std::chrono::steady_clock::now();
  const bool full = FullCompileTest();
  absl::StatusOr<Target> target = solver::TargetForArch(arch);
  REQUIRE(target.ok());
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(layers.size() == 23);
  std::vector<Problem> base;
  for (size_t i = 0; i < layers.size(); i += full ? 1 : 4) base.push_back(layers[i]);
  for (const Problem& p : testing::EdgeProblems()) base.push_back(p);

  const solver::SolverList solvers = solver::GpuTunableSolvers();
  std::mt19937_64 rng(1234);
  std::set<std::string> compiled;
  std::map<std::string, int> per_solver;
  int failures = 0;
  for (const auto& [id, s] : solvers) {
    for (size_t bi = 0; bi < base.size(); ++bi) {
      const Problem& b = base[bi];
      const int randoms = bi % random_every == 0 ? random_configs : 0;
      for (Direction dir : s->Directions()) {
        for (DataType type : {DataType::kFp32, DataType::kFp16, DataType::kBf16}) {
          for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
            const Problem p = testing::With(b, dir, type, layout);
            if (!s->IsApplicable(*target, p).ok()) continue;
            std::vector<PerfConfig> configs = {s->DefaultConfig(*target, p)};
            for (const PerfConfig& c : RandomValid(*s, *target, p, randoms, rng)) configs.push_back(c);
            for (const PerfConfig& c : configs) {
              absl::StatusOr<solver::Solution> sol = s->GetSolution(*target, p, c);
              INFO(s->Name() << " " << p.Canonical() << " params " << c.ToString());
              REQUIRE(sol.ok());
              std::string key;
              for (const auto& k : sol->kernels) {
                key += k.source;
                for (const auto& o : k.options) key += " " + o;
              }
              if (!full && per_solver[std::string(s->Name())] >= kCiBuildsPerSolver) continue;
              if (!compiled.insert(key).second) continue;
              absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(be, *sol, arch);
              if (!code.ok()) {
                ++failures;
                std::printf("COMPILE FAIL %s %s: %s\n%s\n", std::string(s->Name()).c_str(), arch.c_str(),
                            key.c_str(), std::string(code.status().message()).substr(0, 3000).c_str());
              }
              CHECK(code.ok());
              ++per_solver[std::string(s->Name())];
            }
          }
        }
      }
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %zu distinct builds in %.1f s\n", arch.c_str(), compiled.size(), secs);
  for (const auto& [name, n] : per_solver) std::printf("%s: %s compiled %d distinct builds\n", arch.c_str(), name.c_str(), n);
  CHECK(failures == 0);
  // Every solver that applies to any problem on this target compiled something (the fast
  // solvers are CUDA sm_80+ only and refuse HIP targets).
  size_t expected = 0;
  for (const auto& [id, s] : solvers) {
    bool applies = false;
    for (const Problem& b : base)
      for (Direction dir : s->Directions())
        for (DataType type : {DataType::kFp32, DataType::kFp16, DataType::kBf16})
          for (Layout layout : {Layout::kNCHW, Layout::kNHWC})
            applies = applies || s->IsApplicable(*target, testing::With(b, dir, type, layout)).ok();
    expected += applies;
  }
  CHECK(expected >= 4);
  CHECK(per_solver.size() == expected);
}

// One test case per arch: tests/solver/BUILD runs each as its own target (they build in parallel).
void CompileAllHip(const std::string& arch, int random_configs, int random_every) {
  std::unique_ptr<backend::Backend> hip = backend::NewHipBackend(backend::HipBackendOptions::FromEnv());
  if (absl::Status st = hip->CompilerStatus(); !st.ok()) {
    WARN("skipping: hiprtc unavailable: " << st.message());
    return;
  }
  CompileAll(*hip, arch, random_configs, random_every);
}

// gfx90a gets the random configs; gfx908 (same kernel dialect) the defaults and a few.
TEST_CASE("GPU solver kernels compile with hiprtc for gfx90a", "[gfx90a]") { CompileAllHip("gfx90a", 1, 6); }
TEST_CASE("GPU solver kernels compile with hiprtc for gfx908", "[gfx908]") { CompileAllHip("gfx908", 1, 1000); }

TEST_CASE("GPU solver kernels compile with NVRTC for sm_90", "[sm_90]") {
  std::unique_ptr<backend::Backend> cuda = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  if (absl::Status st = cuda->CompilerStatus(); !st.ok()) {
    WARN("skipping: NVRTC unavailable: " << st.message());
    return;
  }
  CompileAll(*cuda, "sm_90", 1, 6);
}

}  // namespace
}  // namespace tuna
