#include "tuner_core/search/tuner.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <utility>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/search/stop_rule.h"

namespace tuna::search {
namespace {

// A solver's search in progress: its best time and the best few compiled candidates, kept for
// the final re-timing (sorted by time).
struct SearchState {
  double best = 0;  // ms; 0 = none yet
  std::vector<std::pair<double, CompiledCandidate>> top;
};

// One measured candidate into the solver's result, the re-timing list and the progress.
// Returns whether it passed (an observation for the strategy).
bool RecordCandidate(const CompiledCandidate& c, Measurement m, bool dry_run,
                     const solver::PerfConfig& default_config, const TuneOptions& options,
                     SolverTuneResult& out, SearchState& st, TuneProgress& progress) {
  ++out.tried;
  ++out.by_disposition[m.disposition];
  const bool ok = m.disposition == Disposition::kPassed && !dry_run;
  if (ok) {
    ++out.passed;
    if (m.dropped_early) ++out.dropped_early;
    if (c.config == default_config) out.default_ms = progress.default_ms = m.time_ms;
    if (!m.dropped_early && (st.best == 0 || m.time_ms < st.best)) {
      st.best = m.time_ms;
      out.best_config = c.config;
    }
    if (!m.dropped_early && options.retime_top > 0) {
      st.top.emplace_back(m.time_ms, c);
      std::stable_sort(st.top.begin(), st.top.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      if (st.top.size() > static_cast<size_t>(options.retime_top)) st.top.pop_back();
    }
  } else if (m.disposition != Disposition::kSkipped && !(dry_run && m.disposition == Disposition::kPassed)) {
    ++out.failed;
    if (out.error.empty()) {
      out.error = absl::StrCat(std::string(DispositionName(m.disposition)), " [", c.config.ToString(), "]: ", m.error);
    }
    spdlog::debug("{} [{}]: {}: {}", out.name, c.config.ToString(), DispositionName(m.disposition), m.error);
  }
  m.samples_ms.shrink_to_fit();
  out.history.emplace_back(c.config, std::move(m));
  ++progress.done;
  progress.solver_best_ms = st.best;
  if (ok && (progress.best_ms == 0 || st.best < progress.best_ms)) {
    progress.best_ms = st.best;
    progress.best_solver = out.name;
  }
  if (options.progress) options.progress(progress);
  return ok;
}

// The best few candidates timed again together; the best of the re-timing wins.
void RetimeTop(Evaluator& evaluator, const solver::PerfConfig& default_config, int repetitions,
               SolverTuneResult& out, SearchState& st) {
  std::vector<const CompiledCandidate*> cands;
  for (const auto& t : st.top) cands.push_back(&t.second);
  std::vector<Measurement> again = evaluator.Retime(cands, repetitions);
  double retimed_best = 0;
  for (size_t i = 0; i < again.size(); ++i) {
    const bool passed = again[i].disposition == Disposition::kPassed;
    out.retimed.emplace_back(st.top[i].second.config, passed ? again[i].time_ms : 0.0);
    if (!passed) continue;
    if (st.top[i].second.config == default_config) out.default_ms = again[i].time_ms;
    if (retimed_best == 0 || again[i].time_ms < retimed_best) {
      retimed_best = again[i].time_ms;
      out.best_config = st.top[i].second.config;
    }
  }
  if (retimed_best > 0) st.best = retimed_best;
}

// The solver's outcome: passed with its best, or the first candidate's disposition.
void Conclude(bool dry_run, double best, SolverTuneResult& out) {
  if (out.passed > 0 && !dry_run) {
    out.disposition = Disposition::kPassed;
    out.best_ms = best;
    out.best_params = out.best_config.ToString();
  } else if (dry_run) {
    out.disposition = out.compiled > 0 ? Disposition::kSkipped : Disposition::kCompileFailed;
  } else if (!out.history.empty()) {
    out.disposition = out.history.front().second.disposition;
  }
}

// Runs f, adding its wall time to `acc` (ms); returns what f returns.
template <typename F>
auto Timed(double& acc, F&& f) {
  struct Add {
    double& acc;
    std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
    ~Add() { acc += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); }
  } add{acc};
  return f();
}

// The next batch of candidates, compiled: on another thread while the current batch is timed
// (`ahead`), or on Take's thread. A batch the search no longer needs is cancelled and handed to
// `abandoned` (Discard; the compile owns what it uses: the Compiler, shared, and a copy of the
// problem), or waited for without one. Destruction waits for a compile still held.
class BatchCompiler {
 public:
  static constexpr int kDiscardedNice = 19;

