#include "tuner_core/heuristics/evaluation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tuner_core/heuristics/config_scorer.h"

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

// `ratios` of the measured cases; `unmeasured` more cases count as +inf.
ParamsScore Summarise(std::vector<double> ratios, int64_t unmeasured) {
  ParamsScore s;
  s.unmeasured = unmeasured;
  s.cases = static_cast<int64_t>(ratios.size()) + unmeasured;
  if (s.cases == 0) return s;
  double sum = 0;
  for (double r : ratios) {
    sum += r;
    s.within15 += r <= 1.15 ? 1 : 0;
  }
  s.mean_ratio = ratios.empty() ? std::numeric_limits<double>::infinity() : sum / static_cast<double>(ratios.size());
  ratios.insert(ratios.end(), static_cast<size_t>(unmeasured), std::numeric_limits<double>::infinity());
  std::sort(ratios.begin(), ratios.end());
  s.median_ratio = ratios[ratios.size() / 2];
  return s;
}

// A config's time in one case: from the session's samples, else from the MeasureFn.
struct CaseTime {
  enum class From { kSession, kMeasured, kFailed, kNone };
  From from = From::kNone;
  double ms = 0;
};

CaseTime FromSession(double ms) { return ms > 0 ? CaseTime{CaseTime::From::kSession, ms} : CaseTime{}; }

struct RatioAcc {
  std::vector<double> ratios;
  int64_t unmeasured = 0, measured = 0, failed = 0;
  void Add(const CaseTime& t, double best) {
    switch (t.from) {
      case CaseTime::From::kNone: ++unmeasured; return;
      case CaseTime::From::kFailed: ++failed; return;
      case CaseTime::From::kMeasured: ++measured; break;
      case CaseTime::From::kSession: break;
    }
    ratios.push_back(t.ms / best);
  }
  ParamsScore Done() {
    ParamsScore s = Summarise(std::move(ratios), unmeasured + failed);
    s.unmeasured = unmeasured;
    s.measured = measured;
    s.failed = failed;
    return s;
  }
};

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

// The measured configs of one solver on one problem: parsed params, their times, the fastest.
struct Sampled {
  solver::SearchSpace space;
  std::vector<solver::PerfConfig> configs;
  std::vector<double> times;
  double best = 0;
  // The time of `config` when it was sampled, else 0.
  double TimeOf(const std::string& config) const {
    for (size_t i = 0; i < configs.size(); ++i) {
      if (configs[i].ToString() == config) return times[i];
    }
    return 0;
  }
};

Sampled ParseSamples(const solver::Solver& s, const solver::Target& target, const Problem& p,
                     const std::vector<TimedParams>& samples) {
  Sampled out{s.Space(target, p), {}, {}, 0};
  for (const TimedParams& t : samples) {
    absl::StatusOr<solver::PerfConfig> c = out.space.Parse(t.params);
    if (!c.ok()) continue;
    out.configs.push_back(*c);
    out.times.push_back(t.ms);
    out.best = out.best == 0 ? t.ms : std::min(out.best, t.ms);
  }
  return out;
}

struct ParamsAcc {
  RatioAcc predicted, ranked, defaults;
  int64_t default_unmeasured = 0;
};

// The times of one (problem, solver)'s configs: the session's samples, else the MeasureFn's
// (each config asked at most once).
class CaseTimes {
 public:
  CaseTimes(const MeasureFn& measure, const ProblemRecord& r, const solver::Solver& s, const Sampled& m,
            EvalReport& report)
      : measure_(measure), r_(r), s_(s), m_(m), report_(report) {}

  // `what` names the config in the notes ("predicted", "default").
  CaseTime Of(const solver::PerfConfig& config, const char* what) {
    const std::string key = config.ToString();
    if (const double ms = m_.TimeOf(key); ms > 0) return FromSession(ms);
    if (auto it = done_.find(key); it != done_.end()) return it->second;
    CaseTime t = measure_ ? Measure(config, key, what) : CaseTime{};
    if (!measure_ && std::string(what) == "predicted") Note(key, what, "never timed in the session, counted as a miss");
    done_[key] = t;
    return t;
  }

