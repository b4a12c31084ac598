// (c) Search spaces, IsValid pruning, default configs and solution plans of the tunable GPU
// solvers; pure CPU planning, no compiler or device needed.
#include <map>
#include <random>
#include <set>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/solver/conv/gpu_direct_tiled.h"
#include "tuner_core/solver/conv/gpu_igemm.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Solver;
using solver::Target;

Target Arch(const std::string& arch) {
  absl::StatusOr<Target> t = solver::TargetForArch(arch);
  REQUIRE(t.ok());
  return *t;
}

const Solver& ByName(const solver::SolverList& list, std::string_view name) {
  for (const auto& [id, s] : list)
    if (s->Name() == name) return *s;
  FAIL("no solver " << name);
  return *list.front().second;
}

PerfConfig Config(std::vector<int64_t> v) {
  PerfConfig c;
  c.values = std::move(v);
  return c;
}

Problem ResNet(int index, Direction dir, DataType type, Layout layout) {
  std::vector<Problem> layers = testing::ResNet50Layers();
  REQUIRE(static_cast<int>(layers.size()) == 23);
  return testing::With(layers[index], dir, type, layout);
}

// The general-coverage solvers (ids 1001-1004: every layout, type, 2D/3D, HIP and CUDA). The
// fast forward solvers (1010+, CUDA sm_80+ only) have their own tests (gpu_fast_*_test.cc).
solver::SolverList GeneralSolvers() {
  solver::SolverList out;
  for (auto& entry : solver::GpuTunableSolvers()) {
    if (entry.first <= 1004) out.push_back(std::move(entry));
  }
  return out;
}

TEST_CASE("GPU solver set: ids unique in 1001-1099, candidates' ids reserved and outside the registry") {
  std::set<uint64_t> ids;
  std::set<std::string> names;
  for (const auto& [id, s] : solver::GpuTunableSolvers()) {
    CHECK(id >= 1001);
    CHECK(id <= 1099);
    CHECK(ids.insert(id).second);
    names.insert(std::string(s->Name()));
  }
  for (const auto& [id, s] : solver::CandidateGpuSolvers()) {
    CHECK(id >= 1001);
    CHECK(id <= 1099);
    CHECK(ids.insert(id).second);
    CHECK(names.insert(std::string(s->Name())).second);
    CHECK(solver::SolverRegistry::Builtin().ById(id) == nullptr);
    CHECK(solver::SolverRegistry::Builtin().ByName(s->Name()) == nullptr);
  }
}

TEST_CASE("GPU solver set: ids 1001+, unique names, axis names UPPER_CASE and prefixed by level") {
  const solver::SolverList list = GeneralSolvers();
  REQUIRE(list.size() == 4);
  std::set<std::string> names;
  uint64_t expect = 1001;
  for (const auto& [id, s] : list) {
    CHECK(id == expect++);
    CHECK(s->IsTunable());
    names.insert(std::string(s->Name()));
    Problem p;
    const solver::SearchSpace space = s->Space(Arch("sm_90"), p);
    for (const auto& axis : space.axes()) {
      INFO(axis.name);
      CHECK((axis.name.rfind("TB_", 0) == 0 || axis.name.rfind("THREAD_", 0) == 0 || axis.name == "VEC_K" ||
             axis.name == "STAGES" || axis.name == "SPLIT_K"));
    }
  }
  CHECK(names == std::set<std::string>{"TunaDirectTiledFwd", "TunaIgemmFwd", "TunaIgemmBwd", "TunaIgemmWrw"});
}