  BatchCompiler(std::shared_ptr<Compiler> compiler, const solver::Solver& solver, const Problem& problem,
                bool ahead)
      : compiler_(std::move(compiler)), solver_(solver), problem_(problem), ahead_(ahead) {}
  bool ahead() const { return ahead_; }
  bool submitted() const { return !pending_.empty(); }

  void Submit(std::vector<solver::PerfConfig> configs) {
    pending_ = std::move(configs);
    if (ahead_ && !pending_.empty()) {
      control_ = std::make_shared<CompileControl>();
      future_ = std::async(std::launch::async, [compiler = compiler_, solver = &solver_, problem = problem_,
                                                configs = pending_, control = control_] {
        return compiler->Compile(*solver, problem, configs, control.get());
      });
    }
  }

  // The submitted batch (empty when none was, or it was empty); adds the time waited to wait_ms.
  std::vector<CompiledCandidate> Take(double& wait_ms) {
    if (pending_.empty()) return {};
    std::vector<CompiledCandidate> out = Timed(
        wait_ms, [&] { return future_.valid() ? future_.get() : compiler_->Compile(solver_, problem_, pending_); });
    pending_.clear();
    return out;
  }

  // Drops the submitted batch (the search stopped): cancels its compiles not started, lowers
  // the threads still building (to nice 19: they yield to the builds a device waits for) and
  // hands the compile to `abandoned`, or waits for it when null. Returns the candidates dropped; adds
  // the time waited to wait_ms.
  uint64_t Discard(AbandonedCompiles* abandoned, double& wait_ms) {
    const uint64_t dropped = pending_.size();
    pending_.clear();
    if (!future_.valid()) return dropped;
    control_->Cancel(kDiscardedNice);
    if (abandoned != nullptr) {
      wait_ms += abandoned->Add(std::move(future_));
    } else {
      Timed(wait_ms, [&] { future_.wait(); });
      future_ = {};
    }
    return dropped;
  }

 private:
  std::shared_ptr<Compiler> compiler_;
  const solver::Solver& solver_;
  const Problem problem_;
  const bool ahead_;
  std::vector<solver::PerfConfig> pending_;
  std::shared_ptr<CompileControl> control_;
  std::future<std::vector<CompiledCandidate>> future_;
};

// What measuring a batch of one solver's search updates.
struct BatchContext {
  Evaluator* evaluator;  // null in a dry run: the compile outcome is the result
  const solver::PerfConfig& default_config;
  const TuneOptions& options;
  SolverTuneResult& out;
  SearchState& st;
  TuneProgress& progress;
  StopRule& stop;
};

// Every candidate of a compiled batch verified and timed (a dry run records its compile outcome)
// into the solver's result; returns the observations for the strategy.
std::vector<Observation> MeasureBatch(std::vector<CompiledCandidate>& compiled, const BatchContext& x) {
  const bool dry_run = x.evaluator == nullptr;
  std::vector<Observation> observations;
  for (CompiledCandidate& c : compiled) {
    if (c.disposition == Disposition::kPassed) ++x.out.compiled;
    if (c.disposition == Disposition::kCompileFailed) ++x.out.compile_failed;
    Measurement m;
    if (dry_run) {
      m.disposition = c.disposition;
      m.error = c.error;
    } else {
      m = x.evaluator->Evaluate(c, x.st.best);
    }
    const double time_ms = m.time_ms;
    const bool timed = !m.dropped_early;
    const bool ok = RecordCandidate(c, std::move(m), dry_run, x.default_config, x.options, x.out, x.st, x.progress);
    x.stop.Note(ok && timed, time_ms);
    observations.push_back({c.config, ok, time_ms});
    if (!dry_run && x.stop.Outclassed()) break;  // the rest of the batch is not timed
  }
  return observations;
}

// The finishing step's build (Solver::Specialize) of the best so far. On a GPU it starts
// building when a batch is taken for timing (Ahead), so that the step rarely waits for a
// compiler: a search mostly finds its winner before its last batch. A build for a best that a
// later batch beat is dropped like a batch compiled ahead (left to `abandoned`, or waited for).
// Destruction waits for a build still held.
class SpecialBuild {
 public:
  SpecialBuild(std::shared_ptr<Compiler> compiler, const solver::Solver& solver, const solver::Target& target,
               const Problem& problem, bool ahead)
      : compiler_(std::move(compiler)), solver_(solver), target_(target), problem_(problem), ahead_(ahead) {}

