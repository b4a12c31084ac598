// The Tuner's driver loop over a registry (cpu backend), dry runs (compile only) and reports.
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/search/cpu_fixture.h"
#include "tests/search/test_solvers.h"
#include "tuner_core/backend/hip/hip_backend.h"
#include "tuner_core/search/report.h"
#include "tuner_core/search/session.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

using testing::CpuFixture;
using testing::ParseOne;

TuneOptions Fast() {
  TuneOptions o;
  o.evaluator.repetitions = 4;
  o.evaluator.early_repetitions = 2;
  o.retime_repetitions = 3;
  return o;
}

TuneOptions FastRandom(uint64_t budget) {
  TuneOptions o = Fast();
  o.strategy = StrategyKind::kRandom;
  o.budget = budget;
  return o;
}

TEST_CASE("tuner searches every applicable solver and records every outcome") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSlow, testing::kCorrect, testing::kGarbage,
                                          testing::kBrokenBuild, testing::kWritesNothing});
  std::vector<TuneProgress> progress;
  TuneOptions o = Fast();
  o.progress = [&](const TuneProgress& p) { progress.push_back(p); };
  Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  auto r = tuner.Tune(p);
  REQUIRE(r.ok());
  REQUIRE(r->solvers.size() == 2);  // naive fwd + fault solver (bwd naive not applicable)
  CHECK(r->reference == "cpu");
  const SolverTuneResult& naive = r->solvers[0];
  CHECK(naive.name == "ConvDirectNaiveConvFwd");
  CHECK_FALSE(naive.tunable);
  CHECK(naive.disposition == Disposition::kPassed);
  CHECK(naive.tried == 1);
  const SolverTuneResult& t = r->solvers[1];
  CHECK(t.tunable);
  CHECK(t.disposition == Disposition::kPassed);
  CHECK(t.tried == 5);
  CHECK(t.passed == 2);
  CHECK(t.failed == 3);
  CHECK(t.by_disposition.at(Disposition::kIncorrect) == 2);
  CHECK(t.by_disposition.at(Disposition::kCompileFailed) == 1);
  REQUIRE(t.default_ms.has_value());  // the default (kSlow) is always tried first
  CHECK(t.history.front().first == solver::PerfConfig{{testing::kSlow}});
  CHECK((t.best_params == "0" || t.best_params == "5"));
  CHECK(t.best_ms > 0);
  CHECK(r->best >= 0);
  // Progress: one call per candidate, totals known up front for exhaustive search.
  REQUIRE(progress.size() == 6);
  for (size_t i = 0; i < progress.size(); ++i) {
    CHECK(progress[i].done == i + 1);
    CHECK(progress[i].total == 6);
  }
  CHECK(progress.back().best_ms > 0);
  // Reports carry the outcome.
  const std::string text = FormatTuneResult(*r);
  CHECK(text.find("TestFaultSolver") != std::string::npos);
  const std::string json = TuneResultsJson({*r});
  CHECK(json.find("\"Incorrect\": 2") != std::string::npos);
  CHECK(json.find("\"best\": {\"solver\"") != std::string::npos);
}

TEST_CASE("tuner honours the budget, the strategy and the solver filter") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({0, 1, 3, 5});
  TuneOptions o = FastRandom(2);
  o.solvers = {"TestFaultSolver"};
  Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
  auto r = tuner.Tune(ParseOne("conv -n 1 -c 4 -H 5 -W 5 -k 4 -y 3 -x 3 -F 4"));
  REQUIRE(r.ok());
  REQUIRE(r->solvers.size() == 1);
  CHECK(r->solvers[0].tried == 2);
  CHECK(r->solvers[0].history.front().first == solver::PerfConfig{{0}});  // default first
  CHECK(r->solvers[0].disposition == Disposition::kPassed);
}

