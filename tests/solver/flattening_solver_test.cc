// FlatteningSolver (conv/flattening_solver.h): a 2-D-only solver wrapped so runs 3-D problems with
// identity dimensions (each rule of problem/flatten.h, every direction, FP32 and FP16, groups,
// channels-first and channels-last) on the cpu backend, and the results match the 3-D reference;
// problems without a 2-D form reach the inner solver unchanged; the builtin registry wraps every
// solver, so the tensor-core solvers (and the channels-last adapters' inner ones) plan R(2+1)D's and
// SlowFast's 1x3x3, 3x1x1 and 1x1x1 layers as the 2-D problems they are.
#include <memory>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/problem/flatten.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"
#include "tuner_core/solver/conv/flattening_solver.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::FlatteningSolver;
using solver::PerfConfig;
using solver::Solution;

constexpr Direction kDirs[] = {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
constexpr Layout kCf = Layout::kNCDHW, kCl = Layout::kNDHWC;

// TunaCpuGemmConv restricted to 2-D problems, as most GPU solvers are.
class TwoDCpuGemm : public solver::CpuGemmConvSolver {
 public:
  absl::Status IsApplicable(const solver::Target& target, const Problem& p) const override {
    if (p.spatial_dims != 2) return solver::NotApplicable(Name(), "2D only (test inner)");
    return CpuGemmConvSolver::IsApplicable(target, p);
  }
};

Problem Make3d(DataType type, Layout x, Layout y, Dhw in, Dhw fil, Dhw pad, Dhw stride, int64_t groups = 1) {
  Problem p;
  p.spatial_dims = 3;
  p.n = 2, p.c = 4 * groups, p.k = 6 * groups, p.groups = groups;
  p.in = in, p.fil = fil, p.pad = pad, p.stride = stride;
  p.in_layout = x, p.fil_layout = x, p.out_layout = y;
  p.data_type = type;
  REQUIRE(ValidateProblem(p).ok());
  return p;
}

TEST_CASE("flattening solver: 3-D problems with identity dimensions run on a 2-D solver and match the reference") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const FlatteningSolver s(std::make_unique<TwoDCpuGemm>());
  const std::vector<Problem> problems = {
      // R(2+1)D's spatial 1x3x3 (stride 2 in H and W) and temporal 3x1x1 (stride 2 in depth)
      Make3d(DataType::kFp32, kCl, kCl, {4, 7, 6}, {1, 3, 3}, {0, 1, 1}, {1, 2, 2}),
      Make3d(DataType::kFp16, kCl, kCl, {4, 5, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, 2),
      Make3d(DataType::kFp32, kCf, kCf, {7, 3, 4}, {3, 1, 1}, {1, 0, 0}, {2, 1, 1}),
      Make3d(DataType::kFp16, kCl, kCf, {5, 3, 4}, {3, 1, 1}, {1, 0, 0}, {1, 1, 1}, 2),
      // 1x1x1 projections, and a 1x1x3 filter (depth and height identities, channels-first)
      Make3d(DataType::kFp32, kCf, kCf, {3, 4, 5}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}),
      Make3d(DataType::kFp16, kCl, kCl, {3, 4, 5}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}),
      Make3d(DataType::kFp32, kCf, kCf, {3, 4, 9}, {1, 1, 3}, {0, 0, 1}, {1, 1, 2}),
      // one frame, channels-first: NCDHW is NCHW
      Make3d(DataType::kFp32, kCf, kCf, {1, 6, 5}, {1, 3, 3}, {0, 1, 1}, {1, 2, 1}),
  };
  int runs = 0;
  for (const Problem& base : problems) {
    for (Direction dir : kDirs) {
      Problem p = base;
      p.direction = dir;
      INFO(p.Canonical() << " dir " << DirectionName(dir));
      CHECK_FALSE(s.inner().IsApplicable(h.target(), p).ok());
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      const PerfConfig config = s.DefaultConfig(h.target(), p);
      CHECK(config == s.inner().DefaultConfig(h.target(), *FlattenTo2d(p)));
      REQUIRE(s.IsValid(h.target(), p, config).ok());
      testing::CheckMatchesReference(h, s, p, config);
      ++runs;
    }
  }
  CHECK(runs == 24);
}