  // Starts building the specialisation of `best` (empty: none yet) unless it is already.
  void Ahead(const solver::PerfConfig& best, AbandonedCompiles* abandoned, double& discard_ms) {
    if (!ahead_ || best.values.empty()) return;
    std::optional<solver::PerfConfig> spec = solver_.Specialize(target_, problem_, best);
    if (!spec || (future_.valid() && *spec == config_)) return;
    Drop(abandoned, discard_ms);
    config_ = *spec;
    future_ = std::async(std::launch::async, [compiler = compiler_, solver = &solver_, problem = problem_,
                                              spec = *spec] { return compiler->Compile(*solver, problem, {spec}); });
  }

  // The build of `spec`: the one started ahead when it is that one, else built now (the time
  // waited is added to wait_ms).
  CompiledCandidate Take(const solver::PerfConfig& spec, AbandonedCompiles* abandoned, double& wait_ms,
                         double& discard_ms) {
    if (future_.valid() && config_ == spec) return Timed(wait_ms, [&] { return future_.get(); }).front();
    Drop(abandoned, discard_ms);
    return Timed(wait_ms, [&] { return compiler_->Compile(solver_, problem_, {spec}); }).front();
  }

  void Drop(AbandonedCompiles* abandoned, double& discard_ms) {
    if (!future_.valid()) return;
    if (abandoned != nullptr) {
      discard_ms += abandoned->Add(std::move(future_));
    } else {
      Timed(discard_ms, [&] { future_.wait(); });
    }
    future_ = {};
  }