TEST_CASE("GPU solvers: applicability follows direction, type, mode, target and dims") {
  const solver::SolverList list = solver::GpuTunableSolvers();
  const Target gpu = Arch("gfx90a");
  const Problem f = ResNet(2, Direction::kForward, DataType::kFp32, Layout::kNCHW);
  CHECK(ByName(list, "TunaIgemmFwd").IsApplicable(gpu, f).ok());
  CHECK(ByName(list, "TunaDirectTiledFwd").IsApplicable(gpu, f).ok());
  CHECK_FALSE(ByName(list, "TunaIgemmBwd").IsApplicable(gpu, f).ok());
  CHECK_FALSE(ByName(list, "TunaIgemmWrw").IsApplicable(gpu, f).ok());
  CHECK(ByName(list, "TunaIgemmBwd").IsApplicable(gpu, testing::With(f, Direction::kBackwardData, DataType::kBf16, Layout::kNHWC)).ok());
  CHECK(ByName(list, "TunaIgemmWrw").IsApplicable(gpu, testing::With(f, Direction::kBackwardWeights, DataType::kFp16, Layout::kNHWC)).ok());

  Problem cpu_only = f;
  absl::Status st = ByName(list, "TunaIgemmFwd").IsApplicable(Arch("cpu-x86_64"), cpu_only);
  CHECK(st.code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(st.message()).find("TunaIgemmFwd") != std::string::npos);

  Problem int8 = f;
  int8.data_type = DataType::kInt8;
  CHECK_FALSE(ByName(list, "TunaIgemmFwd").IsApplicable(gpu, int8).ok());
  Problem trans = f;
  trans.mode = ConvMode::kTrans;
  CHECK_FALSE(ByName(list, "TunaIgemmFwd").IsApplicable(gpu, trans).ok());

  // 3D: igemm yes, the 2D direct kernel no.
  const Problem p3 = testing::EdgeProblems().back();
  REQUIRE(p3.spatial_dims == 3);
  CHECK(ByName(list, "TunaIgemmFwd").IsApplicable(gpu, p3).ok());
  CHECK_FALSE(ByName(list, "TunaDirectTiledFwd").IsApplicable(gpu, p3).ok());

  // A filter footprint beyond shared memory rules the direct kernel out, not igemm.
  Problem huge = f;
  huge.fil = {1, 61, 61};
  huge.dilation = {1, 4, 4};
  huge.in = {1, 300, 300};
  huge.pad = {0, 0, 0};
  CHECK_FALSE(ByName(list, "TunaDirectTiledFwd").IsApplicable(gpu, huge).ok());
  CHECK(ByName(list, "TunaIgemmFwd").IsApplicable(gpu, huge).ok());
}

TEST_CASE("GPU solvers: default config is valid and params round-trip, for every test problem") {
  const solver::SolverList list = GeneralSolvers();
  std::vector<Problem> base = testing::ResNet50Layers();
  REQUIRE(base.size() == 23);
  for (const Problem& p : testing::EdgeProblems()) base.push_back(p);
  int checked = 0;
  for (const std::string arch : {"sm_90", "gfx908", "gfx90a"}) {
    const Target t = Arch(arch);
    for (const auto& [id, s] : list) {
      for (const Problem& b : base) {
        for (DataType type : {DataType::kFp32, DataType::kFp16, DataType::kBf16}) {
          for (Layout layout : {Layout::kNCHW, Layout::kNHWC}) {
            const Problem p = testing::With(b, s->Directions()[0], type, layout);
            INFO(s->Name() << " " << arch << " " << p.Canonical());
            absl::Status app = s->IsApplicable(t, p);
            // Every test problem is in the coverage of the igemm solvers; direct covers 2D.
            if (s->Name() != "TunaDirectTiledFwd" || p.spatial_dims == 2) {
              INFO(app.message());
              REQUIRE(app.ok());
            }
            if (!app.ok()) continue;
            const PerfConfig def = s->DefaultConfig(t, p);
            INFO("default " << def.ToString());
            CHECK(s->IsValid(t, p, def).ok());
            const solver::SearchSpace space = s->Space(t, p);
            absl::StatusOr<PerfConfig> back = space.Parse(def.ToString());
            REQUIRE(back.ok());
            CHECK(*back == def);
            absl::StatusOr<solver::Solution> sol = s->GetSolution(t, p, def);
            REQUIRE(sol.ok());
            REQUIRE(sol->launches.size() >= 1);
            CHECK(sol->launches[0].block.x >= 32);
            CHECK(sol->launches[0].block.x <= 512);
            CHECK(sol->launches[0].shared_bytes <= t.max_shared_bytes_per_block);
            ++checked;
          }
        }
      }
    }
  }
  CHECK(checked > 500);
}

