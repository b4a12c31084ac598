// The runtime with learned heuristics in its db dirs (issue #20), on the cpu backend: immediate
// mode and FAST Find rank with the picker on a find-db miss, the analytic fallback stays (and
// says why) without a model or out of its range, the user dir's models win over the system
// dir's, and a tunable solver with no perf-db entry runs the predicted params, verified.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/runtime/test_util.h"
#include "tuner_core/heuristics/training.h"

namespace tuna {
namespace {

using testing::CpuConfig;
using testing::CpuHandle;
using testing::TempDir;

Problem Fwd(int64_t c, int64_t hw) {
  return testing::ParseOne("conv -n 2 -c " + std::to_string(c) + " -H " + std::to_string(hw) + " -W " +
                           std::to_string(hw) + " -k 32 -y 3 -x 3 -p 1 -q 1 -F 1");
}

// Models for this handle's target where `winner` is always the faster solver (the analytic
// fallback always ranks the naive solver last) and TunaCpuGemmConv is fastest at TB_M = 16.
void WriteModels(const runtime::Handle& h, const std::string& winner, const std::string& dir) {
  heuristics::TrainingSet set;
  set.target = h.target();
  set.backend = "CPU";
  set.basename = const_cast<runtime::Handle&>(h).db().files().basename;
  const solver::Solver& gemm = *h.registry().ByName("TunaCpuGemmConv")->solver;
  int i = 0;
  for (int64_t c : {4, 8, 16, 32}) {
    for (int64_t hw : {8, 12, 16}) {
      heuristics::ProblemRecord r;
      r.problem = Fwd(c, hw);
      r.config_key = "k" + std::to_string(i++);
      r.solver_ms["ConvDirectNaiveConvFwd"] = winner == "ConvDirectNaiveConvFwd" ? 1.0 : 4.0;
      r.solver_ms["TunaCpuGemmConv"] = winner == "TunaCpuGemmConv" ? 1.0 : 4.0;
      const solver::SearchSpace space = gemm.Space(h.target(), r.problem);
      for (uint64_t k = 0; k < space.Size(); k += 5) {
        const double tb_m = static_cast<double>(space.Value(space.At(k), "TB_M"));
        r.samples["TunaCpuGemmConv"].push_back({space.At(k).ToString(), 1 + std::fabs(std::log2(tb_m / 16))});
      }
      set.problems.push_back(std::move(r));
    }
  }
  heuristics::TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 60;
  auto models = heuristics::TrainModels(set, o, nullptr);
  REQUIRE(models.ok());
  REQUIRE((*models)->Write(dir).ok());
}

TEST_CASE("immediate mode ranks with the heuristics picker on a find-db miss, else falls back") {
  TempDir user("heur_user"), sys("heur_sys"), cache("heur_cache"), none("heur_none");
  {
    auto h0 = CpuHandle(CpuConfig(none.str(), none.str(), cache.str()));
    REQUIRE(h0.ok());
    CHECK((*h0)->heuristics() == nullptr);
    auto sols = runtime::GetSolution(**h0, Fwd(12, 10));
    REQUIRE(sols.ok());
    CHECK(sols->front().source == runtime::ChoiceSource::kFallback);
    CHECK(sols->front().solver == "TunaCpuGemmConv");  // the analytic ranking puts naive last
    CHECK(sols->front().note.find("no heuristics model for") != std::string::npos);
    WriteModels(**h0, "ConvDirectNaiveConvFwd", sys.str());
  }
  auto h = CpuHandle(CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(h.ok());
  REQUIRE((*h)->heuristics() != nullptr);
  CHECK((*h)->heuristics_origin() == "system db");
  auto sols = runtime::GetSolution(**h, Fwd(12, 10));
  REQUIRE(sols.ok());
  CHECK(sols->front().source == runtime::ChoiceSource::kHeuristics);
  CHECK(sols->front().solver == "ConvDirectNaiveConvFwd");
  CHECK(sols->front().note.empty());

  Problem bwd = Fwd(12, 10);
  bwd.direction = Direction::kBackwardData;
  auto out = runtime::GetSolution(**h, bwd);
  REQUIRE(out.ok());
  CHECK(out->front().source == runtime::ChoiceSource::kFallback);
  CHECK(out->front().note.find("heuristics model not used: direction") != std::string::npos);
  out = runtime::GetSolution(**h, Fwd(12, 200));
  REQUIRE(out.ok());
  CHECK(out->front().source == runtime::ChoiceSource::kFallback);
  CHECK(out->front().note.find("outside the training range") != std::string::npos);

  // FAST Find on a miss takes the picker's first solution without benchmarking.
  runtime::RuntimeConfig fast = CpuConfig(user.str(), sys.str(), cache.str());
  fast.find_mode = runtime::FindMode::kFast;
  auto hf = CpuHandle(fast);
  REQUIRE(hf.ok());
  auto found = runtime::FindConvolution(**hf, Fwd(16, 12));
  REQUIRE(found.ok());
  CHECK_FALSE(found->trace.benchmarked);
  CHECK(found->solutions.front().source == runtime::ChoiceSource::kHeuristics);
  CHECK(found->solutions.front().solver == "ConvDirectNaiveConvFwd");

  // The user dir's models win over the system dir's.
  WriteModels(**h, "TunaCpuGemmConv", user.str());
  auto hu = CpuHandle(CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(hu.ok());
  CHECK((*hu)->heuristics_origin() == "user db");
  sols = runtime::GetSolution(**hu, Fwd(12, 10));
  REQUIRE(sols.ok());
  CHECK(sols->front().source == runtime::ChoiceSource::kHeuristics);
  CHECK(sols->front().solver == "TunaCpuGemmConv");
}

TEST_CASE("a tunable solver with no perf-db entry runs the predicted params, verified") {
  TempDir user("heur_puser"), sys("heur_psys"), cache("heur_pcache");
  {
    auto h0 = CpuHandle(CpuConfig(user.str(), sys.str(), cache.str()));
    REQUIRE(h0.ok());
    WriteModels(**h0, "TunaCpuGemmConv", sys.str());
  }
  auto h = CpuHandle(CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(h.ok());
  const solver::RegisteredSolver* gemm = (*h)->registry().ByName("TunaCpuGemmConv");
  const Problem p = Fwd(12, 10);
  auto inv = runtime::PrepareSolution(**h, p, gemm->id);
  REQUIRE(inv.ok());
  CHECK((*inv)->params_source == "heuristics model");
  const solver::SearchSpace space = gemm->solver->Space((*h)->target(), p);
  auto cfg = space.Parse((*inv)->params);
  REQUIRE(cfg.ok());
  CHECK(space.Value(*cfg, "TB_M") == 16);
  CHECK((*inv)->params != gemm->solver->DefaultConfig((*h)->target(), p).ToString());
  auto verified = testing::RunAndVerify(**h, p, gemm->id);
  REQUIRE(verified.ok());
  CHECK(verified->ok);

  // Out of range: the default config.
  const Problem far = Fwd(12, 200);
  auto def = runtime::PrepareSolution(**h, far, gemm->id);
  REQUIRE(def.ok());
  CHECK((*def)->params_source == "default");
}

}  // namespace
}  // namespace tuna