 private:
  std::shared_ptr<Compiler> compiler_;
  const solver::Solver& solver_;
  const solver::Target& target_;
  const Problem problem_;
  const bool ahead_;
  solver::PerfConfig config_;
  std::future<std::vector<CompiledCandidate>> future_;
};

// The finishing step (Solver::Specialize): the winner built for this problem alone, verified,
// then timed against the winner, interleaved; the faster becomes the solver's best. The winner's
// build is a hit in the Compiler's cache. Waiting for the builds counts as compile time.
void Specialize(const solver::Solver& s, const solver::Target& target, const Problem& problem, Compiler& compiler,
                SpecialBuild& special, Evaluator& evaluator, const TuneOptions& options, SolverTuneResult& out,
                SearchState& st, TuneResult& times) {
  std::optional<solver::PerfConfig> spec = s.Specialize(target, problem, out.best_config);
  if (!spec) return;
  const CompiledCandidate built = special.Take(*spec, options.abandoned, times.compile_ms, times.discard_ms);
  const CompiledCandidate won = Timed(times.compile_ms, [&] { return compiler.CompileOne(s, problem, out.best_config); });
  const Specialized& f = out.specialized.emplace(
      Timed(times.retime_ms, [&] { return Finish(evaluator, won, *spec, built, options.retime_repetitions); }));
  if (f.runtime_ms <= 0) return;
  if (f.kept) out.best_config = f.config;
  st.best = std::min(f.runtime_ms, f.fixed_ms);
  spdlog::debug("{} [{}]: {} for this problem alone {:.4f} ms, one build for all {:.4f} ms: {}", out.name,
                problem.Canonical(), f.config.ToString(), f.fixed_ms, f.runtime_ms, f.kept ? "kept" : "not kept");
}

// The registry's solvers applicable to `problem` that serve its direction, in id order.
std::vector<solver::RegisteredSolver> Serving(const solver::SolverRegistry& registry, const solver::Target& target,
                                              const Problem& problem) {
  std::vector<solver::RegisteredSolver> solvers;
  for (const solver::RegisteredSolver& r : registry.Applicable(target, problem)) {
    const auto dirs = r.solver->Directions();
    if (std::find(dirs.begin(), dirs.end(), problem.direction) != dirs.end()) solvers.push_back(r);
  }
  return solvers;
}

}  // namespace

size_t DefaultBatch(int compile_threads) { return static_cast<size_t>(std::clamp(2 * compile_threads, 2, 16)); }

Tuner::Tuner(const solver::SolverRegistry& registry, const backend::Backend& backend,
             backend::Device* device, solver::Target target, TuneOptions options)
    : registry_(registry),
      backend_(backend),
      device_(device),
      target_(target),
      options_(std::move(options)),
      compiler_(std::make_shared<Compiler>(backend, target, options_.compiler)) {}

absl::StatusOr<TuneResult> Tuner::Tune(const Problem& problem, Evaluator* shared) {
  const auto t0 = std::chrono::steady_clock::now();
  TuneResult result;
  result.problem = problem;
  result.arch = target_.arch;
  result.dry_run = options_.dry_run;
  if (!options_.dry_run && device_ == nullptr) {
    return absl::FailedPreconditionError("tuning needs a device unless it is a dry run");
  }

  std::optional<Ahead> ahead;
  if (ahead_ && ahead_->problem == problem) ahead = std::move(ahead_);
  ahead_.reset();
  const std::vector<solver::RegisteredSolver> solvers = ahead ? ahead->solvers : SolversFor(problem);

  if (shared != nullptr && !(shared->problem() == problem)) {
    return absl::InvalidArgumentError(absl::StrCat("the evaluator given is for ",
                                                   shared->problem().Canonical(), ", not ",
                                                   problem.Canonical()));
  }
  std::unique_ptr<Evaluator> owned;
  Evaluator* evaluator = options_.dry_run ? nullptr : shared;
  if (!options_.dry_run && !solvers.empty() && evaluator == nullptr) {
    absl::StatusOr<std::unique_ptr<Evaluator>> ev =
        Evaluator::Create(*device_, problem, options_.evaluator, &registry_, &backend_, &target_);
    if (!ev.ok()) {
      return absl::Status(ev.status().code(),
                          absl::StrCat("preparing ", problem.Canonical(), ": ", ev.status().message()));
    }
    owned = *std::move(ev);
    evaluator = owned.get();
  }
  if (evaluator != nullptr) result.reference = evaluator->reference().source;

  // Plan every solver first so progress reports a real total from the first candidate on.
  const auto plan_start = std::chrono::steady_clock::now();
  std::vector<SolverPlan> plans = ahead ? std::move(ahead->plans) : PlanAll(solvers, problem);
  result.plan_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - plan_start).count();
  TuneProgress progress;
  for (const SolverPlan& plan : plans) progress.total += plan.planned;
  for (SolverPlan& plan : plans) {
    result.solvers.push_back(TuneSolver(plan, problem, evaluator, progress, result));
    const SolverTuneResult& s = result.solvers.back();
    if (!options_.dry_run && s.disposition == Disposition::kPassed &&
        (result.best < 0 || s.best_ms < result.solvers[result.best].best_ms)) {
      result.best = static_cast<int>(result.solvers.size() - 1);
    }
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

void Tuner::PlanAhead(const Problem& problem) {
  Ahead a{problem, SolversFor(problem), {}};
  a.plans = PlanAll(a.solvers, problem);
  ahead_ = std::move(a);
}

namespace {

// The largest space (points before validity) whose valid points LimitsOf counts: beyond it a
// space is not searched whole whatever its validity (the count would cost more than it saves).
constexpr uint64_t kWholeSpaceMaxPoints = 1 << 14;

// `s`'s valid points on `problem`, counted up to cap + 1.
uint64_t ValidUpTo(const solver::Solver& s, const solver::Target& target, const Problem& problem, uint64_t cap) {
  const solver::SearchSpace space = s.Space(target, problem);
  if (space.Size() > kWholeSpaceMaxPoints) return cap + 1;
  uint64_t n = 0;
  for (uint64_t i = 0; i < space.Size() && n <= cap; ++i) n += s.IsValid(target, problem, space.At(i)).ok();
  return n;
}

uint64_t GenericCapped(const TuneOptions& options, const solver::SolverRegistry& registry,
                       const solver::Target& target, const Problem& problem, const solver::Solver& s) {
  if (!s.IsGeneric(target, problem) || options.generic_budget == 0 || options.budget <= options.generic_budget) return options.budget;
  const std::vector<solver::RegisteredSolver> serving = Serving(registry, target, problem);
  const bool specialised = std::any_of(serving.begin(), serving.end(), [&](const solver::RegisteredSolver& r) {
    return r.solver->IsTunable() && !r.solver->IsGeneric(target, problem);
  });
  return specialised ? options.generic_budget : options.budget;
}

}  // namespace

SearchLimits LimitsOf(const TuneOptions& options, const solver::SolverRegistry& registry, const solver::Target& target,
                      const Problem& problem, const solver::Solver& s) {
  SearchLimits l{GenericCapped(options, registry, target, problem, s), options.patience, false};
  const bool bounded = l.budget > 0 || l.patience > 0;
  if (options.whole_space > 0 && bounded && l.budget == options.budget &&
      ValidUpTo(s, target, problem, options.whole_space) <= options.whole_space) {
    l = {0, 0, true};
  }
  return l;
}

uint64_t TransferSeeds(const TuneOptions& options, uint64_t budget) {
  // Not for a generic solver's capped search (LimitsOf); a whole search (budget 0) has them.
  return budget == options.budget || budget == 0 ? options.transfer_seeds : 0;
}

bool AddWarmStart(const TuneOptions& options, const ScoreContext& ctx, StrategyInput& in) {
  for (const std::string& params : options.warm_params) {
    if (absl::StatusOr<solver::PerfConfig> c = in.space.Parse(params); c.ok()) in.prior.push_back(in.space.Searched(*c));
  }
  if (options.transfer.empty()) return false;
  // The params timed elsewhere, valid here and not in the prior yet, best by mean slowdown first.
  std::vector<solver::PerfConfig> timed;
  for (const TransferPoint& p : AggregateTransfer(options.transfer, kTransferPoints)) {
    absl::StatusOr<solver::PerfConfig> c = in.space.Parse(p.params);
    if (c.ok()) *c = in.space.Searched(*c);
    if (c.ok() && (!in.is_valid || in.is_valid(*c)) && std::find(in.prior.begin(), in.prior.end(), *c) == in.prior.end()) {
      timed.push_back(*std::move(c));
    }
  }
  // Ranked by the search's score: a predictor's, else the transfer score (taken below).
  absl::StatusOr<ScoreFn> score = absl::FailedPreconditionError("a predictor scores");
  if (!in.score) score = TransferScore(ctx, in.space, options.transfer);
  const ScoreFn* rank = in.score ? &in.score : (score.ok() ? &*score : nullptr);
  absl::StatusOr<std::vector<float>> ranks = rank != nullptr ? (*rank)(timed) : score.status();
  std::vector<size_t> order(timed.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (ranks.ok() && ranks->size() == timed.size()) {
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*ranks)[a] < (*ranks)[b]; });
  }
  for (size_t k = 0; k < order.size() && k < kWarmParams; ++k) in.prior.push_back(timed[order[k]]);
  if (!score.ok()) return false;
  in.score = *std::move(score);
  in.scored_first = TransferSeeds(options, in.budget);
  return true;
}

