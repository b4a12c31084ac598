// bench/search's table replay: ReplaySearch drives a strategy as the Tuner does (budget, patience,
// speculation; checked against a real model-guided search on the cpu backend: same proposals,
// same stop), and every committed tables file (bench/search/tables/*.json,
// measured on a device by bench/gpu/search_acceptance.sh STEPS=tables, or on the CPU backend)
// replays with tune's default search: each table is exhaustive (as many points as the solver's
// space has valid points on that arch), the default stays within its budget, reaches what it
// says it reaches, and gives the same answer twice.
#include <algorithm>
#include <filesystem>
#include <set>

#include "bench/search/space_count.h"
#include "bench/search/table_replay.h"
#include "bench/search/tables.h"
#include "catch2/catch.hpp"
#include "tests/search/cpu_fixture.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/replay.h"
#include "tuner_core/search/strategy/strategy.h"

namespace tuna::search {
namespace {

// Counts the batches asked of a strategy.
class Counting : public SearchStrategy {
 public:
  explicit Counting(std::unique_ptr<SearchStrategy> inner) : inner_(std::move(inner)) {}
  std::string_view Name() const override { return inner_->Name(); }
  absl::Status Start(const StrategyInput& in) override { return inner_->Start(in); }
  std::vector<solver::PerfConfig> Next(size_t n) override {
    ++next_calls;
    return inner_->Next(n);
  }
  void Observe(const std::vector<Observation>& o) override { inner_->Observe(o); }
  std::optional<uint64_t> PlannedTotal() const override { return inner_->PlannedTotal(); }
  int next_calls = 0;