TEST_CASE("a search planned ahead tries what a search planned in place tries") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({0, 1, 3, 5});
  TuneOptions o = FastRandom(3);
  o.seed = 7;
  const Problem p = ParseOne("conv -n 1 -c 4 -H 5 -W 5 -k 4 -y 3 -x 3 -F 1");
  const Problem other = ParseOne("conv -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -F 1");
  Tuner in_place(*registry, *f.backend, f.device.get(), f.target, o);
  Tuner ahead(*registry, *f.backend, f.device.get(), f.target, o);
  ahead.PlanAhead(p);
  auto a = in_place.Tune(p);
  auto b = ahead.Tune(p);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(b->plan_ms < 1.0);  // nothing left to plan
  REQUIRE(a->solvers.size() == b->solvers.size());
  for (size_t i = 0; i < a->solvers.size(); ++i) {
    INFO(a->solvers[i].name);
    CHECK(a->solvers[i].name == b->solvers[i].name);
    CHECK(a->solvers[i].planned == b->solvers[i].planned);
    REQUIRE(a->solvers[i].history.size() == b->solvers[i].history.size());
    for (size_t k = 0; k < a->solvers[i].history.size(); ++k) {
      CHECK(a->solvers[i].history[k].first == b->solvers[i].history[k].first);
      CHECK(a->solvers[i].history[k].second.disposition == b->solvers[i].history[k].second.disposition);
    }
  }
  // A plan is used once, and only for its problem.
  ahead.PlanAhead(other);
  auto c = ahead.Tune(p);
  REQUIRE(c.ok());
  REQUIRE(c->solvers.size() == a->solvers.size());
  CHECK(c->solvers.back().history.size() == a->solvers.back().history.size());
  auto d = ahead.Tune(other);  // the plan for `other` was dropped by the Tune of `p`
  REQUIRE(d.ok());
  CHECK(d->problem == other);
}

TEST_CASE("compiling the next batch while one is timed changes no outcome") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSlow, testing::kCorrect, testing::kGarbage,
                                          testing::kBrokenBuild, testing::kWritesNothing});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  auto run = [&](TuneOptions::CompileAhead ahead) {
    TuneOptions o = Fast();
    o.batch = 2;
    o.solvers = {"TestFaultSolver"};
    o.compile_ahead = ahead;
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    auto r = tuner.Tune(p);
    REQUIRE(r.ok());
    REQUIRE(r->solvers.size() == 1);
    return r->solvers.front();
  };
  const SolverTuneResult inline_ = run(TuneOptions::CompileAhead::kOff);
  const SolverTuneResult ahead = run(TuneOptions::CompileAhead::kOn);
  CHECK(ahead.tried == 5);
  CHECK(ahead.tried == inline_.tried);
  CHECK(ahead.passed == inline_.passed);
  CHECK(ahead.compiled == inline_.compiled);
  CHECK(ahead.compile_failed == 1);
  CHECK(ahead.by_disposition == inline_.by_disposition);
  REQUIRE(ahead.history.size() == inline_.history.size());
  for (size_t i = 0; i < ahead.history.size(); ++i) {
    CHECK(ahead.history[i].first == inline_.history[i].first);
    CHECK(ahead.history[i].second.disposition == inline_.history[i].second.disposition);
  }
  CHECK(ahead.stopped_by.empty());
}

