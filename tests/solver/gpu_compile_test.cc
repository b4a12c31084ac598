// (a) Every tunable GPU solver's kernels compile: hiprtc for gfx908/gfx90a and NVRTC for sm_90
// (each skipped with a message where its compiler library is missing), for ResNet-50 layers and
// edge problems (groups, depthwise, odd sizes, dilation, strides, 3D) across F/B/W, FP32/FP16/BF16,
// NCHW/NHWC, with the default config and random valid configs. Identical builds (same source and
// options) are compiled once. Planning (GetSolution) is cheap and compiling is the cost, so each
// solver's distinct builds are collected first; CI compiles an evenly spread sample of them
// (CompileAll), TUNA_FULL_COMPILE_TEST=1 every one.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/conv/tensor_move_adapter.h"
#include "tuner_core/solver/invoker.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;

// CI compiles at most this many of each solver's distinct builds per arch (see SampleBuilds):
// 140 of 888 on sm_90 (71 s on 2 cores), 76 of 337 on gfx908 and 76 of 487 on gfx90a (39 s each);
// TUNA_FULL_COMPILE_TEST=1 compiles all of them (several minutes per arch).
constexpr size_t kCiBuildsPerSolver = 8;

// Solvers whose own test compiles every valid config of a layer (or a spread of its space) for
// sm_90 (gpu_fast_compile_test, gpu_hopper_*_test, gpu_small_c_tc_fwd_test): here CI compiles one
// build per (direction, type, layout) combination of theirs on sm_90, for the edge problems' sake.
const std::set<std::string>& BuiltWholeElsewhere() {
  static const std::set<std::string> names = {"TunaFastTcFwd",    "TunaFastSimtFwd", "TunaFastSimtBwd",
                                               "TunaHopperFwd",    "TunaHopperTmaFwd", "TunaHopperWrw",
                                               "TunaHopperTmaWrw", "TunaSmallCTcFwd", "TunaWinogradF4x3",
                                               "TunaHopperHaloFwd", "TunaHopperHaloWrw"};
  return names;
}

// The tensor-move adapters (*Nchw, *Nhwc, *Ncdhw, *Pad, *Strided) build their inner solver's
// kernels, which the inner solver's own builds cover (here or in its test), plus the layout kernel:
// one build per combination of theirs, on every arch.
bool IsAdapter(const solver::Solver& s) { return dynamic_cast<const solver::TensorMoveAdapter*>(&s) != nullptr; }

bool FullCompileTest() {
  const char* v = std::getenv("TUNA_FULL_COMPILE_TEST");
  return v != nullptr && std::string(v) == "1";
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

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

// The (direction, data type, layout) a build was planned for (2D and 3D layouts count as one).
using Combo = std::tuple<Direction, DataType, Layout>;

// One distinct build of a solver: its key (sources and options), what to compile, and where from.
struct Build {
  std::string key;
  Combo combo;
  solver::Solution sol;
  std::string origin;  // problem and params, for messages
};

std::string BuildKey(const solver::Solution& sol) {
  std::string key;
  for (const auto& k : sol.kernels) {
    key += k.source;
    for (const auto& o : k.options) key += " " + o;
  }
  return key;
}

// Every distinct build of `s` on `t` for the `base` problems in every direction, type and layout it
// applies to, in that order (problem-major): the default config, plus `random_configs` random valid
// configs for every `random_every`-th problem.
std::vector<Build> CollectBuilds(const solver::Solver& s, const Target& t, const std::vector<Problem>& base,
                                 int random_configs, int random_every, std::mt19937_64& rng) {
  std::vector<Build> out;
  std::set<std::string> seen;
  for (size_t bi = 0; bi < base.size(); ++bi) {
    const int randoms = bi % random_every == 0 ? random_configs : 0;
    for (Direction dir : s.Directions()) {
      for (DataType type : {DataType::kFp32, DataType::kFp16, DataType::kBf16}) {
        for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
          const Problem p = testing::With(base[bi], dir, type, layout);
          if (!s.IsApplicable(t, p).ok()) continue;
          std::vector<PerfConfig> configs = {s.DefaultConfig(t, p)};
          for (const PerfConfig& c : RandomValid(s, t, p, randoms, rng)) configs.push_back(c);
          for (const PerfConfig& c : configs) {
            absl::StatusOr<solver::Solution> sol = s.GetSolution(t, p, c);
            INFO(s.Name() << " " << p.Canonical() << " params " << c.ToString());
            REQUIRE(sol.ok());
            std::string key = BuildKey(*sol);
            if (!seen.insert(key).second) continue;
            out.push_back({std::move(key), {dir, type, layout}, *std::move(sol), p.Canonical() + " " + c.ToString()});
          }
        }
      }
    }
  }
  return out;
}

