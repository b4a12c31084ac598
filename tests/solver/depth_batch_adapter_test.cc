// DepthBatchAdapter (conv/depth_batch_adapter.h) and its layout kernel: the cpu backend's twin of
// tuna_transpose_runs moves C x D runs of H*W elements of 1, 2 and 4 bytes exactly (element by
// element and in 32-bit words, grid.y below the batches) and nothing before its offset; the adapter
// runs NCDHW problems whose depth is an identity (1x3x3 with strides, dilation, groups, one
// channel) in every direction through a 2-D NCHW-only TunaCpuGemmConv (the inner solver) and
// the results match the 3-D reference; applicability; the candidates over the FP32 SIMT and
// Winograd solvers plan R(2+1)D's FP32 NCDHW layers on sm_90.
#include <cstring>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/problem/flatten.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"
#include "tuner_core/solver/conv/depth_batch_adapter.h"
#include "tuner_core/solver/conv/solver_sets.h"

namespace tuna {
namespace {

using solver::BufferRole;
using solver::DepthBatchAdapter;
using solver::KernelArg;
using solver::PerfConfig;
using solver::Solution;

constexpr Direction kDirs[] = {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
constexpr Layout kCf = Layout::kNCDHW, kCl = Layout::kNDHWC;

// TunaCpuGemmConv restricted to 2-D NCHW problems, as the FP32 SIMT solvers are.
class NchwCpuGemm : public solver::CpuGemmConvSolver {
 public:
  absl::Status IsApplicable(const solver::Target& target, const Problem& p) const override {
    if (p.spatial_dims != 2 || p.in_layout != Layout::kNCHW || p.out_layout != Layout::kNCHW) {
      return solver::NotApplicable(Name(), "2-D NCHW only (test inner)");
    }
    return CpuGemmConvSolver::IsApplicable(target, p);
  }
};

DepthBatchAdapter GemmAdapter() { return DepthBatchAdapter("TestCpuGemmNcdhw", std::make_unique<NchwCpuGemm>()); }

Problem Make3d(DataType type, Dhw in, Dhw fil, Dhw pad, Dhw stride, int64_t c = 4, int64_t k = 6, int64_t groups = 1,
               Layout x = kCf, Layout y = kCf) {
  Problem p;
  p.spatial_dims = 3;
  p.n = 2, p.c = c, p.k = k, p.groups = groups;
  p.in = in, p.fil = fil, p.pad = pad, p.stride = stride;
  p.in_layout = x, p.fil_layout = kCf, p.out_layout = y;
  p.data_type = type;
  REQUIRE(ValidateProblem(p).ok());
  return p;
}

// Runs tuna_transpose_runs(_packed) of the cpu twin on `batches` rows x cols matrices of runs of
// `run` elements of `bytes` bytes, written `offset` bytes into y, grid.y 2, and checks every run
// and that nothing before the offset was touched.
void CheckRuns(backend::Backend& be, backend::Device& device, int bytes, int64_t rows, int64_t cols, int64_t run) {
  const bool packed = run * bytes % 4 == 0;
  INFO(bytes << "-byte elements, " << rows << " x " << cols << " runs of " << run << (packed ? ", packed" : ""));
  const int64_t batches = 3, offset = 256;
  const size_t n = static_cast<size_t>(batches * rows * cols * run) * bytes;
  std::vector<unsigned char> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + i / 251);
  solver::Solution sol;
  sol.kernels.push_back({"cpu_conv/layout_transpose.cc", {"tuna_transpose_runs", "tuna_transpose_runs_packed"},
                         {"-DTUNA_ELEM_BYTES=" + std::to_string(bytes)}});
  solver::Launch t;
  t.entry = packed ? "tuna_transpose_runs_packed" : "tuna_transpose_runs";
  t.grid = {static_cast<uint32_t>(rows * cols), 2, 1};
  t.block = {256, 1, 1};
  t.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kY, offset), KernelArg::I64(batches),
            KernelArg::I32(rows), KernelArg::I32(cols), KernelArg::I64(packed ? run * bytes / 4 : run)};
  sol.launches = {t};
  const std::vector<unsigned char> got = testing::RunOnCpu(be, device, sol, src, n + offset);
  testing::CheckTransposed(src, got, batches, rows, cols, static_cast<size_t>(run * bytes), offset);
}

TEST_CASE("layout kernel on the cpu backend: runs transposed exactly") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  backend::Backend& be = h.backend();
  backend::Device& device = h.device();
  for (int bytes : {1, 2, 4}) {
    CheckRuns(be, device, bytes, 5, 3, 300);  // runs longer than a block's 256 threads
    CheckRuns(be, device, bytes, 3, 4, 7);    // odd runs: element by element below 4-byte elements
    CheckRuns(be, device, bytes, 1, 6, 12);
  }
}