TEST_CASE("the finishing step keeps the winner built for the problem alone only when it verifies and is faster") {
  CpuFixture f;
  if (!f.ok) return;
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  auto run = [&](int64_t specialized, std::string prior = "", bool specialize = true) {
    // One searched point, the slow one (three launches); its specialisation runs `specialized`.
    auto registry = testing::SpecializingRegistry({testing::kSlow}, specialized);
    TuneOptions o = Fast();
    o.solvers = {"TestFaultSolver"};
    o.prior_params = prior;
    o.specialize = specialize;
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    absl::StatusOr<TuneResult> r = tuner.Tune(p);
    REQUIRE(r.ok());
    REQUIRE(r->solvers.size() == 1);
    return *std::move(r);
  };
  const TuneResult faster_run = run(testing::kCorrect);
  const SolverTuneResult& faster = faster_run.solvers.front();
  CHECK(faster.planned == 1);  // the axis held still is not searched
  CHECK(faster.tried == 1);
  REQUIRE(faster.specialized.has_value());
  CHECK(faster.specialized->disposition == Disposition::kPassed);
  // Which build is faster is timing (1 launch against 3, but a loaded CI host can invert that):
  // the result must follow the interleaved times, whichever way they fall.
  CHECK(faster.specialized->fixed_ms > 0);
  CHECK(faster.specialized->runtime_ms > 0);
  CHECK(faster.specialized->kept == (faster.specialized->fixed_ms < faster.specialized->runtime_ms));
  CHECK(faster.best_params == (faster.specialized->kept ? "5,1" : "5,0"));
  CHECK(faster.best_ms == std::min(faster.specialized->fixed_ms, faster.specialized->runtime_ms));
  CHECK(FormatTuneResult(faster_run).find("sizes-compiled-in") != std::string::npos);
  CHECK(TuneResultsJson({faster_run}).find(faster.specialized->kept ? "\"kept\": true" : "\"kept\": false") !=
        std::string::npos);

  const SolverTuneResult wrong = run(testing::kGarbage).solvers.front();
  REQUIRE(wrong.specialized.has_value());
  CHECK(wrong.specialized->disposition == Disposition::kIncorrect);
  CHECK_FALSE(wrong.specialized->kept);
  CHECK(wrong.disposition == Disposition::kPassed);
  CHECK(wrong.best_params == "5,0");

  const SolverTuneResult broken = run(testing::kBrokenBuild).solvers.front();
  REQUIRE(broken.specialized.has_value());
  CHECK(broken.specialized->disposition == Disposition::kCompileFailed);
  CHECK(broken.best_params == "5,0");

  const SolverTuneResult slower = run(testing::kSlow).solvers.front();  // the same kernel: kept only if faster
  REQUIRE(slower.specialized.has_value());
  CHECK(slower.specialized->disposition == Disposition::kPassed);
  CHECK(slower.best_params == (slower.specialized->kept ? "5,1" : "5,0"));
  CHECK(slower.best_ms == std::min(slower.specialized->fixed_ms, slower.specialized->runtime_ms));

  // Off (--no-specialize): the winner is the build that serves every problem.
  const SolverTuneResult off = run(testing::kCorrect, "", false).solvers.front();
  CHECK_FALSE(off.specialized.has_value());
  CHECK(off.best_params == "5,0");

  // Params an earlier search chose are timed as they are: it decided there.
  const SolverTuneResult reused = run(testing::kCorrect, "5,0").solvers.front();
  CHECK(reused.reused);
  CHECK_FALSE(reused.specialized.has_value());
  CHECK(reused.best_params == "5,0");
  CHECK(run(testing::kCorrect, "5,1").solvers.front().best_params == "5,1");
}

TEST_CASE("warm-start params are tried right after the default; bad ones are skipped") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSlow, testing::kCorrect, testing::kGarbage,
                                          testing::kBrokenBuild, testing::kWritesNothing});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  TuneOptions o = Fast();
  o.batch = 1;
  o.solvers = {"TestFaultSolver"};
  o.warm_params = {"3", "not params", "77", "0"};  // 77: outside the axis
  Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
  auto r = tuner.Tune(p);
  REQUIRE(r.ok());
  const SolverTuneResult& s = r->solvers.front();
  REQUIRE(s.history.size() == 5);
  CHECK(s.history[0].first == solver::PerfConfig{{testing::kSlow}});  // the default first
  CHECK(s.history[1].first == solver::PerfConfig{{testing::kWritesNothing}});
  CHECK(s.history[2].first == solver::PerfConfig{{testing::kCorrect}});
}