TEST_CASE("IgemmSolver: IsValid prunes threads, shared memory, registers, vec and split_k") {
  const solver::SolverList list = solver::GpuTunableSolvers();
  const Solver& fwd = ByName(list, "TunaIgemmFwd");
  const Solver& bwd = ByName(list, "TunaIgemmBwd");
  const Solver& wrw = ByName(list, "TunaIgemmWrw");
  const Target t = Arch("sm_90");
  const Problem p = ResNet(2, Direction::kForward, DataType::kFp32, Layout::kNCHW);  // 64->64 3x3 56x56

  CHECK(fwd.IsValid(t, p, Config({64, 64, 8, 4, 4, 1, 2})).ok());
  CHECK_FALSE(fwd.IsValid(t, p, Config({64, 64, 8, 4, 4, 1})).ok());           // axis missing
  CHECK_FALSE(fwd.IsValid(t, p, Config({48, 64, 8, 4, 4, 1, 2})).ok());        // outside domain
  CHECK_FALSE(fwd.IsValid(t, p, Config({128, 128, 8, 1, 1, 1, 2})).ok());      // 16384 threads
  CHECK_FALSE(fwd.IsValid(t, p, Config({16, 16, 8, 4, 4, 1, 2})).ok());        // 16 threads
  CHECK_FALSE(fwd.IsValid(t, p, Config({128, 128, 32, 8, 8, 1, 2})).ok());     // 66 KB shared
  const Problem wide = ResNet(3, Direction::kForward, DataType::kFp32, Layout::kNCHW);  // K = 256
  CHECK(fwd.IsValid(t, wide, Config({128, 128, 16, 8, 8, 1, 2})).ok());        // 33 KB shared
  CHECK_FALSE(fwd.IsValid(t, p, Config({16, 16, 8, 8, 8, 1, 1})).ok());        // 4 threads
  // Forward NCHW: the filter is contiguous along GEMM-K (C*R*S = 576), so vec 4 is allowed.
  CHECK(fwd.IsValid(t, p, Config({64, 64, 8, 4, 4, 4, 2})).ok());
  CHECK_FALSE(fwd.IsValid(t, p, Config({64, 64, 4, 4, 4, 8, 2})).ok());       // tb_k % vec
  CHECK_FALSE(fwd.IsValid(t, p, Config({64, 64, 8, 4, 4, 8, 2})).ok());       // 32-byte fp32 vector
  // Backward data NCHW: no operand is contiguous along GEMM-K.
  const Problem b = testing::With(p, Direction::kBackwardData, DataType::kFp32, Layout::kNCHW);
  CHECK(bwd.IsValid(t, b, Config({64, 64, 8, 4, 4, 1, 2})).ok());
  CHECK_FALSE(bwd.IsValid(t, b, Config({64, 64, 8, 4, 4, 2, 2})).ok());
  // NHWC: dy is contiguous along K/G = 64.
  const Problem bn = testing::With(p, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
  CHECK(bwd.IsValid(t, bn, Config({64, 64, 8, 4, 4, 8, 2})).ok());
  // FP16 NHWC forward with C/G = 3 (first ResNet layer): no vector loads possible.
  const Problem first = ResNet(0, Direction::kForward, DataType::kFp16, Layout::kNHWC);
  CHECK_FALSE(fwd.IsValid(t, first, Config({64, 64, 8, 4, 4, 2, 2})).ok());
  CHECK(fwd.IsValid(t, first, Config({64, 64, 8, 4, 4, 1, 2})).ok());
  // Tiles far larger than the GEMM are pruned: K = 64 here (tb_n 128 >= 2 * 64).
  CHECK_FALSE(fwd.IsValid(t, p, Config({64, 128, 8, 4, 8, 1, 2})).ok());
  // split_k: the reduction of 32*56*56 has 12544 tiles of 8; the 64x576 GEMM of 64x64 tiles.
  const Problem w = testing::With(p, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW);
  CHECK(wrw.IsValid(t, w, Config({64, 64, 8, 4, 4, 1, 2, 64})).ok());
  Problem tiny = testing::EdgeProblems()[0];
  tiny.direction = Direction::kBackwardWeights;  // N*Ho*Wo = 25: 4 tiles of 8
  CHECK(wrw.IsValid(t, tiny, Config({16, 16, 8, 1, 1, 1, 1, 4})).ok());
  CHECK_FALSE(wrw.IsValid(t, tiny, Config({16, 16, 8, 1, 1, 1, 1, 8})).ok());
}

TEST_CASE("IgemmSolver: plans and solutions") {
  const solver::SolverList list = solver::GpuTunableSolvers();
  const auto& fwd = dynamic_cast<const solver::IgemmSolver&>(ByName(list, "TunaIgemmFwd"));
  const auto& bwd = dynamic_cast<const solver::IgemmSolver&>(ByName(list, "TunaIgemmBwd"));
  const auto& wrw = dynamic_cast<const solver::IgemmSolver&>(ByName(list, "TunaIgemmWrw"));
  const Target t = Arch("gfx90a");
  const Problem p = ResNet(6, Direction::kForward, DataType::kFp16, Layout::kNHWC);  // 128->128 3x3 s2 56
  REQUIRE(p.stride[1] == 2);

  solver::IgemmPlan fp = fwd.Plan(t, p, Config({64, 64, 16, 4, 4, 8, 2}));
  CHECK(fp.gm == 32 * 28 * 28);
  CHECK(fp.gn == 128);
  CHECK(fp.gk == 128 * 9);
  CHECK(fp.korder == 1);
  CHECK(fp.vec_a == 8);
  CHECK(fp.vec_b == 8);
  CHECK(fp.threads == 256);

  const Problem b = testing::With(p, Direction::kBackwardData, DataType::kFp16, Layout::kNHWC);
  solver::IgemmPlan bp = bwd.Plan(t, b, Config({64, 64, 16, 4, 4, 8, 2}));
  CHECK(bp.classes == 4);
  CHECK(bp.gm == 32 * 28 * 28);
  absl::StatusOr<solver::Solution> bs = bwd.GetSolution(t, b, Config({64, 64, 16, 4, 4, 8, 2}));
  REQUIRE(bs.ok());
  CHECK(bs->launches[0].grid.z == 4);
  CHECK(bs->launches[0].grid.x == 32 * 28 * 28 / 64);
  CHECK(bs->launches[0].grid.y == 2);
  CHECK(bs->zero_first.empty());

  // Wrw split-K: FP32 sums straight into dw (zeroed first); FP16 through an FP32 workspace.
  const Problem w32 = testing::With(p, Direction::kBackwardWeights, DataType::kFp32, Layout::kNCHW);
  absl::StatusOr<solver::Solution> s32 = wrw.GetSolution(t, w32, Config({64, 64, 8, 4, 4, 1, 2, 8}));
  REQUIRE(s32.ok());
  CHECK(s32->workspace_bytes == 0);
  REQUIRE(s32->zero_first.size() == 1);
  CHECK(s32->zero_first[0] == solver::BufferRole::kW);
  CHECK(s32->launches.size() == 1);
  CHECK(s32->launches[0].grid.z == 8);
  const Problem w16 = testing::With(p, Direction::kBackwardWeights, DataType::kFp16, Layout::kNHWC);
  absl::StatusOr<solver::Solution> s16 = wrw.GetSolution(t, w16, Config({64, 64, 8, 4, 4, 1, 2, 8}));
  REQUIRE(s16.ok());
  CHECK(s16->workspace_bytes == 128ull * 128 * 9 * 4);
  REQUIRE(s16->zero_first.size() == 1);
  CHECK(s16->zero_first[0] == solver::BufferRole::kWorkspace);
  REQUIRE(s16->launches.size() == 2);
  CHECK(s16->launches[1].entry == "tuna_igemm_wrw_finalize");
  absl::StatusOr<solver::Solution> s1 = wrw.GetSolution(t, w16, Config({64, 64, 8, 4, 4, 1, 2, 1}));
  REQUIRE(s1.ok());
  CHECK(s1->zero_first.empty());
  CHECK(s1->launches.size() == 1);

  // An invalid config is refused by GetSolution too.
  CHECK_FALSE(fwd.GetSolution(t, p, Config({128, 128, 8, 1, 1, 1, 2})).ok());
}

TEST_CASE("DirectTiledFwdSolver: pruning and shared memory") {
  const solver::SolverList list = solver::GpuTunableSolvers();
  const Solver& d = ByName(list, "TunaDirectTiledFwd");
  const Target t = Arch("gfx908");
  const Problem p = ResNet(2, Direction::kForward, DataType::kFp32, Layout::kNCHW);
  CHECK(d.IsValid(t, p, Config({8, 8, 16, 8, 4})).ok());
  CHECK_FALSE(d.IsValid(t, p, Config({8, 8, 16, 8, 32})).ok());   // thread_k outside domain
  CHECK_FALSE(d.IsValid(t, p, Config({8, 8, 4, 8, 8})).ok());     // thread_k > tb_k
  CHECK_FALSE(d.IsValid(t, p, Config({16, 32, 16, 8, 1})).ok());  // 8192 threads
  CHECK_FALSE(d.IsValid(t, p, Config({1, 4, 4, 1, 1})).ok());     // 16 threads
  // 7x7 stride 2: 16 channels of a 37x69 patch plus 32x16 7x7 filters = 258 KB > 64 KB.
  const Problem first = ResNet(0, Direction::kForward, DataType::kFp32, Layout::kNCHW);
  CHECK(solver::DirectTiledFwdSolver::SharedBytes(first, 16, 32, 32, 16) == 263744);
  CHECK_FALSE(d.IsValid(t, first, Config({2, 32, 32, 16, 8})).ok());  // 2*32*4 threads, 95 KB
  CHECK(d.IsValid(t, first, Config({2, 32, 4, 1, 1})).ok());
  absl::StatusOr<solver::Solution> sol = d.GetSolution(t, p, Config({8, 8, 16, 8, 4}));
  REQUIRE(sol.ok());
  CHECK(sol->launches[0].block.x == 8 * 8 * 4);
  CHECK(sol->launches[0].grid.x == 7 * 7);
  CHECK(sol->launches[0].grid.y == 4);
  CHECK(sol->launches[0].grid.z == 32);
  CHECK(sol->launches[0].shared_bytes == solver::DirectTiledFwdSolver::SharedBytes(p, 8, 8, 16, 8));
}

TEST_CASE("GPU solvers: random sampling finds many valid configs and IsValid agrees with GetSolution") {
  const solver::SolverList list = GeneralSolvers();
  const Target t = Arch("sm_90");
  std::mt19937_64 rng(7);
  for (const auto& [id, s] : list) {
    const Problem p = ResNet(11, s->Directions()[0], DataType::kFp16, Layout::kNHWC);
    const solver::SearchSpace space = s->Space(t, p);
    int valid = 0;
    for (int i = 0; i < 3000; ++i) {
      PerfConfig c = space.At(rng() % space.Size());
      const bool ok = s->IsValid(t, p, c).ok();
      valid += ok;
      CHECK(s->GetSolution(t, p, c).ok() == ok);
    }
    INFO(s->Name() << " valid " << valid << " of 3000");
    CHECK(valid > 30);
    CHECK(valid < 3000);  // pruning prunes something
  }
}

}  // namespace
}  // namespace tuna