 private:
  std::unique_ptr<SearchStrategy> inner_;
};

StrategyInput Line(uint64_t points, uint64_t budget) {
  StrategyInput in;
  in.space = solver::SearchSpace({{"i", [&] {
                                     std::vector<int64_t> v;
                                     for (uint64_t i = 0; i < points; ++i) v.push_back(static_cast<int64_t>(i));
                                     return v;
                                   }()}});
  in.budget = budget;
  return in;
}

// Time of point i: the first is the best and nothing after it gains.
std::optional<ReplayPoint> Rising(const solver::PerfConfig& c) { return ReplayPoint{true, 1.0 + c.values[0]}; }

TEST_CASE("replay: patience ends the search, and no batch is asked ahead when the current one may end it") {
  Counting s(NewExhaustiveStrategy());
  ReplayOptions o;
  o.tune.patience = 8;
  o.batch = 4;
  o.ahead = true;
  o.target_ms = 1.0;
  const ReplayResult r = ReplaySearch(s, Line(60, 0), o, Rising);
  // Batch 1: best + 3 without gain; batch 2 (asked ahead): 7; batch 3 (asked ahead, 3 + 4 < 8):
  // 11 >= 8, stop. Batch 3 was taken when 7 + 4 >= 8, so batch 4 was never asked for.
  CHECK(r.tried == 12);
  CHECK(r.stopped_by == "patience");
  CHECK(s.next_calls == 3);
  CHECK(r.reached_at == 1);
  CHECK(r.best_ms == 1.0);
}

TEST_CASE("replay: the budget bounds the search, failures are data, unknown points fail") {
  auto s = NewRandomStrategy();
  ReplayOptions o;
  o.batch = 5;
  o.target_ms = 0.5;  // never reached
  const auto odd_fails = [](const solver::PerfConfig& c) -> std::optional<ReplayPoint> {
    if (c.values[0] >= 50) return std::nullopt;
    return ReplayPoint{c.values[0] % 2 == 0, 2.0 + c.values[0]};
  };
  const ReplayResult r = ReplaySearch(*s, Line(60, 23), o, odd_fails);
  CHECK(r.tried == 23);
  CHECK(r.stopped_by.empty());
  CHECK(r.reached_at == 0);
  CHECK(static_cast<int64_t>(r.best_ms - 2.0) % 2 == 0);
}

TEST_CASE("replay: stop_at_target ends at the batch that reaches it") {
  auto s = NewExhaustiveStrategy();
  ReplayOptions o;
  o.batch = 4;
  o.target_ms = 45.0;  // times 100 - i: point 55 is the first within
  o.stop_at_target = true;
  const auto falling = [](const solver::PerfConfig& c) -> std::optional<ReplayPoint> {
    return ReplayPoint{true, 100.0 - c.values[0]};
  };
  const ReplayResult r = ReplaySearch(*s, Line(60, 0), o, falling);
  CHECK(r.reached_at == 56);
  CHECK(r.tried == 56);  // the batch of points 52-55 ends there
  CHECK(r.stopped_by == "target");
  CHECK(r.best_ms == 45.0);
}

// LimitsOf: a space of at most whole_space valid points is searched whole (no budget, no
// patience); a larger one, a generic solver's capped budget, or an unbounded search is not.
TEST_CASE("small spaces are searched whole") {
  const testing::CpuFixture f;
  if (!f.ok) return;
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const Problem p = testing::ParseOne("conv -n 1 -c 4 -H 4 -W 4 -k 4 -y 3 -x 3 -p 1 -q 1 -F 4");  // 123 valid
  const solver::Solver& s = *registry.ByName("TunaCpuGemmConv")->solver;
  TuneOptions o;
  o.budget = 48;
  o.patience = 16;
  const auto limits = [&] { return LimitsOf(o, registry, f.target, p, s); };
  CHECK(!limits().whole);  // whole_space 0: never
  CHECK(limits().budget == 48);
  CHECK(limits().patience == 16);
  o.whole_space = 123;
  CHECK(limits().whole);
  CHECK(limits().budget == 0);
  CHECK(limits().patience == 0);
  o.whole_space = 122;  // one valid point more than it takes
  CHECK(!limits().whole);
  CHECK(limits().budget == 48);
  o.whole_space = 1000;
  o.budget = o.patience = 0;  // nothing bounds the search: nothing to lift
  CHECK(!limits().whole);
  o.patience = 16;  // patience alone bounds it
  CHECK(limits().whole);
}

// A real search of TunaCpuGemmConv on the cpu backend with compile ahead on, then ReplaySearch
// answered with its own timings: it must ask for the same configs in the same order and stop
// the same way.
void ReplayRealSearch(uint64_t budget, uint64_t patience, const testing::CpuFixture& f) {
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const Problem p = testing::ParseOne("conv -n 1 -c 4 -H 4 -W 4 -k 4 -y 3 -x 3 -p 1 -q 1 -F 4");  // 123 valid
  TuneOptions o;
  o.strategy = StrategyKind::kModel;
  o.budget = budget;
  o.patience = patience;
  o.batch = 4;
  o.compile_ahead = TuneOptions::CompileAhead::kOn;  // speculate as on a GPU
  o.solvers = {"TunaCpuGemmConv"};
  o.evaluator.repetitions = 3;
  o.evaluator.early_drop_ratio = 1e9;
  o.retime_top = 0;
  Tuner tuner(registry, *f.backend, f.device.get(), f.target, o);
  auto tuned = tuner.Tune(p);
  REQUIRE(tuned.ok());
  REQUIRE(tuned->solvers.size() == 1);
  const SolverTuneResult& s = tuned->solvers.front();
  std::map<std::vector<int64_t>, ReplayPoint> timed;
  for (const auto& [c, m] : s.history) timed[c.values] = {m.disposition == Disposition::kPassed, m.time_ms};

  const solver::Solver& solver = *registry.ByName("TunaCpuGemmConv")->solver;
  StrategyInput in;
  in.space = solver.Space(f.target, p);
  in.is_valid = [&](const solver::PerfConfig& c) { return solver.IsValid(f.target, p, c).ok(); };
  in.budget = LimitsOf(o, registry, f.target, p, solver).budget;
  in.seed = o.seed;
  in.prior = {solver.DefaultConfig(f.target, p)};
  ReplayOptions ro;
  ro.tune = o;
  ro.batch = o.batch;
  std::vector<solver::PerfConfig> asked;
  const auto lookup = [&](const solver::PerfConfig& c) -> std::optional<ReplayPoint> {
    asked.push_back(c);
    auto it = timed.find(c.values);
    return it == timed.end() ? std::nullopt : std::optional<ReplayPoint>(it->second);
  };
  auto strategy = MakeStrategy(o.strategy);
  const ReplayResult r = ReplaySearch(*strategy, in, ro, lookup);
  REQUIRE(asked.size() == s.history.size());
  for (size_t i = 0; i < asked.size(); ++i) CHECK(asked[i] == s.history[i].first);
  CHECK(r.tried == s.tried);
  CHECK(r.stopped_by == s.stopped_by);
  CHECK(r.best == s.best_config);
}

TEST_CASE("replay: a real model-guided search's timings replayed give its proposals and its stop") {
  testing::CpuFixture f;
  if (!f.ok) return;
  SECTION("patience ends it within the first random sample") { ReplayRealSearch(24, 6, f); }
  // 14 observations before the first fit (6 axes): the model's proposals, made one batch ahead.
  SECTION("the budget ends it well after the model took over") { ReplayRealSearch(36, 12, f); }
}

std::vector<std::string> CommittedTables() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator("bench/search/tables")) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  return files;
}