TEST_CASE("a search far slower than another solver's time on the problem stops as outclassed") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSlow, testing::kCorrect, testing::kGarbage,
                                          testing::kBrokenBuild, testing::kWritesNothing});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  auto run = [&](double rival, double factor, size_t batch = 1) {
    TuneOptions o = Fast();
    o.batch = batch;
    o.solvers = {"TestFaultSolver"};
    o.outclassed_factor = factor;
    o.outclassed_after = 2;
    int asked = 0;
    o.rival_ms = [&asked, rival] {
      ++asked;
      return rival;
    };
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    auto r = tuner.Tune(p);
    REQUIRE(r.ok());
    return std::make_pair(r->solvers.front(), asked);
  };
  // Another solver is a million times faster: stop once two candidates were processed.
  auto [fast_rival, asked] = run(1e-9, 2.0);
  CHECK(fast_rival.stopped_by == "outclassed");
  CHECK(fast_rival.tried == 2);
  CHECK(fast_rival.disposition == Disposition::kPassed);  // what it found stays its result
  CHECK(asked >= 1);
  // In one batch of all five candidates (a capped generic search is one batch): the rest of the
  // batch is not timed once it is outclassed.
  auto [one_batch, asked_in_batch] = run(1e-9, 2.0, 8);
  CHECK(one_batch.stopped_by == "outclassed");
  CHECK(one_batch.tried == 2);
  CHECK(asked_in_batch >= 1);
  // A slower rival, no rival yet (0), or the rule off: the search runs to its end.
  for (auto [rival, factor] : {std::pair{1e9, 2.0}, std::pair{0.0, 2.0}, std::pair{1e-9, 0.0}}) {
    INFO(rival << " " << factor);
    auto [s, n] = run(rival, factor);
    CHECK(s.stopped_by.empty());
    CHECK(s.tried > 2);
    if (factor == 0) CHECK(n == 0);
  }
}

TEST_CASE("an earlier session's params are timed alone; ones that do not fit fall back to the search") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSlow, testing::kCorrect, testing::kGarbage,
                                          testing::kBrokenBuild, testing::kWritesNothing});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  TuneOptions o = Fast();
  o.batch = 1;
  o.solvers = {"TestFaultSolver"};
  o.warm_params = {"3"};
  o.prior_params = std::to_string(testing::kCorrect);
  {
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    auto r = tuner.Tune(p);
    REQUIRE(r.ok());
    const SolverTuneResult& s = r->solvers.front();
    CHECK(s.reused);
    REQUIRE(s.history.size() == 1);  // neither the default nor the warm params: no search
    CHECK(s.history[0].first == solver::PerfConfig{{testing::kCorrect}});
    CHECK(s.disposition == Disposition::kPassed);
    CHECK(s.best_params == std::to_string(testing::kCorrect));
  }
  o.prior_params = "77";  // outside the axis (a solver whose space changed): searched as usual
  Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
  auto r = tuner.Tune(p);
  REQUIRE(r.ok());
  const SolverTuneResult& s = r->solvers.front();
  CHECK_FALSE(s.reused);
  CHECK(s.history.size() > 1);
  CHECK(s.history[0].first == solver::PerfConfig{{testing::kSlow}});  // the default first
}

TEST_CASE("a predictor's best configs are tried after the warm params; one that is not used says why") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kSlow, testing::kCorrect, testing::kGarbage,
                                          testing::kBrokenBuild, testing::kWritesNothing});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  // Prefers kWritesNothing, then kGarbage (the warm param: not seeded twice), then kCorrect.
  auto rank = [](int64_t fault) -> float {
    switch (fault) {
      case testing::kWritesNothing: return 0;
      case testing::kGarbage: return 1;
      case testing::kCorrect: return 2;
      default: return 9;
    }
  };
  std::vector<std::string> asked;
  TuneOptions o = Fast();
  o.batch = 1;
  o.strategy = StrategyKind::kModel;
  o.solvers = {"TestFaultSolver"};
  o.warm_params = {std::to_string(testing::kGarbage)};
  o.predicted_seeds = 2;
  o.predictor = [&](const Problem& problem, const solver::Target&, const solver::Solver& s) -> absl::StatusOr<ScoreFn> {
    asked.push_back(std::string(s.Name()) + " " + problem.Canonical());
    return ScoreFn([rank](const std::vector<solver::PerfConfig>& configs) -> absl::StatusOr<std::vector<float>> {
      std::vector<float> out;
      for (const solver::PerfConfig& c : configs) out.push_back(rank(c.values[0]));
      return out;
    });
  };
  {
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    auto r = tuner.Tune(p);
    REQUIRE(r.ok());
    const SolverTuneResult& s = r->solvers.front();
    CHECK(asked == std::vector<std::string>{"TestFaultSolver " + p.Canonical()});
    CHECK(s.predicted_seeded == 2);
    CHECK(s.predictor_note.empty());
    REQUIRE(s.history.size() >= 4);
    CHECK(s.history[0].first == solver::PerfConfig{{testing::kSlow}});     // the default
    CHECK(s.history[1].first == solver::PerfConfig{{testing::kGarbage}});  // the warm param
    CHECK(s.history[2].first == solver::PerfConfig{{testing::kWritesNothing}});
    CHECK(s.history[3].first == solver::PerfConfig{{testing::kCorrect}});
    CHECK(FormatTuneResult(*r).find("predicted-seeds 2") != std::string::npos);
    CHECK(TuneResultsJson({*r}).find("\"predicted_seeded\": 2") != std::string::npos);
  }
  o.predictor = [](const Problem&, const solver::Target&, const solver::Solver& s) -> absl::StatusOr<ScoreFn> {
    return absl::NotFoundError("no perf-config predictor for " + std::string(s.Name()));
  };
  Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
  auto r = tuner.Tune(p);
  REQUIRE(r.ok());
  const SolverTuneResult& s = r->solvers.front();
  CHECK(s.predicted_seeded == 0);
  CHECK(s.predictor_note == "no perf-config predictor for TestFaultSolver");
  REQUIRE(s.history.size() >= 2);
  CHECK(s.history[1].first == solver::PerfConfig{{testing::kGarbage}});
}