std::vector<solver::RegisteredSolver> Tuner::SolversFor(const Problem& problem) const {
  std::vector<solver::RegisteredSolver> solvers;
  for (const solver::RegisteredSolver& r : Serving(registry_, target_, problem)) {
    if (!options_.solvers.empty() &&
        std::find(options_.solvers.begin(), options_.solvers.end(), std::string(r.solver->Name())) ==
            options_.solvers.end()) {
      continue;
    }
    solvers.push_back(r);
  }
  return solvers;
}

std::vector<Tuner::SolverPlan> Tuner::PlanAll(const std::vector<solver::RegisteredSolver>& solvers,
                                              const Problem& problem) const {
  std::vector<SolverPlan> plans;
  for (const solver::RegisteredSolver& r : solvers) plans.push_back(Plan(r, problem));
  return plans;
}

Tuner::SolverPlan Tuner::Plan(const solver::RegisteredSolver& r, const Problem& problem) const {
  const solver::Solver& s = *r.solver;
  SolverPlan plan;
  plan.registered = r;
  plan.default_config = s.DefaultConfig(target_, problem);
  const solver::SearchSpace space = s.IsTunable() ? s.Space(target_, problem) : solver::SearchSpace();
  plan.tunable = s.IsTunable() && !space.empty();
  plan.planned = 1;
  if (!plan.tunable) return plan;
  plan.strategy = MakeStrategy(options_.strategy);
  StrategyInput in;
  in.space = space;
  // The predicate outlives this call (the strategy keeps it): capture by value.
  in.is_valid = [target = target_, solver = &s, problem](const solver::PerfConfig& c) {
    return solver->IsValid(target, problem, c).ok();
  };
  const SearchLimits limits = LimitsOf(options_, registry_, target_, problem, s);
  in.budget = limits.budget;
  plan.patience = limits.patience;
  in.seed = options_.seed;
  in.prior = {plan.default_config};
  if (!options_.prior_params.empty()) {
    absl::StatusOr<solver::PerfConfig> c = space.Parse(options_.prior_params);
    if (c.ok() && s.IsValid(target_, problem, *c).ok()) {
      in.prior = {*c};
      in.budget = 1;
      plan.reused = true;
      plan.prior = *c;
    }
  }
  if (!plan.reused && options_.predictor && options_.predicted_seeds > 0) {
    absl::StatusOr<ScoreFn> score = options_.predictor(problem, target_, s);
    if (score.ok()) {
      in.score = *std::move(score);
      in.scored_first = options_.predicted_seeds;
    } else {
      plan.predictor_note = std::string(score.status().message());
    }
  }
  if (!plan.reused && AddWarmStart(options_, {&s, target_, problem}, in) && !plan.predictor_note.empty()) {
    plan.predictor_note += "; the transfer score seeds instead";
  }
  if (absl::Status st = plan.strategy->Start(in); !st.ok()) {
    plan.error = st.ToString();
    plan.strategy.reset();
    plan.planned = 0;
    return plan;
  }
  plan.planned = plan.strategy->PlannedTotal().value_or(options_.budget);
  const ScoreUse used = plan.strategy->score_use();
  plan.predicted_seeded = used.seeded;
  if (in.score && !used.error.empty()) plan.predictor_note = used.error;
  return plan;
}

