// tuner_core/heuristics: training on records with a known answer, the picker's ranking and range
// check, the predictor's best config, the warm-start hook (and a model directory as the search's
// predictor), files on disk and their errors.
// Real XGBoost and the builtin solvers (planning only: nothing is compiled or run).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tuner_core/heuristics/config_scorer.h"
#include "tuner_core/heuristics/evaluation.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/heuristics/search_predictor.h"
#include "tuner_core/heuristics/training.h"
#include "tuner_core/runtime/fallback.h"

namespace tuna::heuristics {
namespace {

std::string TmpDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  const std::filesystem::path p = std::filesystem::path(base != nullptr ? base : "/tmp") / name;
  std::filesystem::remove_all(p);
  return p.string();
}

solver::Target CpuTarget() { return *solver::TargetForArch("cpu-avx2", 4); }

Problem Fwd(int64_t c, int64_t hw) {
  Problem p;
  p.n = 2;
  p.c = c;
  p.k = 16;
  p.in = {1, hw, hw};
  p.fil = {1, 3, 3};
  p.pad = {0, 1, 1};
  return p;
}

// The rule to learn: the naive solver wins below 8 input channels, the GEMM solver above; the
// GEMM solver's fastest config has TB_M = 32 and its time grows with the distance to it.
TrainingSet KnownSet() {
  TrainingSet set;
  set.target = CpuTarget();
  set.backend = "CPU";
  set.basename = "cpu-avx2_4";
  set.sessions = {7};
  const solver::Solver& gemm = *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver;
  int i = 0;
  for (int64_t c : {2, 3, 4, 5, 6, 12, 16, 24, 32, 48}) {
    for (int64_t hw : {8, 12, 16, 20}) {
      ProblemRecord r;
      r.problem = Fwd(c, hw);
      r.config_key = "key" + std::to_string(i++);
      r.solver_ms["ConvDirectNaiveConvFwd"] = c < 8 ? 1.0 : 3.0;
      r.solver_ms["TunaCpuGemmConv"] = c < 8 ? 2.0 : 1.0;
      const solver::SearchSpace space = gemm.Space(set.target, r.problem);
      for (uint64_t k = 0; k < space.Size(); k += 7) {
        const solver::PerfConfig cfg = space.At(k);
        const double tb_m = static_cast<double>(space.Value(cfg, "TB_M"));
        r.samples["TunaCpuGemmConv"].push_back({cfg.ToString(), 1.0 + std::fabs(std::log2(tb_m / 32))});
      }
      set.problems.push_back(std::move(r));
    }
  }
  return set;
}

std::vector<solver::RegisteredSolver> Applicable(const Problem& p) {
  return solver::SolverRegistry::Builtin().Applicable(CpuTarget(), p);
}

TEST_CASE("the picker learns which solver is faster, the predictor which config") {
  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 100;
  TrainReport rep;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(), o, &rep);
  REQUIRE(m.ok());
  CHECK(rep.train_problems == 40);
  CHECK(rep.picker_rows == 80);
  CHECK((*m)->has_picker());
  REQUIRE((*m)->HasPredictor("TunaCpuGemmConv"));

  for (auto [c, best] : {std::pair<int64_t, const char*>{3, "ConvDirectNaiveConvFwd"}, {24, "TunaCpuGemmConv"}}) {
    absl::StatusOr<std::vector<solver::RegisteredSolver>> ranked = (*m)->RankSolvers(Fwd(c, 10), CpuTarget(), Applicable(Fwd(c, 10)));
    REQUIRE(ranked.ok());
    CHECK(ranked->front().solver->Name() == best);
  }

  const solver::Solver& gemm = *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver;
  absl::StatusOr<ConfigScoreFn> score = MakeConfigScorer(*m, Fwd(20, 14), CpuTarget(), gemm);
  REQUIRE(score.ok());
  absl::StatusOr<std::vector<solver::PerfConfig>> top = TopPredicted(*score, Fwd(20, 14), CpuTarget(), gemm, 3);
  REQUIRE(top.ok());
  REQUIRE(top->size() == 3);
  // The best valid TB_M: the valid value nearest to 32 (in log2), whatever the problem allows.
  const solver::SearchSpace space = gemm.Space(CpuTarget(), Fwd(20, 14));
  double nearest = 1e9;
  for (uint64_t k = 0; k < space.Size(); ++k) {
    if (!gemm.IsValid(CpuTarget(), Fwd(20, 14), space.At(k)).ok()) continue;
    nearest = std::min(nearest, std::fabs(std::log2(static_cast<double>(space.Value(space.At(k), "TB_M")) / 32)));
  }
  CHECK(std::fabs(std::log2(static_cast<double>(space.Value(top->front(), "TB_M")) / 32)) == nearest);
  for (const solver::PerfConfig& c : *top) CHECK(gemm.IsValid(CpuTarget(), Fwd(20, 14), c).ok());
}