TEST_CASE("transfer runs: the params timed elsewhere that the learned score ranks best come after the default") {
  CpuFixture f;
  if (!f.ok) return;
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const solver::RegisteredSolver* rs = registry.ByName("TunaCpuGemmConv");
  REQUIRE(rs != nullptr);
  const Problem p = ParseOne("conv -n 2 -c 8 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1");
  const solver::SearchSpace space = rs->solver->Space(f.target, p);
  const solver::PerfConfig dflt = rs->solver->DefaultConfig(f.target, p);
  std::vector<solver::PerfConfig> valid;
  for (uint64_t i = 0; i < space.Size() && valid.size() < 40; ++i) {
    const solver::PerfConfig c = space.At(i);
    if (!(c == dflt) && rs->solver->IsValid(f.target, p, c).ok()) valid.push_back(c);
  }
  REQUIRE(valid.size() >= 12);
  // Two other problems ran valid[5] at their fastest and everything else 8x slower.
  std::vector<TransferRun> runs = {{"conv -n 4 -c 8 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1", {}},
                                   {"conv -n 2 -c 8 -H 12 -W 12 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1", {}}};
  for (TransferRun& run : runs)
    for (size_t i = 0; i < valid.size(); ++i) run.times.push_back({valid[i].ToString(), i == 5 ? 1.0 : 8.0});
  TuneOptions o = Fast();
  o.dry_run = true;
  o.strategy = StrategyKind::kModel;
  o.budget = 2;
  o.solvers = {"TunaCpuGemmConv"};
  o.transfer = runs;
  o.transfer_seeds = 1;
  {
    Tuner tuner(registry, *f.backend, nullptr, f.target, o);
    auto r = tuner.Tune(p);
    REQUIRE(r.ok());
    const SolverTuneResult& s = r->solvers.front();
    REQUIRE(s.history.size() == 2);
    CHECK(s.history[0].first == dflt);
    CHECK(s.history[1].first == valid[5]);
  }
  // A learned predictor, when one serves the solver, is used instead: it ranks the params timed
  // elsewhere too.
  o.predicted_seeds = 1;
  o.predictor = [&](const Problem&, const solver::Target&, const solver::Solver&) -> absl::StatusOr<ScoreFn> {
    return ScoreFn([&](const std::vector<solver::PerfConfig>& configs) -> absl::StatusOr<std::vector<float>> {
      std::vector<float> out;
      for (const solver::PerfConfig& c : configs) out.push_back(c == valid[7] ? 0.0f : 1.0f);
      return out;
    });
  };
  Tuner tuner(registry, *f.backend, nullptr, f.target, o);
  auto r = tuner.Tune(p);
  REQUIRE(r.ok());
  REQUIRE(r->solvers.front().history.size() == 2);
  CHECK(r->solvers.front().history[1].first == valid[7]);
}

