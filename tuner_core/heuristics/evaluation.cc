#include "tuner_core/heuristics/evaluation.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"

namespace tuna::heuristics {
namespace {

struct ChoiceAcc {
  ChoiceScore s;
  double sum = 0;
  void Add(double picked, double fastest) {
    ++s.cases;
    s.best += picked <= fastest ? 1 : 0;
    s.within10 += picked <= fastest * 1.1 ? 1 : 0;
    sum += picked / fastest - 1;
  }
  ChoiceScore Done() {
    s.mean_slowdown = s.cases > 0 ? sum / static_cast<double>(s.cases) : 0;
    return s;
  }
};

ParamsScore Summarise(std::vector<double> ratios) {
  ParamsScore s;
  s.cases = static_cast<int64_t>(ratios.size());
  if (ratios.empty()) return s;
  std::sort(ratios.begin(), ratios.end());
  double sum = 0;
  for (double r : ratios) {
    sum += r;
    s.within15 += r <= 1.15 ? 1 : 0;
  }
  s.median_ratio = ratios[ratios.size() / 2];
  s.mean_ratio = sum / static_cast<double>(ratios.size());
  return s;
}

// Solver choice of one problem by the picker and by the analytic fallback.
void ScoreChoice(const Models& models, const ProblemRecord& r, const solver::Target& target,
                 const runtime::DeviceModel& device, const solver::SolverRegistry& registry, ChoiceAcc& picker,
                 ChoiceAcc& fallback, EvalReport& report) {
  std::vector<solver::RegisteredSolver> timed;
  double fastest = 0;
  for (const auto& [name, ms] : r.solver_ms) {
    const solver::RegisteredSolver* s = registry.ByName(name);
    if (s == nullptr) continue;
    timed.push_back(*s);
    fastest = fastest == 0 ? ms : std::min(fastest, ms);
  }
  if (timed.size() < 2 || !(fastest > 0)) return;
  std::sort(timed.begin(), timed.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  const std::vector<runtime::RankedSolver> fb = runtime::RankFallback(device, r.problem, timed, nullptr);
  std::vector<solver::RegisteredSolver> fb_order;
  for (const runtime::RankedSolver& x : fb) fb_order.push_back(x.solver);
  fallback.Add(r.solver_ms.at(std::string(fb_order.front().solver->Name())), fastest);
  absl::StatusOr<std::vector<solver::RegisteredSolver>> ranked = models.RankSolvers(r.problem, target, fb_order);
  if (!ranked.ok()) {
    report.notes.push_back(absl::StrCat(r.problem.Canonical(), ": picker not used (", ranked.status().message(),
                                        "), analytic fallback counted"));
    picker.Add(r.solver_ms.at(std::string(fb_order.front().solver->Name())), fastest);
    return;
  }
  picker.Add(r.solver_ms.at(std::string(ranked->front().solver->Name())), fastest);
}

// Predicted and default params of each tunable solver sampled for the problem.
void ScoreParams(const Models& models, const ProblemRecord& r, const solver::Target& target,
                 const solver::SolverRegistry& registry, std::vector<double>& predicted,
                 std::vector<double>& defaults, EvalReport& report) {
  for (const auto& [name, samples] : r.samples) {
    const solver::RegisteredSolver* s = registry.ByName(name);
    if (s == nullptr || !s->solver->IsTunable() || samples.empty()) continue;
    const solver::SearchSpace space = s->solver->Space(target, r.problem);
    std::vector<solver::PerfConfig> configs;
    std::vector<double> times;
    double best = 0;
    for (const TimedParams& t : samples) {
      absl::StatusOr<solver::PerfConfig> c = space.Parse(t.params);
      if (!c.ok()) continue;
      configs.push_back(*c);
      times.push_back(t.ms);
      best = best == 0 ? t.ms : std::min(best, t.ms);
    }
    if (configs.empty() || !(best > 0)) continue;
    const std::string def = s->solver->DefaultConfig(target, r.problem).ToString();
    double def_ms = 0;
    for (size_t i = 0; i < configs.size(); ++i) def_ms = configs[i].ToString() == def ? times[i] : def_ms;
    absl::StatusOr<std::vector<float>> scores = models.ScoreConfigs(r.problem, target, name, space, configs);
    // Without a usable predictor the runtime keeps the default: count that.
    double pred_ms = def_ms;
    if (scores.ok()) {
      pred_ms = times[std::min_element(scores->begin(), scores->end()) - scores->begin()];
    } else {
      report.notes.push_back(absl::StrCat(r.problem.Canonical(), " ", name, ": predictor not used (",
                                          scores.status().message(), "), default counted"));
    }
    if (def_ms > 0) {
      defaults.push_back(def_ms / best);
    } else {
      ++report.default_unmeasured;
    }
    if (pred_ms > 0) predicted.push_back(pred_ms / best);
  }
}

}  // namespace

absl::StatusOr<EvalReport> Evaluate(const Models& models, const std::vector<const ProblemRecord*>& test,
                                    const solver::Target& target, const runtime::DeviceModel& device,
                                    const solver::SolverRegistry& registry) {
  EvalReport report;
  ChoiceAcc picker, fallback;
  std::vector<double> predicted, defaults;
  for (const ProblemRecord* r : test) {
    if (r->solver_ms.empty() && r->samples.empty()) continue;
    ++report.test_problems;
    ScoreChoice(models, *r, target, device, registry, picker, fallback, report);
    ScoreParams(models, *r, target, registry, predicted, defaults, report);
  }
  if (report.test_problems == 0) return absl::InvalidArgumentError("no held-out config with timings to evaluate");
  report.picker = picker.Done();
  report.fallback = fallback.Done();
  report.predicted = Summarise(std::move(predicted));
  report.defaults = Summarise(std::move(defaults));
  return report;
}

}  // namespace tuna::heuristics