TEST_CASE("problems outside the training range are refused with the reason") {
  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 5;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(), o, nullptr);
  REQUIRE(m.ok());
  Problem bwd = Fwd(16, 12);
  bwd.direction = Direction::kBackwardData;
  absl::Status st = (*m)->CheckRange(bwd, CpuTarget());
  CHECK(absl::IsOutOfRange(st));
  CHECK(st.message().find("direction") != std::string_view::npos);
  st = (*m)->CheckRange(Fwd(16, 500), CpuTarget());
  CHECK(absl::IsOutOfRange(st));
  CHECK(st.message().find("in_h = 500 is outside the training range [8, 20]") != std::string_view::npos);
  CHECK(absl::IsOutOfRange((*m)->RankSolvers(Fwd(16, 500), CpuTarget(), Applicable(Fwd(16, 500))).status()));
  CHECK((*m)->CheckRange(Fwd(16, 30), CpuTarget()).ok());  // within 2x of the largest size
  const solver::Solver& gemm = *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver;
  CHECK(absl::IsOutOfRange(MakeConfigScorer(*m, Fwd(16, 500), CpuTarget(), gemm).status()));
  const solver::Solver& naive = *solver::SolverRegistry::Builtin().ByName("ConvDirectNaiveConvFwd")->solver;
  CHECK(absl::IsNotFound(MakeConfigScorer(*m, Fwd(16, 12), CpuTarget(), naive).status()));
}

TEST_CASE("models written to a directory load and predict the same") {
  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 10;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(), o, nullptr);
  REQUIRE(m.ok());
  const std::string dir = TmpDir("models");
  absl::StatusOr<std::vector<std::string>> files = (*m)->Write(dir);
  REQUIRE(files.ok());
  REQUIRE(files->size() == 3);
  CHECK(files->back() == dir + "/cpu-avx2_4_metadata.tn.json");
  CHECK(std::filesystem::exists(dir + "/cpu-avx2_4.tn.model"));
  CHECK(std::filesystem::exists(dir + "/cpu-avx2_4_TunaCpuGemmConv.ktn.model"));
  absl::StatusOr<std::shared_ptr<const Models>> back = Models::Load(dir, "cpu-avx2_4");
  REQUIRE(back.ok());
  const ModelMetadata& meta = (*back)->metadata();
  CHECK(meta.sessions == std::vector<int64_t>{7});
  CHECK(meta.arch == "cpu-avx2");
  CHECK(meta.library.rfind("xgboost 1.", 0) == 0);
  CHECK(meta.picker->solvers.size() == 2);
  CHECK(meta.train_configs.size() == 40);
  const Problem p = Fwd(10, 10);
  const solver::Solver& gemm = *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver;
  const solver::SearchSpace space = gemm.Space(CpuTarget(), p);
  const std::vector<solver::PerfConfig> some = {space.At(0), space.At(100), space.At(200)};
  CHECK(*(*back)->ScoreConfigs(p, CpuTarget(), "TunaCpuGemmConv", space, some) ==
        *(*m)->ScoreConfigs(p, CpuTarget(), "TunaCpuGemmConv", space, some));

  CHECK(absl::IsNotFound(Models::Load(dir, "gfx90a104").status()));
  std::ofstream(dir + "/cpu-avx2_4_metadata.tn.json") << "{ not json";
  CHECK(absl::IsDataLoss(Models::Load(dir, "cpu-avx2_4").status()));
  std::ofstream(dir + "/cpu-avx2_4_metadata.tn.json") << R"({"format": 99})";
  CHECK(absl::IsFailedPrecondition(Models::Load(dir, "cpu-avx2_4").status()));
}