TEST_CASE("patience stops a search that stopped improving; a time limit stops it too") {
  CpuFixture f;
  if (!f.ok) return;
  // The default (correct, fastest) passes first; nothing after it gains.
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kSlow, testing::kGarbage,
                                          testing::kWritesNothing, testing::kBrokenBuild});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  for (auto ahead : {TuneOptions::CompileAhead::kOff, TuneOptions::CompileAhead::kOn}) {
    TuneOptions o = Fast();
    o.batch = 1;
    o.solvers = {"TestFaultSolver"};
    o.compile_ahead = ahead;
    o.patience = 2;
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    auto r = tuner.Tune(p);
    REQUIRE(r.ok());
    const SolverTuneResult& s = r->solvers.front();
    CHECK(s.stopped_by == "patience");
    // The default, then two without gain (a failure counts); kSlow may look faster than a cold
    // first timing, and then two failures follow it.
    CHECK(s.tried >= 3);
    CHECK(s.tried <= 4);
    CHECK(s.disposition == Disposition::kPassed);
    CHECK(r->best == 0);
  }
  TuneOptions o = Fast();
  o.batch = 2;
  o.solvers = {"TestFaultSolver"};
  o.time_limit_s = 1e-9;
  Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
  auto r = tuner.Tune(p);
  REQUIRE(r.ok());
  CHECK(r->solvers.front().stopped_by == "time limit");
  CHECK(r->solvers.front().tried == 2);  // the batch in flight finishes
}

TEST_CASE("a batch compiled ahead that a stopped search drops is left to the abandoned compiles") {
  CpuFixture f;
  if (!f.ok) return;
  // The time limit stops the search after its first batch, with the next batch already compiling
  // (patience would not: a batch that decides whether the search goes on is not speculated on,
  // next test).
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kSlow, testing::kGarbage,
                                          testing::kWritesNothing, testing::kBrokenBuild});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  for (bool hand_over : {false, true}) {
    INFO("hand over: " << hand_over);
    AbandonedCompiles abandoned;  // outlives the Tuner, as an executor's does
    TuneOptions o = Fast();
    o.batch = 1;
    o.solvers = {"TestFaultSolver"};
    o.compile_ahead = TuneOptions::CompileAhead::kOn;
    o.time_limit_s = 1e-9;
    if (hand_over) o.abandoned = &abandoned;
    absl::StatusOr<TuneResult> r;
    {
      Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
      r = tuner.Tune(p);
    }
    REQUIRE(r.ok());
    const SolverTuneResult& s = r->solvers.front();
    CHECK(s.stopped_by == "time limit");
    CHECK(r->discarded == 1);  // the batch proposed before the stop, never tried
    CHECK(s.tried + r->discarded <= 5);
    CHECK(abandoned.added() == (hand_over ? 1 : 0));
    // The parts of the search's time are disjoint stretches of its thread.
    const double parts = r->plan_ms + r->compile_ms + r->strategy_ms + r->evaluate_ms + r->retime_ms + r->discard_ms;
    CHECK(parts <= 1e3 * r->seconds);
    CHECK(r->evaluate_ms > 0);
  }
}

TEST_CASE("compile ahead waits for the batch whose outcome decides whether the search goes on") {
  CpuFixture f;
  if (!f.ok) return;
  // The default passes first and nothing after it gains: with patience 2 and batches of 1, the
  // second candidate is compiled ahead (the search goes on whatever the first gives), the third
  // only once the second has been timed without a gain, and none after the stop.
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kSlow, testing::kGarbage,
                                          testing::kWritesNothing, testing::kBrokenBuild});
  const Problem p = ParseOne("conv -n 2 -c 4 -H 7 -W 7 -k 6 -y 3 -x 3 -p 1 -q 1 -F 1");
  AbandonedCompiles abandoned;
  TuneOptions o = Fast();
  o.batch = 1;
  o.solvers = {"TestFaultSolver"};
  o.compile_ahead = TuneOptions::CompileAhead::kOn;
  o.patience = 2;
  o.abandoned = &abandoned;
  absl::StatusOr<TuneResult> r;
  {
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    r = tuner.Tune(p);
  }
  REQUIRE(r.ok());
  const SolverTuneResult& s = r->solvers.front();
  CHECK(s.stopped_by == "patience");
  CHECK(r->discarded == 0);  // nothing compiled for nothing
  CHECK(abandoned.added() == 0);
  CHECK(s.tried >= 3);
}