void CheckExhaustive(const Table& t, const solver::SolverRegistry& registry) {
  const solver::RegisteredSolver* r = registry.ByName(t.solver);
  REQUIRE(r != nullptr);
  auto problems = ParseDriverLine(t.driver);
  auto target = solver::TargetForArch(t.arch);
  REQUIRE(problems.ok());
  REQUIRE(target.ok());
  // The space the table was measured over: axes appended since then at their absent value.
  const solver::SearchSpace space = r->solver->Space(*target, problems->front());
  std::vector<solver::PerfConfig> valid;
  for (solver::PerfConfig& c : ValidConfigs(*r->solver, *target, problems->front())) {
    if (InMeasuredSpace(space, t, c)) valid.push_back(std::move(c));
  }
  CHECK(valid.size() == t.points.size());
  for (const solver::PerfConfig& c : valid) CHECK(t.points.count(c.values) == 1);
}

// The most a search of `budget` (0: no limit) tries in a table of `points`.
uint64_t Cap(uint64_t budget, uint64_t points) { return budget == 0 ? points : std::min(budget, points); }

TEST_CASE("committed tables: exhaustive, and tune's default replays on them within its budget") {
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const std::vector<std::string> files = CommittedTables();
  REQUIRE(!files.empty());
  for (const std::string& file : files) {
    INFO(file);
    auto tables = ReadTables(file, registry);
    REQUIRE(tables.ok());
    REQUIRE(!tables->empty());
    for (const Table& t : *tables) {
      INFO(t.solver << " " << t.driver);
      CheckExhaustive(t, registry);
      auto a = ReplayDefault(t, 1, 16, 0.03, registry);
      auto b = ReplayDefault(t, 1, 16, 0.03, registry);
      REQUIRE(a.ok());
      REQUIRE(b.ok());
      // Budget 48, 16 for a capped generic search, or 0 for a space searched whole (every point).
      const bool whole = t.points.size() <= kWholeSpace;
      CHECK((a->budget == DefaultBudget(kDefaultStrategy) || a->budget == kGenericBudget || (whole && a->budget == 0)));
      CHECK(a->result.tried <= Cap(a->budget, t.points.size()));
      if (a->budget == 0) CHECK(a->result.tried == t.points.size());
      CHECK(a->result.reached_at <= a->result.tried);
      CHECK(a->result.best_ms >= t.best);
      if (a->result.reached_at > 0) CHECK(a->result.best_ms <= t.best * 1.03);
      CHECK(a->result.tried == b->result.tried);
      CHECK(a->result.best == b->result.best);
      const double f = FractionUntilReached(t, a->result);
      CHECK((f > 0 && f <= 1));
    }
  }
}


TEST_CASE("committed tables: the warm start reads only other tables; params timed there come right after the default") {
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  auto tables = ReadTables("bench/search/tables/h100.json", registry);
  REQUIRE(tables.ok());
  std::vector<ReplayResult> cold;
  for (const Table& t : *tables) {
    auto d = ReplayDefault(t, 1, 16, 0.03, registry);
    REQUIRE(d.ok());
    cold.push_back(d->result);
  }
  int warmed = 0;
  for (size_t i = 0; i < tables->size(); ++i) {
    const Table& t = (*tables)[i];
    INFO(t.solver << " " << t.driver);
    const std::vector<TransferRun> transfer = TransferFrom(*tables, cold, i);
    // The table's own run is never read.
    std::vector<ReplayResult> blind = cold;
    blind[i] = ReplayResult{};
    CHECK(TransferFrom(*tables, blind, i) == transfer);
    for (const TransferRun& r : transfer) CHECK(r.driver != t.driver);
    if (transfer.empty()) continue;
    ++warmed;
    // Params timed on the other tables and valid here (the warm params are chosen among them).
    std::set<std::string> timed;
    for (const TransferRun& r : transfer) {
      for (const TransferTime& x : r.times) {
        const bool valid = std::any_of(t.points.begin(), t.points.end(),
                                       [&](const auto& kv) { return solver::PerfConfig{kv.first}.ToString() == x.params; });
        if (valid) timed.insert(x.params);
      }
    }
    timed.erase(solver::PerfConfig{t.default_values}.ToString());
    auto w = ReplayDefault(t, 1, 16, 0.03, registry, transfer);
    REQUIRE(w.ok());
    // The default, then min(kWarmParams, timed) of those params (the Tuner's prior).
    const size_t warm = std::min(kWarmParams, timed.size());
    REQUIRE(w->result.observed.size() >= 1 + warm);
    CHECK(w->result.observed[0].config.ToString() == solver::PerfConfig{t.default_values}.ToString());
    for (size_t k = 1; k <= warm; ++k) CHECK(timed.count(w->result.observed[k].config.ToString()) == 1);
    CHECK(w->result.tried <= Cap(w->budget, t.points.size()));
  }
  CHECK(warmed >= 20);  // every table but the three whose solver has no other table
}

}  // namespace
}  // namespace tuna::search