TEST_CASE("flattening solver: other problems reach the inner solver as they are") {
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu");
  REQUIRE(cpu.ok());
  const FlatteningSolver s(std::make_unique<TwoDCpuGemm>());
  const Problem cube = Make3d(DataType::kFp32, kCl, kCl, {4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1});
  const absl::Status refused = s.IsApplicable(*cpu, cube);
  CHECK(refused.message() == s.inner().IsApplicable(*cpu, cube).message());
  CHECK(refused.message().find("2D only") != std::string::npos);
  Problem flat;
  flat.n = 2, flat.c = 8, flat.k = 8, flat.in = {1, 6, 6}, flat.fil = {1, 3, 3}, flat.pad = {0, 1, 1};
  REQUIRE(s.IsApplicable(*cpu, flat).ok());
  CHECK(s.DefaultConfig(*cpu, flat) == s.inner().DefaultConfig(*cpu, flat));
  CHECK(s.Name() == "TunaCpuGemmConv");
  CHECK(&solver::Unflattened(s) == &s.inner());
  CHECK(&solver::Unflattened(s.inner()) == &s.inner());
}

TEST_CASE("builtin registry: every tunable solver flattens; the tensor-core solvers take 1x3x3, 3x1x1 and 1x1x1 layers") {
  const solver::SolverRegistry& reg = solver::SolverRegistry::Builtin();
  for (const solver::RegisteredSolver& r : reg.All()) {
    INFO(r.solver->Name());
    // The naive solvers, the device reference, compute 3-D problems as written.
    const bool naive = r.solver->Name().starts_with("ConvDirectNaiveConv");
    CHECK((dynamic_cast<const FlatteningSolver*>(r.solver) != nullptr) == !naive);
  }
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  auto applicable = [&](const Problem& p, std::string_view name) {
    for (const solver::RegisteredSolver& r : reg.Applicable(*sm90, p)) {
      if (r.solver->Name() == name) return true;
    }
    return false;
  };
  auto big = [](Problem p, Direction dir) {
    p.n = 8, p.c = 64, p.k = 128, p.direction = dir;
    return p;
  };
  const Problem spatial = big(Make3d(DataType::kFp16, kCl, kCl, {16, 56, 56}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}),
                              Direction::kForward);
  CHECK(applicable(spatial, "TunaHopperTmaFwd"));
  CHECK(applicable(big(spatial, Direction::kBackwardData), "TunaHopperTmaBwd"));
  CHECK(applicable(big(spatial, Direction::kBackwardWeights), "TunaHopperTmaWrw"));
  const Problem temporal = big(Make3d(DataType::kFp16, kCf, kCf, {16, 28, 28}, {3, 1, 1}, {1, 0, 0}, {1, 1, 1}),
                               Direction::kForward);
  CHECK(applicable(temporal, "TunaHopperTmaFwdNchw"));  // (D, H*W) NCHW: through the adapter
  const Problem point = big(Make3d(DataType::kFp32, kCf, kCf, {8, 28, 28}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}),
                            Direction::kBackwardWeights);
  CHECK(applicable(point, "TunaFastSimtWrw"));
  // NCDHW 1x3x3: no 2-D form in place; the adapter moves it to NDHWC, where its inner solver flattens.
  const Problem cf_spatial = big(Make3d(DataType::kFp16, kCf, kCf, {16, 56, 56}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}),
                                 Direction::kForward);
  CHECK_FALSE(FlattenTo2d(cf_spatial).has_value());
  CHECK(applicable(cf_spatial, "TunaHopperTmaFwdNchw"));
  CHECK_FALSE(applicable(cf_spatial, "TunaHopperTmaFwd"));
  // A 3x3x3 layer has no 2-D form: the 2-D solvers refuse it.
  const Problem cube = big(Make3d(DataType::kFp16, kCl, kCl, {16, 56, 56}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}),
                           Direction::kForward);
  CHECK_FALSE(applicable(cube, "TunaHopperTmaFwd"));
  // The registered solver's solution is the inner solver's for the 2-D problem.
  const solver::Solver& tma = *reg.ByName("TunaHopperTmaFwd")->solver;
  const PerfConfig config = tma.DefaultConfig(*sm90, spatial);
  absl::StatusOr<Solution> got = tma.GetSolution(*sm90, spatial, config);
  absl::StatusOr<Solution> want = solver::Unflattened(tma).GetSolution(*sm90, *FlattenTo2d(spatial), config);
  REQUIRE((got.ok() && want.ok()));
  REQUIRE(got->launches.size() == want->launches.size());
  CHECK(got->kernels.front().options == want->kernels.front().options);
  CHECK(got->launches.back().grid.x == want->launches.back().grid.x);
  CHECK(got->launches.back().args.size() == want->launches.back().args.size());
}

}  // namespace
}  // namespace tuna