TEST_CASE("a cancelled compile builds none of the candidates it has not started") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kSlow});
  const Problem p = ParseOne("conv -n 1 -c 4 -H 5 -W 5 -k 4 -y 3 -x 3 -F 1");
  const solver::Solver& s = *registry->ByName("TestFaultSolver")->solver;
  Compiler compiler(*f.backend, f.target, {2});
  const std::vector<solver::PerfConfig> configs = {{{testing::kCorrect}}, {{testing::kSlow}}};
  CompileControl cancelled;
  cancelled.Cancel(19);
  const std::vector<CompiledCandidate> none = compiler.Compile(s, p, configs, &cancelled);
  REQUIRE(none.size() == 2);
  for (const CompiledCandidate& c : none) {
    CHECK(c.disposition == Disposition::kSkipped);
    CHECK(c.error == "cancelled");
  }
  CHECK(none[1].config == configs[1]);
  CHECK(compiler.cache_size() == 0);
  CompileControl going_on;
  const std::vector<CompiledCandidate> both = compiler.Compile(s, p, configs, &going_on);
  REQUIRE(both.size() == 2);
  CHECK(both[0].disposition == Disposition::kPassed);
  CHECK(both[1].disposition == Disposition::kPassed);
}

TEST_CASE("cancelling a compile lowers the priority of its own threads still building") {
  CompileControl control;
  std::promise<void> entered, cancelled;
  std::shared_future<void> cancelled_f = cancelled.get_future().share();
  int before = 0, after = 0;
  bool own_ok = false, later_ok = true;
  std::thread building([&] {
    before = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
    own_ok = control.Enter(true);
    entered.set_value();
    cancelled_f.wait();
    after = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
    control.Leave(true);
    later_ok = control.Enter(false);  // a candidate after the cancel is not started
  });
  entered.get_future().wait();
  CHECK(control.Enter(false));  // a caller's thread: built, never lowered
  control.Leave(false);
  control.Cancel(3);
  cancelled.set_value();
  building.join();
  CHECK(own_ok);
  CHECK_FALSE(later_ok);
  CHECK(control.cancelled());
  CHECK(control.lowered() == 1);
  CHECK(after == std::min(before + 3, 19));
}

TEST_CASE("dry run compiles without a device") {
  CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({0, 1, 2, 3});
  SessionOptions s;
  s.target_arch = f.target.arch;
  s.tune.dry_run = true;
  const std::vector<Problem> problems = {ParseOne("conv -n 1 -c 4 -H 5 -W 5 -k 4 -y 3 -x 3 -F 2")};
  auto r = TuneProblems(problems, s, *registry);
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  const TuneResult& res = r->front();
  CHECK(res.dry_run);
  CHECK(res.error.empty());
  REQUIRE(res.solvers.size() == 2);
  CHECK(res.solvers[0].compiled == 1);
  CHECK(res.solvers[1].compiled == 3);
  CHECK(res.solvers[1].compile_failed == 1);
  CHECK(res.best == -1);
  CHECK(FormatTuneResult(res).find("compiled") != std::string::npos);
}