TEST_CASE("a model directory is the search's predictor: its best configs follow the default") {
  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 30;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(), o, nullptr);
  REQUIRE(m.ok());
  const std::string dir = TmpDir("search_models");
  REQUIRE((*m)->Write(dir).ok());
  absl::StatusOr<SearchPredictor> loaded = LoadSearchPredictor(dir);
  REQUIRE(loaded.ok());
  CHECK(loaded->sets == std::vector<std::string>{"cpu-avx2_4: predictors for TunaCpuGemmConv (sessions 7)"});

  const solver::Solver& gemm = *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver;
  const Problem p = Fwd(20, 14);
  absl::StatusOr<search::ScoreFn> score = loaded->predictor(p, CpuTarget(), gemm);
  REQUIRE(score.ok());
  // The strategy's seeds are the predictor's best valid configs after the default (TopPredicted,
  // which ranks the same way, less the default).
  absl::StatusOr<ConfigScoreFn> direct = MakeConfigScorer(*m, p, CpuTarget(), gemm);
  REQUIRE(direct.ok());
  absl::StatusOr<std::vector<solver::PerfConfig>> top = TopPredicted(*direct, p, CpuTarget(), gemm, 9);
  REQUIRE(top.ok());
  const solver::PerfConfig def = gemm.DefaultConfig(CpuTarget(), p);
  std::vector<solver::PerfConfig> expected = {def};
  for (const solver::PerfConfig& c : *top)
    if (!(c == def) && expected.size() < 9) expected.push_back(c);
  auto strategy = search::NewModelStrategy();
  search::StrategyInput in;
  in.space = gemm.Space(CpuTarget(), p);
  in.is_valid = [&](const solver::PerfConfig& c) { return gemm.IsValid(CpuTarget(), p, c).ok(); };
  in.prior = {def};
  in.score = *score;
  in.scored_first = 8;
  REQUIRE(strategy->Start(in).ok());
  CHECK(strategy->score_use().seeded == 8);
  CHECK(strategy->Next(9) == expected);

  // Another CU count of the same arch is served by that arch's models; another arch is not
  // (its basename: gfx90a with 104 = 0x68 CUs).
  CHECK(loaded->predictor(p, *solver::TargetForArch("cpu-avx2", 8), gemm).ok());
  absl::StatusOr<search::ScoreFn> gpu = loaded->predictor(p, *solver::TargetForArch("gfx90a", 104), gemm);
  CHECK(absl::IsNotFound(gpu.status()));
  CHECK(gpu.status().message() == "no heuristics model for gfx90a68 in " + dir);
  const solver::Solver& naive = *solver::SolverRegistry::Builtin().ByName("ConvDirectNaiveConvFwd")->solver;
  CHECK(absl::IsNotFound(loaded->predictor(p, CpuTarget(), naive).status()));
  Problem bwd = p;
  bwd.direction = Direction::kBackwardData;
  CHECK(absl::IsOutOfRange(loaded->predictor(bwd, CpuTarget(), gemm).status()));

  // A directory that does not exist, one without models, one whose models do not load.
  CHECK(absl::IsNotFound(LoadSearchPredictor(dir + "/nowhere").status()));
  const std::string empty = TmpDir("no_models");
  std::filesystem::create_directories(empty);
  absl::Status st = LoadSearchPredictor(empty).status();
  CHECK(absl::IsInvalidArgument(st));
  CHECK(st.message().find("holds no heuristics models") != std::string_view::npos);
  std::ofstream(dir + "/cpu-avx2_4_TunaCpuGemmConv.ktn.model") << "not a model";
  st = LoadSearchPredictor(dir).status();
  CHECK_FALSE(st.ok());
  CHECK(st.message().find("heuristics models cpu-avx2_4 in " + dir) != std::string_view::npos);
}