std::vector<size_t> AllIndices(size_t n) {
  std::vector<size_t> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = i;
  return out;
}

// Indices (ascending) of a deterministic sample of at most `cap` builds: first one build of each
// distinct combination (evenly spaced combinations when there are more than `cap`; within each,
// a member at a different relative position, so the picks fall on different problems), then the
// rest evenly spaced over the whole list (problem-major: ResNet-50 layers, then edge problems),
// each taking the next unpicked build when its slot is taken.
std::vector<size_t> SampleBuilds(const std::vector<Build>& builds, size_t cap) {
  if (builds.size() <= cap) return AllIndices(builds.size());
  std::vector<Combo> combos;
  std::map<Combo, std::vector<size_t>> members;
  for (size_t i = 0; i < builds.size(); ++i) {
    std::vector<size_t>& m = members[builds[i].combo];
    if (m.empty()) combos.push_back(builds[i].combo);
    m.push_back(i);
  }
  std::vector<bool> picked(builds.size(), false);
  const size_t n_combos = std::min(combos.size(), cap);
  for (size_t j = 0; j < n_combos; ++j) {
    const size_t pos = combos.size() <= cap ? j : (2 * j + 1) * combos.size() / (2 * cap);
    const std::vector<size_t>& m = members[combos[pos]];
    picked[m[(2 * j + 1) * m.size() / (2 * n_combos)]] = true;
  }
  const size_t rest = cap - n_combos;
  for (size_t r = 0; r < rest; ++r) {
    size_t i = (2 * r + 1) * builds.size() / (2 * rest);
    while (picked[i]) i = (i + 1) % builds.size();
    picked[i] = true;
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < builds.size(); ++i)
    if (picked[i]) out.push_back(i);
  return out;
}

std::string Options(const solver::Solution& sol) {
  std::string out;
  for (const auto& k : sol.kernels)
    for (const auto& o : k.options) out += " " + o;
  return out;
}

// Compiles builds[i] for each i of `pick` on `arch`, skipping builds identical to one compiled
// before (`compiled`, shared by the solvers); returns the number that failed.
int CompileBuilds(const backend::Backend& be, const std::string& arch, const std::string& name,
                  const std::vector<Build>& builds, const std::vector<size_t>& pick, std::set<std::string>& compiled) {
  int failures = 0;
  for (size_t i : pick) {
    const Build& b = builds[i];
    std::printf("%s: %s: %s\n", arch.c_str(), name.c_str(), b.origin.c_str());  // what the sample holds
    if (!compiled.insert(b.key).second) continue;
    absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(be, b.sol, arch);
    if (!code.ok()) {
      ++failures;
      std::printf("COMPILE FAIL %s %s %s:%s\n%s\n", name.c_str(), arch.c_str(), b.origin.c_str(),
                  Options(b.sol).c_str(), std::string(code.status().message()).substr(0, 3000).c_str());
    }
    INFO(name << " " << arch << " " << b.origin);
    CHECK(code.ok());
  }
  return failures;
}

