// The naive GPU kernel (kernels/conv/naive_conv.cu) compiles for every direction and data type:
// hiprtc for gfx908 and gfx90a, NVRTC for sm_90. Each compiler is skipped with a message where
// its library is missing. A solver plans the same build for every data type on an arch (source,
// options and entries: one code object per direction and arch), launching the entry of the
// problem's type, and each direction's build compiles with every entry in it.
#include <algorithm>
#include <cstdio>
#include <set>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/solver/conv/naive_solvers.h"
#include "tuner_core/solver/invoker.h"

namespace tuna {
namespace {

using solver::NaiveConvSolver;
using solver::PerfConfig;

// The one build of the naive solver of `dir` on `arch`, checked to be the same for every data
// type, each type launching its own entry of that build.
solver::Solution OneBuild(const std::string& arch, Direction dir) {
  absl::StatusOr<solver::Target> target = solver::TargetForArch(arch);
  REQUIRE(target.ok());
  Problem p = testing::SmallProblems()[3].problem;  // groups, mixed layouts
  p.direction = dir;
  const NaiveConvSolver s(dir);
  solver::Solution all;
  std::set<std::string> launched;
  for (DataType type : {DataType::kFp32, DataType::kFp16, DataType::kBf16, DataType::kInt8}) {
    if (type == DataType::kInt8 && dir != Direction::kForward) continue;
    p.data_type = type;
    absl::StatusOr<solver::Solution> sol = s.GetSolution(*target, p, PerfConfig{});
    INFO(DataTypeName(type) << " " << sol.status().ToString());
    REQUIRE(sol.ok());
    REQUIRE(sol->kernels.size() == 1);
    CHECK(sol->kernels[0].source == "conv/naive_conv.cu");
    const std::vector<std::string>& entries = sol->kernels[0].entries;
    CHECK(std::find(entries.begin(), entries.end(), sol->launches[0].entry) != entries.end());
    launched.insert(sol->launches[0].entry);
    if (all.kernels.empty()) {
      all = *sol;
    } else {
      CHECK(sol->kernels[0].options == all.kernels[0].options);
      CHECK(entries == all.kernels[0].entries);
    }
  }
  CHECK(launched.size() == all.kernels[0].entries.size());
  return all;
}

void CompileEverything(const backend::Backend& be, const std::string& arch) {
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    INFO(arch << " " << DirectionName(dir));
    const solver::Solution sol = OneBuild(arch, dir);
    absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(be, sol, arch);
    INFO(code.status().ToString());
    REQUIRE(code.ok());
    REQUIRE(code->size() == 1);
    CHECK_FALSE((*code)[0].bytes.empty());
    CHECK((*code)[0].arch == arch);
  }
}

TEST_CASE("naive kernel compiles with hiprtc for gfx908 and gfx90a") {
  std::unique_ptr<backend::Backend> hip = backend::NewHipBackend(backend::HipBackendOptions::FromEnv());
  if (!hip->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + hip->CompilerStatus().ToString());
    return;
  }
  for (const char* arch : {"gfx908", "gfx90a"}) CompileEverything(*hip, arch);
}

TEST_CASE("naive kernel compiles with NVRTC for sm_90") {
  std::unique_ptr<backend::Backend> cuda = backend::NewCudaBackend(backend::CudaBackendOptions::FromEnv());
  if (!cuda->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + cuda->CompilerStatus().ToString());
    return;
  }
  CompileEverything(*cuda, "sm_90");
}

}  // namespace
}  // namespace tuna