TEST_CASE("depth-as-batch adapter: NCDHW 1xRxS problems of every direction match the reference") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const DepthBatchAdapter s = GemmAdapter();
  const std::vector<Problem> problems = {
      Make3d(DataType::kFp32, {4, 7, 6}, {1, 3, 3}, {0, 1, 1}, {1, 2, 2}),
      Make3d(DataType::kFp16, {3, 5, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, 8, 6, 2),
      Make3d(DataType::kFp32, {5, 6, 5}, {1, 1, 3}, {0, 1, 0}, {1, 1, 1}),  // a padded 1x1xS: not flattened
      Make3d(DataType::kFp32, {3, 6, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, 1, 5),  // one channel: x stays
      Make3d(DataType::kBf16, {3, 6, 7}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, 4, 6, 1, kCf, kCl),  // y NDHWC
  };
  int runs = 0, moved_x = 0, moved_y = 0;
  for (const Problem& base : problems) {
    for (Direction dir : kDirs) {
      Problem p = base;
      p.direction = dir;
      if (p.out_layout == kCl) {
        CHECK_FALSE(s.IsApplicable(h.target(), p).ok());  // NCDHW x and y only
        continue;
      }
      INFO(p.Canonical() << " dir " << DirectionName(dir));
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      const PerfConfig config = s.DefaultConfig(h.target(), p);
      CHECK(config == s.inner().DefaultConfig(h.target(), *DepthAsBatch(p)));
      absl::StatusOr<Solution> sol = s.GetSolution(h.target(), p, config);
      REQUIRE(sol.ok());
      for (const solver::Launch& l : sol->launches) {
        if (l.entry.rfind("tuna_transpose_runs", 0) != 0) continue;
        const bool x = l.args[0].role == BufferRole::kX || l.args[1].role == BufferRole::kX;
        moved_x += x;
        moved_y += !x;
      }
      testing::CheckMatchesReference(h, s, p, config);
      ++runs;
    }
  }
  CHECK(runs == 12);
  CHECK(moved_x == 3 * 3);  // the problems with D > 1 and C > 1, every direction
  CHECK(moved_y == 3 * 4);  // D > 1 and K > 1
}

TEST_CASE("depth-as-batch adapter: applicability") {
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu");
  REQUIRE(cpu.ok());
  const DepthBatchAdapter s = GemmAdapter();
  auto why = [&](const Problem& p) { return std::string(s.IsApplicable(*cpu, p).message()); };
  CHECK_THAT(why(Make3d(DataType::kFp32, {4, 6, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1})),
             Catch::Contains("not an identity"));
  CHECK_THAT(why(Make3d(DataType::kFp32, {4, 6, 6}, {3, 1, 1}, {1, 0, 0}, {1, 1, 1})),
             Catch::Contains("same bytes"));  // (D, H*W): every registered solver flattens it
  CHECK_THAT(why(Make3d(DataType::kFp32, {4, 6, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, 4, 6, 1, kCl, kCl)),
             Catch::Contains("same bytes"));
  CHECK_THAT(why(Make3d(DataType::kFp32, {1, 6, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1})),
             Catch::Contains("same bytes"));  // one frame: NCDHW is NCHW
  Problem flat;
  flat.n = 2, flat.c = 4, flat.k = 4, flat.in = {1, 6, 6}, flat.fil = {1, 3, 3}, flat.pad = {0, 1, 1};
  CHECK_THAT(why(flat), Catch::Contains("3-D only"));
  Problem i8 = Make3d(DataType::kInt8, {4, 6, 6}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1});
  CHECK_THAT(why(i8), Catch::Contains("INT8"));
}

TEST_CASE("depth-as-batch solvers: the FP32 SIMT and Winograd solvers on R(2+1)D's NCDHW layers") {
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  Problem layer = Make3d(DataType::kFp32, {8, 28, 28}, {1, 3, 3}, {0, 1, 1}, {1, 1, 1}, 128, 288);
  layer.n = 8;
  int found = 0;
  for (const auto& [id, s] : solver::GpuTunableSolvers()) {
    const auto* adapter = dynamic_cast<const DepthBatchAdapter*>(s.get());
    if (adapter == nullptr) continue;
    INFO(id << " " << s->Name());
    CHECK(s->Name() == std::string(adapter->inner().Name()) + "Ncdhw");
    CHECK((id >= 1043 && id <= 1048));
    Problem p = layer;
    p.direction = s->Directions().front();
    REQUIRE(s->IsApplicable(*sm90, p).ok());
    absl::StatusOr<Solution> sol = s->GetSolution(*sm90, p, s->DefaultConfig(*sm90, p));
    REQUIRE(sol.ok());
    CHECK(sol->kernels.back().source == "conv/layout_transpose.cu");
    CHECK(sol->launches.front().entry == "tuna_transpose_runs_packed");  // the first input in
    CHECK(sol->workspace_bytes >= 2 * (8 * 128 * 8 * 28 * 28) * 4);
    ++found;
  }
  CHECK(found == 6);
}

}  // namespace
}  // namespace tuna