TEST_CASE("the split is by config, deterministic, and eval compares with the fallback") {
  int held = 0;
  for (int i = 0; i < 1000; ++i) held += HeldOut("config" + std::to_string(i), 0.2, 1) ? 1 : 0;
  CHECK(held > 150);
  CHECK(held < 250);
  CHECK(HeldOut("config5", 0.2, 1) == HeldOut("config5", 0.2, 1));
  CHECK_FALSE(HeldOut("config5", 0, 1));
  TrainOptions bad;
  bad.holdout = 1;
  CHECK(absl::IsInvalidArgument(TrainModels(KnownSet(), bad, nullptr).status()));

  TrainOptions o;
  o.holdout = 0.3;
  o.picker.rounds = o.predictor.rounds = 40;
  const TrainingSet set = KnownSet();
  TrainReport rep;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(set, o, &rep);
  REQUIRE(m.ok());
  CHECK(rep.held_out_problems + rep.train_problems == 40);
  std::vector<const ProblemRecord*> test;
  for (const ProblemRecord& r : set.problems) {
    if (HeldOut(r.config_key, 0.3, 1)) test.push_back(&r);
  }
  REQUIRE(!test.empty());
  backend::DeviceInfo info;
  info.arch = "cpu-avx2";
  info.compute_units = 4;
  absl::StatusOr<EvalReport> ev = Evaluate(**m, test, CpuTarget(), runtime::ModelForDevice(backend::BackendKind::kCpu, info),
                                           solver::SolverRegistry::Builtin());
  REQUIRE(ev.ok());
  CHECK(ev->picker.cases == static_cast<int64_t>(test.size()));
  // The analytic fallback ranks the GEMM solver first everywhere: wrong below 8 channels, where
  // it is 2x slower. The picker may only miss at the boundary (a channel count never trained).
  int64_t small = 0;
  for (const ProblemRecord* r : test) small += r->problem.c < 8 ? 1 : 0;
  CHECK(ev->fallback.cases == static_cast<int64_t>(test.size()));
  CHECK(ev->fallback.within10 == ev->fallback.cases - small);
  CHECK(ev->fallback.mean_slowdown == Approx(static_cast<double>(small) / static_cast<double>(test.size())));
  CHECK(ev->picker.within10 >= ev->picker.cases - 4);
  CHECK(ev->picker.mean_slowdown <= ev->fallback.mean_slowdown);
  CHECK(ev->predicted.cases == static_cast<int64_t>(test.size()));
  CHECK(ev->predicted.within15 + ev->predicted.unmeasured <= ev->predicted.cases);
  CHECK(ev->ranked.cases == static_cast<int64_t>(test.size()));
  CHECK(ev->ranked.unmeasured == 0);
  CHECK(ev->ranked.median_ratio == 1.0);
  CHECK(ev->defaults.cases + ev->default_unmeasured == static_cast<int64_t>(test.size()));
}

TEST_CASE("eval times the runtime's predicted params only from samples: never timed is a miss") {
  TrainOptions o;
  o.holdout = 0;
  o.picker.rounds = o.predictor.rounds = 40;
  absl::StatusOr<std::shared_ptr<const Models>> m = TrainModels(KnownSet(), o, nullptr);
  REQUIRE(m.ok());
  const solver::Solver& gemm = *solver::SolverRegistry::Builtin().ByName("TunaCpuGemmConv")->solver;
  ProblemRecord r;
  r.config_key = "unseen";
  r.problem = Fwd(20, 14);
  r.solver_ms = {{"ConvDirectNaiveConvFwd", 3.0}, {"TunaCpuGemmConv", 1.0}};
  absl::StatusOr<ConfigScoreFn> score = MakeConfigScorer(*m, r.problem, CpuTarget(), gemm);
  REQUIRE(score.ok());
  absl::StatusOr<std::vector<solver::PerfConfig>> top = TopPredicted(*score, r.problem, CpuTarget(), gemm, 1);
  REQUIRE(top.ok());
  REQUIRE(top->size() == 1);
  const std::string picked = top->front().ToString();
  const std::string other = gemm.DefaultConfig(CpuTarget(), r.problem).ToString();
  REQUIRE(other != picked);
  backend::DeviceInfo info;
  info.arch = "cpu-avx2";
  info.compute_units = 4;
  const runtime::DeviceModel device = runtime::ModelForDevice(backend::BackendKind::kCpu, info);
  // Timed: its own time against the fastest sample.
  r.samples["TunaCpuGemmConv"] = {{other, 1.0}, {picked, 1.1}};
  absl::StatusOr<EvalReport> ev = Evaluate(**m, {&r}, CpuTarget(), device, solver::SolverRegistry::Builtin());
  REQUIRE(ev.ok());
  CHECK(ev->predicted.cases == 1);
  CHECK(ev->predicted.unmeasured == 0);
  CHECK(ev->predicted.within15 == 1);
  CHECK(ev->predicted.median_ratio == Approx(1.1));
  CHECK(ev->defaults.median_ratio == 1.0);
  // Never timed: a miss with an infinite ratio, and a note; the ranked column still has a time.
  r.samples["TunaCpuGemmConv"] = {{other, 1.0}};
  ev = Evaluate(**m, {&r}, CpuTarget(), device, solver::SolverRegistry::Builtin());
  REQUIRE(ev.ok());
  CHECK(ev->predicted.cases == 1);
  CHECK(ev->predicted.unmeasured == 1);
  CHECK(ev->predicted.within15 == 0);
  CHECK(std::isinf(ev->predicted.median_ratio));
  CHECK(ev->ranked.unmeasured == 0);
  CHECK(ev->ranked.within15 == 1);
  bool noted = false;
  for (const std::string& n : ev->notes) noted |= n.find("never timed in the session, counted as a miss") != std::string::npos;
  CHECK(noted);
}

}  // namespace
}  // namespace tuna::heuristics