TEST_CASE("dry run for gfx90a compiles the builtin GPU solvers through hiprtc") {
  auto hip = backend::NewHipBackend(backend::HipBackendOptions::FromEnv());
  if (!hip->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + hip->CompilerStatus().ToString());
    return;
  }
  SessionOptions s;
  s.target_arch = "gfx90a";
  s.tune.dry_run = true;
  s.tune.budget = 2;
  s.tune.strategy = StrategyKind::kRandom;
  const std::vector<Problem> problems = {ParseOne("conv -n 2 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1")};
  auto r = TuneProblems(problems, s, solver::SolverRegistry::Builtin());
  REQUIRE(r.ok());
  const TuneResult& res = r->front();
  INFO(FormatTuneResult(res));
  CHECK(res.error.empty());
  REQUIRE_FALSE(res.solvers.empty());
  uint64_t compiled = 0, failed = 0;
  for (const auto& sr : res.solvers) compiled += sr.compiled, failed += sr.compile_failed;
  CHECK(compiled >= 1);
  CHECK(failed == 0);
  CHECK(res.solvers.front().name == "ConvDirectNaiveConvFwd");
}

TEST_CASE("a generic solver is searched briefly where a specialised one applies") {
  CpuFixture f;
  if (!f.ok) return;
  const Problem p = ParseOne("conv -n 1 -c 4 -H 5 -W 5 -k 4 -y 3 -x 3 -F 1");
  for (bool specialised : {true, false}) {
    INFO("specialised solver registered: " << specialised);
    auto registry = testing::GenericRegistry({testing::kCorrect, testing::kSlow, testing::kClobbersInputs,
                                              testing::kGarbage}, specialised);
    TuneOptions o = FastRandom(4);
    o.generic_budget = 2;
    o.solvers = {"TestGenericSolver"};
    Tuner tuner(*registry, *f.backend, f.device.get(), f.target, o);
    absl::StatusOr<TuneResult> r = tuner.Tune(p);
    REQUIRE(r.ok());
    REQUIRE(r->solvers.size() == 1);
    CHECK(r->solvers.front().planned == (specialised ? 2u : 4u));
    CHECK(r->solvers.front().tried == (specialised ? 2u : 4u));
  }
}

// The builtin registry on sm_90 (planning only, no device): on an FP16 RGB stem the tensor-core
// small-C solver is searched whole, while the SIMT one (FP16 on sm_80+) and the TMA forward with
// C padded 3 -> 8 (62 % zeros) are generic there and get the capped budget; on FP32 the SIMT
// one has the budget asked for again, and a 45-channel layer (48 padded: 6 % zeros) keeps the
// padded TMA forward's own budget.
TEST_CASE("generic on the problem: the small-C SIMT kernel in FP16 and heavily padded channels") {
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  const Problem stem16 = ParseOne("convfp16 -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1" + nhwc);
  const Problem stem32 = ParseOne("conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -F 1" + nhwc);
  const Problem mid45 = ParseOne("convfp16 -n 8 -c 45 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1" + nhwc);
  TuneOptions o;
  o.strategy = StrategyKind::kModel;
  o.budget = 48;
  o.patience = 16;
  o.whole_space = kWholeSpace;
  const auto limits = [&](const char* name, const Problem& p) {
    const solver::Solver& s = *registry.ByName(name)->solver;
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    return LimitsOf(o, registry, *sm90, p, s);
  };
  CHECK(registry.ByName("TunaSmallCFwd")->solver->IsGeneric(*sm90, stem16));
  CHECK_FALSE(registry.ByName("TunaSmallCFwd")->solver->IsGeneric(*sm90, stem32));
  CHECK(registry.ByName("TunaHopperTmaFwdPad")->solver->IsGeneric(*sm90, stem16));
  CHECK_FALSE(registry.ByName("TunaHopperTmaFwdPad")->solver->IsGeneric(*sm90, mid45));
  CHECK(limits("TunaSmallCTcFwd", stem16).budget == 48);  // 268 valid points: past whole_space
  CHECK(limits("TunaSmallCFwd", stem16).budget == kGenericBudget);
  CHECK_FALSE(limits("TunaSmallCFwd", stem16).whole);
  CHECK(limits("TunaHopperTmaFwdPad", stem16).budget == kGenericBudget);
  CHECK(limits("TunaSmallCFwd", stem32).budget == 48);
  const SearchLimits padded45 = limits("TunaHopperTmaFwdPad", mid45);
  CHECK((padded45.whole || padded45.budget == 48));
}

}  // namespace
}  // namespace tuna::search
