// StridedAdapter (conv/strided_adapter.h) and its layout kernel: strided 1x1 (1x1x1) layers without
// padding run in every direction through a stride-1-only TunaCpuGemmConv (the inner solver) on the
// cpu backend — NCDHW and NDHWC, strides in every dimension or one, sizes that the strides do not
// divide, groups, channel rows of whole 32-bit words (packed) and not — and match the reference;
// applicability; the candidates plan the projections of R(2+1)D-18 on sm_90.
#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/conv/strided_adapter.h"

namespace tuna {
namespace {

using solver::BufferRole;
using solver::PerfConfig;
using solver::Solution;
using solver::StridedAdapter;

constexpr Direction kDirs[] = {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
constexpr Layout kCf = Layout::kNCDHW, kCl = Layout::kNDHWC;

// TunaCpuGemmConv restricted to stride 1, as a solver that takes no strides would be.
class StrideOneCpuGemm : public solver::CpuGemmConvSolver {
 public:
  absl::Status IsApplicable(const solver::Target& target, const Problem& p) const override {
    if (p.stride != Dhw{1, 1, 1}) return solver::NotApplicable(Name(), "stride 1 only (test inner)");
    return CpuGemmConvSolver::IsApplicable(target, p);
  }
};

StridedAdapter GemmAdapter() { return StridedAdapter("TestCpuGemmStrided", std::make_unique<StrideOneCpuGemm>()); }

Problem Make3d(DataType type, Dhw in, Dhw stride, int64_t c, int64_t k, int64_t groups, Layout layout) {
  Problem p;
  p.spatial_dims = 3;
  p.n = 2, p.c = c, p.k = k, p.groups = groups;
  p.in = in, p.stride = stride;
  p.in_layout = p.fil_layout = p.out_layout = layout;
  p.data_type = type;
  REQUIRE(ValidateProblem(p).ok());
  return p;
}

TEST_CASE("strided adapter: 1x1 layers with strides match the reference in every direction") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const StridedAdapter s = GemmAdapter();
  const std::vector<Problem> problems = {
      Make3d(DataType::kFp32, {5, 7, 6}, {2, 2, 2}, 4, 6, 1, kCf),   // odd sizes: lattice 3 x 4 x 3
      Make3d(DataType::kFp16, {4, 6, 7}, {2, 2, 2}, 6, 4, 1, kCl),   // 12-byte channel rows: packed
      Make3d(DataType::kBf16, {3, 5, 5}, {1, 2, 3}, 3, 5, 1, kCl),   // 6-byte rows: element by element
      Make3d(DataType::kFp32, {4, 5, 6}, {2, 1, 1}, 4, 4, 2, kCf),   // a depth stride alone, groups
      Make3d(DataType::kFp16, {1, 7, 9}, {1, 3, 2}, 8, 8, 4, kCl),   // one frame
      testing::Make2d(2, 4, 6, 7, 8, 1, 1, 0, 0, 2, 3, 1, 1, 1, DataType::kFp32, Layout::kNCHW, Layout::kNCHW,
                      Layout::kNCHW),  // 2-D
  };
  int runs = 0, gathers = 0, scatters = 0;
  for (const Problem& base : problems) {
    for (Direction dir : kDirs) {
      Problem p = base;
      p.direction = dir;
      INFO(p.Canonical() << " dir " << DirectionName(dir));
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      const PerfConfig config = s.DefaultConfig(h.target(), p);
      absl::StatusOr<Solution> sol = s.GetSolution(h.target(), p, config);
      REQUIRE(sol.ok());
      for (const solver::Launch& l : sol->launches) {
        if (l.entry.rfind("tuna_lattice_rows", 0) != 0) continue;
        CHECK((l.args[0].role == BufferRole::kX) == (l.args.back().i == 1));  // gathers read x, scatters write it
        (l.args.back().i == 1 ? gathers : scatters) += 1;
      }
      testing::CheckMatchesReference(h, s, p, config);
      ++runs;
    }
  }
  CHECK(runs == 18);
  CHECK(gathers == 12);  // forward and backward weights read x's lattice
  CHECK(scatters == 6);  // backward data writes dx whole
}

TEST_CASE("strided adapter: applicability") {
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu");
  REQUIRE(cpu.ok());
  const StridedAdapter s = GemmAdapter();
  auto why = [&](const Problem& p) { return std::string(s.IsApplicable(*cpu, p).message()); };
  Problem p = Make3d(DataType::kFp32, {4, 6, 6}, {2, 2, 2}, 4, 4, 1, kCf);
  CHECK(s.IsApplicable(*cpu, p).ok());
  Problem tap3 = p;
  tap3.fil = {1, 3, 3};
  CHECK_THAT(why(tap3), Catch::Contains("1x1"));
  Problem padded = p;
  padded.pad = {0, 1, 1};
  CHECK_THAT(why(padded), Catch::Contains("without padding"));
  CHECK_THAT(why(Make3d(DataType::kFp32, {4, 6, 6}, {1, 1, 1}, 4, 4, 1, kCf)), Catch::Contains("nothing to take out"));
  Problem i8 = p;
  i8.data_type = DataType::kInt8;
  CHECK_THAT(why(i8), Catch::Contains("FP32, FP16 and BF16"));
  // An inner solver that takes the strides itself: no copies.
  const StridedAdapter plain("TestCpuGemmStrided", std::make_unique<solver::CpuGemmConvSolver>());
  CHECK_THAT(std::string(plain.IsApplicable(*cpu, p).message()), Catch::Contains("runs these strides itself"));
}

TEST_CASE("strided candidates plan R(2+1)D-18's projections on sm_90") {
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  // conv1x1x1 stride 2, c64 -> k128, 16 frames of 56x56 (N = 8): FP32 NCDHW and FP16 NDHWC.
  Problem f32 = Make3d(DataType::kFp32, {16, 56, 56}, {2, 2, 2}, 64, 128, 1, kCf);
  Problem f16 = Make3d(DataType::kFp16, {16, 56, 56}, {2, 2, 2}, 64, 128, 1, kCl);
  f32.n = f16.n = 8;
  int planned = 0;
  for (const auto& [id, s] : solver::CandidateGpuSolvers()) {
    if (dynamic_cast<const StridedAdapter*>(s.get()) == nullptr) continue;
    INFO(id << " " << s->Name());
    CHECK(s->Name().ends_with("Strided"));
    Problem p = s->Name().find("Tma") != std::string_view::npos ? f16 : f32;
    p.direction = s->Directions().front();
    REQUIRE(s->IsApplicable(*sm90, p).ok());
    absl::StatusOr<Solution> sol = s->GetSolution(*sm90, p, s->DefaultConfig(*sm90, p));
    REQUIRE(sol.ok());
    CHECK(sol->kernels.back().source == "conv/layout_transpose.cu");
    CHECK(sol->workspace_bytes >= 8 * 64 * 8 * 28 * 28 * DataTypeSize(p.data_type));  // the lattice of x
    ++planned;
  }
  CHECK(planned == 4);
}

}  // namespace
}  // namespace tuna