// Distinct combinations among builds[i] for i in `pick`.
size_t CombosOf(const std::vector<Build>& builds, const std::vector<size_t>& pick) {
  std::set<Combo> out;
  for (size_t i : pick) out.insert(builds[i].combo);
  return out.size();
}

// For every tunable GPU solver that applies on `arch`: collects its distinct builds (CollectBuilds)
// over all 23 ResNet-50 layers and the edge problems, then compiles them all with
// TUNA_FULL_COMPILE_TEST=1, else (CI) the sample of SampleBuilds: at most kCiBuildsPerSolver, every
// (direction, type, layout) combination the solver has among them where the cap allows, the rest
// spread evenly over the problems, edge problems included (the first 24 builds of each solver in
// problem order, compiled before, never reached its edge problems).
void CompileAll(const backend::Backend& be, const std::string& arch, int random_configs, int random_every) {
  const auto start = std::chrono::steady_clock::now();
  const bool full = FullCompileTest();
  absl::StatusOr<Target> target = solver::TargetForArch(arch);
  REQUIRE(target.ok());
  std::vector<Problem> base = testing::ResNet50Layers();
  REQUIRE(base.size() == 23);
  for (const Problem& p : testing::EdgeProblems()) base.push_back(p);

  std::mt19937_64 rng(1234);
  std::set<std::string> compiled;
  int failures = 0;
  size_t applicable = 0, distinct = 0;
  double plan_secs = 0;
  for (const auto& [id, s] : solver::GpuTunableSolvers()) {
    const std::string name(s->Name());
    const auto plan_start = std::chrono::steady_clock::now();
    const std::vector<Build> builds = CollectBuilds(*s, *target, base, random_configs, random_every, rng);
    plan_secs += SecondsSince(plan_start);
    if (builds.empty()) continue;  // applies to no problem here (the fast solvers: CUDA sm_80+ only)
    ++applicable;
    distinct += builds.size();
    const size_t combos = CombosOf(builds, AllIndices(builds.size()));
    const bool one_per_combo = IsAdapter(*s) || (arch == "sm_90" && BuiltWholeElsewhere().count(name));
    const size_t cap = full ? builds.size() : one_per_combo ? combos : kCiBuildsPerSolver;
    const std::vector<size_t> pick = SampleBuilds(builds, cap);
    const auto compile_start = std::chrono::steady_clock::now();
    failures += CompileBuilds(be, arch, name, builds, pick, compiled);
    const size_t picked_combos = CombosOf(builds, pick);
    std::printf("%s: %s compiled %zu of %zu distinct builds (%zu of %zu direction/type/layout combinations) in %.1f s\n",
                arch.c_str(), name.c_str(), pick.size(), builds.size(), picked_combos, combos,
                SecondsSince(compile_start));
    // Every applicable solver compiled something, and every combination it has where the cap allows.
    CHECK(pick.size() == std::min(builds.size(), cap));
    CHECK(picked_combos == std::min(combos, pick.size()));
  }
  std::printf("%s: %zu builds compiled of %zu distinct (%s; planning %.1f s) in %.1f s\n", arch.c_str(),
              compiled.size(), distinct, full ? "TUNA_FULL_COMPILE_TEST=1: all" : "CI sample", plan_secs,
              SecondsSince(start));
  CHECK(failures == 0);
  CHECK(applicable >= 4);
}

// One test case per arch: tests/solver/BUILD runs each as its own target (they build in parallel).
void CompileAllHip(const std::string& arch, int random_configs, int random_every) {
  std::unique_ptr<backend::Backend> hip = backend::NewHipBackend(backend::HipBackendOptions::FromEnv());
  if (absl::Status st = hip->CompilerStatus(); !st.ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + st.ToString());
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
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + st.ToString());
    return;
  }
  CompileAll(*cuda, "sm_90", 1, 6);
}

}  // namespace
}  // namespace tuna