 private:
  CaseTime Measure(const solver::PerfConfig& config, const std::string& key, const char* what) {
    ++report_.measure_calls;
    absl::StatusOr<double> ms = measure_(r_.problem, s_, config);
    if (ms.ok() && *ms > 0) {
      Note(key, what, absl::StrFormat("never timed in the session, measured now: %.4f ms (%.3f x the tuned %.4f ms)",
                                      *ms, *ms / m_.best, m_.best));
      return {CaseTime::From::kMeasured, *ms};
    }
    const absl::Status st = ms.ok() ? absl::InternalError("no time") : ms.status();
    if (absl::IsDeadlineExceeded(st) || absl::IsUnavailable(st)) {
      ++report_.measure_unavailable;
      Note(key, what, absl::StrCat("never timed in the session and not measured (", st.message(), ")",
                                   std::string(what) == "predicted" ? ", counted as a miss" : ", not counted"));
      return {};
    }
    Note(key, what, absl::StrCat("never timed in the session, measured now: FAILED (", st.message(), "), counted as a miss"));
    return {CaseTime::From::kFailed, 0};
  }
  void Note(const std::string& key, const char* what, const std::string& text) {
    report_.notes.push_back(absl::StrCat(r_.problem.Canonical(), " ", std::string(s_.Name()), ": ", what, " params '", key, "' ", text));
  }

  const MeasureFn& measure_;
  const ProblemRecord& r_;
  const solver::Solver& s_;
  const Sampled& m_;
  EvalReport& report_;
  std::map<std::string, CaseTime> done_;
};

// Predicted (the runtime's pick), ranked (best-scored sampled) and default params of each tunable
// solver sampled for the problem; times from the samples, else from `measure` (evaluation.h).
void ScoreParams(const Models& models, const ProblemRecord& r, const solver::Target& target,
                 const solver::SolverRegistry& registry, const MeasureFn& measure, ParamsAcc& acc,
                 EvalReport& report) {
  for (const auto& [name, samples] : r.samples) {
    const solver::RegisteredSolver* s = registry.ByName(name);
    if (s == nullptr || !s->solver->IsTunable() || samples.empty()) continue;
    const Sampled m = ParseSamples(*s->solver, target, r.problem, samples);
    if (m.configs.empty() || !(m.best > 0)) continue;
    CaseTimes times(measure, r, *s->solver, m, report);
    const CaseTime def = times.Of(s->solver->DefaultConfig(target, r.problem), "default");
    // Without a usable predictor the runtime keeps the default: count that.
    CaseTime pred = def, ranked = def;
    // The scorer the runtime uses; it only lives within this call, so it need not own `models`.
    absl::StatusOr<ConfigScoreFn> score = MakeConfigScorer(
        std::shared_ptr<const Models>(&models, [](const Models*) {}), r.problem, target, *s->solver);
    absl::StatusOr<std::vector<solver::PerfConfig>> top =
        score.ok() ? TopPredicted(*score, r.problem, target, *s->solver, 1) : score.status();
    absl::StatusOr<std::vector<float>> ranks = score.ok() ? (*score)(m.configs) : score.status();
    if (top.ok() && !top->empty() && ranks.ok()) {
      pred = times.Of(top->front(), "predicted");
      ranked = FromSession(m.times[std::min_element(ranks->begin(), ranks->end()) - ranks->begin()]);
    } else {
      const absl::Status why = !score.ok() ? score.status() : !top.ok() ? top.status() : ranks.status();
      report.notes.push_back(absl::StrCat(r.problem.Canonical(), " ", name, ": predictor not used (",
                                          why.ok() ? "no valid config" : why.message(), "), default counted"));
    }
    acc.predicted.Add(pred, m.best);
    acc.ranked.Add(ranked, m.best);
    if (def.from != CaseTime::From::kNone) {
      acc.defaults.Add(def, m.best);
    } else {
      ++acc.default_unmeasured;
    }
  }
}

}  // namespace

absl::StatusOr<EvalReport> Evaluate(const Models& models, const std::vector<const ProblemRecord*>& test,
                                    const solver::Target& target, const runtime::DeviceModel& device,
                                    const solver::SolverRegistry& registry, const MeasureFn& measure) {
  EvalReport report;
  report.measure = static_cast<bool>(measure);
  ChoiceAcc picker, fallback;
  ParamsAcc params;
  for (const ProblemRecord* r : test) {
    if (r->solver_ms.empty() && r->samples.empty()) continue;
    ++report.test_problems;
    ScoreChoice(models, *r, target, device, registry, picker, fallback, report);
    ScoreParams(models, *r, target, registry, measure, params, report);
  }
  if (report.test_problems == 0) return absl::InvalidArgumentError("no held-out config with timings to evaluate");
  report.picker = picker.Done();
  report.fallback = fallback.Done();
  report.predicted = params.predicted.Done();
  report.ranked = params.ranked.Done();
  report.defaults = params.defaults.Done();
  report.default_unmeasured = params.default_unmeasured;
  return report;
}

}  // namespace tuna::heuristics
