#include "bench/search/table_replay.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::search {
namespace {

struct Setting {
  const solver::Solver* solver = nullptr;
  solver::Target target;
  Problem problem;
};

absl::StatusOr<Setting> SettingOf(const Table& t, const solver::SolverRegistry& registry) {
  const solver::RegisteredSolver* rs = registry.ByName(t.solver);
  absl::StatusOr<std::vector<Problem>> problems = ParseDriverLine(t.driver);
  absl::StatusOr<solver::Target> target = solver::TargetForArch(t.arch);
  if (rs == nullptr || !problems.ok() || problems->size() != 1 || !target.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("table ", t.solver, " / ", t.driver, " / ", t.arch,
                                                   ": unknown solver, driver line or arch"));
  }
  return Setting{rs->solver, *target, problems->front()};
}

// The Tuner's input (tuner.cc Plan): the default first, then the warm start (AddWarmStart, with
// `tune`'s options and this budget).
StrategyInput InputOf(const Table& t, const Setting& s, uint64_t seed, const std::vector<TransferRun>& transfer,
                      const TuneOptions& tune = {}, uint64_t budget = 0) {
  StrategyInput in;
  in.budget = budget;
  in.space = s.solver->Space(s.target, s.problem);
  in.is_valid = [&t](const solver::PerfConfig& c) { return t.points.count(c.values) > 0; };
  in.seed = seed;
  in.prior = {solver::PerfConfig{t.default_values}};
  TuneOptions o = tune;
  o.transfer = transfer;
  AddWarmStart(o, {s.solver, s.target, s.problem}, in);
  return in;
}

ReplayLookup LookupOf(const Table& t) {
  return [&t](const solver::PerfConfig& c) -> std::optional<ReplayPoint> {
    auto it = t.points.find(c.values);
    if (it == t.points.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace

absl::StatusOr<DefaultRun> ReplayDefault(const Table& t, uint64_t seed, int compile_threads, double within,
                                         const solver::SolverRegistry& registry,
                                         const std::vector<TransferRun>& transfer) {
  absl::StatusOr<Setting> s = SettingOf(t, registry);
  if (!s.ok()) return s.status();
  ReplayOptions o = DefaultSearchReplay(compile_threads);
  o.target_ms = t.best * (1 + within);
  const SearchLimits limits = LimitsOf(o.tune, registry, s->target, s->problem, *s->solver);
  StrategyInput in = InputOf(t, *s, seed, transfer, o.tune, limits.budget);
  o.tune.patience = limits.patience;
  std::unique_ptr<SearchStrategy> strategy = MakeStrategy(o.tune.strategy);
  return DefaultRun{ReplaySearch(*strategy, in, o, LookupOf(t)), in.budget};
}

absl::StatusOr<ReplayResult> ReplayUntilWithin(const Table& t, SearchStrategy& strategy, uint64_t seed, size_t batch,
                                               double within, const solver::SolverRegistry& registry) {
  absl::StatusOr<Setting> s = SettingOf(t, registry);
  if (!s.ok()) return s.status();
  ReplayOptions o;
  o.batch = batch;
  o.ahead = true;
  o.target_ms = t.best * (1 + within);
  o.stop_at_target = true;
  return ReplaySearch(strategy, InputOf(t, *s, seed, {}), o, LookupOf(t));
}

// The store's config class (lease_store.cc): data type, direction and input layout.
bool SameClass(const Table& a, const Table& b) {
  absl::StatusOr<std::vector<Problem>> p = ParseDriverLine(a.driver), q = ParseDriverLine(b.driver);
  if (!p.ok() || !q.ok() || p->empty() || q->empty()) return false;
  return p->front().data_type == q->front().data_type && p->front().direction == q->front().direction &&
         p->front().in_layout == q->front().in_layout;
}

std::vector<TransferRun> TransferFrom(const std::vector<Table>& tables, const std::vector<ReplayResult>& runs,
                                      size_t i) {
  std::vector<TransferRun> transfer;
  for (size_t j = 0; j < tables.size() && j < runs.size(); ++j) {
    if (j == i || tables[j].solver != tables[i].solver || tables[j].arch != tables[i].arch ||
        !SameClass(tables[j], tables[i])) {
      continue;
    }
    TransferRun run{tables[j].driver, {}};
    for (const Observation& o : runs[j].observed) {
      if (o.ok) run.times.push_back({o.config.ToString(), o.time_ms});
    }
    transfer.push_back(std::move(run));
  }
  return transfer;
}

double FractionUntilReached(const Table& t, const ReplayResult& r) {
  if (t.points.empty()) return 1;
  return r.reached_at > 0 ? static_cast<double>(r.reached_at) / t.points.size() : 1.0;
}

}  // namespace tuna::search