SolverTuneResult Tuner::TuneSolver(SolverPlan& plan, const Problem& problem, Evaluator* evaluator,
                                   TuneProgress& progress, TuneResult& times) {
  const solver::RegisteredSolver& r = plan.registered;
  const solver::Solver& s = *r.solver;
  SolverTuneResult out;
  out.id = r.id;
  out.name = std::string(s.Name());
  out.tunable = plan.tunable;
  out.planned = plan.planned;
  out.predicted_seeded = plan.predicted_seeded;
  out.predictor_note = plan.predictor_note;
  out.reused = plan.reused;
  const solver::PerfConfig& default_config = plan.default_config;
  SearchStrategy* strategy = plan.strategy.get();
  if (out.tunable && strategy == nullptr) {
    out.error = plan.error;
    return out;
  }
  progress.solver = out.name;
  progress.solver_best_ms = progress.default_ms = 0;

  const size_t batch = options_.batch > 0 ? options_.batch : DefaultBatch(compiler_->threads());
  const bool dry_run = evaluator == nullptr;  // the compile outcome is the result
  auto next_batch = [&, first = true]() mutable -> std::vector<solver::PerfConfig> {
    const bool was_first = std::exchange(first, false);
    if (plan.reused) return was_first ? std::vector<solver::PerfConfig>{plan.prior} : std::vector<solver::PerfConfig>{};
    if (out.tunable) return Timed(times.strategy_ms, [&] { return strategy->Next(batch); });
    return was_first ? std::vector<solver::PerfConfig>{default_config} : std::vector<solver::PerfConfig>{};
  };
  using Ahead = TuneOptions::CompileAhead;
  const bool ahead = !dry_run && (options_.compile_ahead == Ahead::kOn ||
                                  (options_.compile_ahead == Ahead::kAuto && target_.IsGpu()));
  BatchCompiler source(compiler_, s, problem, ahead);
  SpecialBuild special(compiler_, s, target_, problem, ahead && options_.specialize && !plan.reused);
  StopRule stop(options_, out.tunable, plan.patience);
  SearchState st;
  const BatchContext context{evaluator, default_config, options_, out, st, progress, stop};
  source.Submit(next_batch());
  for (;;) {
    std::vector<CompiledCandidate> compiled = source.Take(times.compile_ms);
    if (compiled.empty()) break;
    // Speculation: the next batch is proposed (and starts compiling) before this one is observed,
    // unless this batch decides whether there is a next one (patience): then it waits for the
    // observation. On the H200, 2026-11-25, speculating there built 2,990 candidates that the
    // stopped searches dropped (ResNet-50 FP32 + FP16 files): host CPU 82 % busy, GPU 61 %. The
    // device need not idle meanwhile: a second executor on it times its own job.
    if (source.ahead() && !stop.MayStopWithin(compiled.size())) source.Submit(next_batch());
    special.Ahead(out.best_config, options_.abandoned, times.discard_ms);
    const std::vector<Observation> observations =
        Timed(times.evaluate_ms, [&] { return MeasureBatch(compiled, context); });
    if (strategy != nullptr) Timed(times.strategy_ms, [&] { strategy->Observe(observations); });
    if (!dry_run && !evaluator->healthy()) {
      out.error = absl::StrCat("device unusable; search stopped: ", out.error);
      break;
    }
    out.stopped_by = stop.Reason();
    if (!out.stopped_by.empty()) break;
    if (!source.submitted()) source.Submit(next_batch());
  }
  // A batch compiled ahead that the stopped search will not try: not waited for when it can be
  // left to end elsewhere (TuneOptions::abandoned).
  times.discarded += source.Discard(options_.abandoned, times.discard_ms);
  // Unused planned candidates (a stopped search) must not keep the progress total inflated.
  if (out.tried < out.planned) progress.total -= out.planned - out.tried;
  if (out.tried > out.planned) progress.total += out.tried - out.planned;

  if (!dry_run && st.top.size() > 1 && options_.retime_repetitions > 0 && evaluator->healthy()) {
    Timed(times.retime_ms, [&] { RetimeTop(*evaluator, default_config, options_.retime_repetitions, out, st); });
  }
  // The finishing step; not for params an earlier search chose (reused): it decided there.
  if (!dry_run && options_.specialize && !plan.reused && st.best > 0 && evaluator->healthy()) {
    Specialize(s, target_, problem, *compiler_, special, *evaluator, options_, out, st, times);
  }
  special.Drop(options_.abandoned, times.discard_ms);
  Conclude(dry_run, st.best, out);
  return out;
}

}  // namespace tuna::search
