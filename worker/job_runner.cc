#include "worker/job_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/search/measure/compiler.h"
#include "tuner_core/search/measure/evaluator.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/target.h"

namespace tuna::worker {
namespace {

struct Prepared {
  Problem problem;
  const solver::RegisteredSolver* solver = nullptr;
};

absl::StatusOr<Prepared> Prepare(const coordinator::LeasedJob& job,
                                 const solver::SolverRegistry& registry) {
  auto problems = ParseDriverLine(job.driver);
  if (!problems.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("driver line: ", problems.status().message()));
  }
  if (problems->size() != 1) {
    return absl::FailedPreconditionError("the driver line is not exactly one problem");
  }
  Prepared p;
  p.problem = (*problems)[0];
  p.solver = registry.ByName(job.solver_name);
  if (p.solver == nullptr) {  // a newer solver (rolling upgrade): another worker may know it
    return absl::UnimplementedError(
        absl::StrCat("solver '", job.solver_name, "' is unknown to this worker"));
  }
  return p;
}

search::TuneOptions TuneOptionsFor(const JobTuning& t, const coordinator::LeasedJob& job, bool dry_run,
                                   bool gpu = false, search::CompilePool* pool = nullptr) {
  search::TuneOptions o;
  o.transfer = job.transfer;
  o.prior_params = job.prior_params;
  o.predictor = t.predictor;
  if (gpu) o.evaluator.cpu_reference_max_flops = search::kGpuCpuReferenceMaxFlops;
  o.strategy = t.strategy;
  o.budget = t.budget;
  o.seed = t.seed;
  o.solvers = {job.solver_name};
  o.compiler.threads = t.compile_threads;
  o.compiler.pool = pool;
  o.evaluator.seed = t.seed;
  o.evaluator.repetitions = std::max(1, t.repetitions);
  o.evaluator.launch_timeout = t.launch_timeout;
  if (!dry_run) {
    o.evaluator.device_guard = t.device_guard;
    o.abandoned = t.abandoned;
  }
  o.dry_run = dry_run;
  o.whole_space = t.whole_space;  // the compile step then builds a small space whole
  if (!dry_run) {
    o.patience = t.patience;
    o.time_limit_s = t.time_limit_s;
    // The find job that follows runs the finishing step (FinishingConfig), off the device's path.
    o.specialize = t.specialize && !job.find_follows;
    if (t.outclassed > 0 && (t.fastest != nullptr || job.rival_ms > 0)) {
      // The faster of what this executor saw and what the job was handed (the session at the
      // claim, the worker's other lanes since).
      o.outclassed_factor = t.outclassed;
      o.rival_ms = [fastest = t.fastest, config = job.config_id, leased = job.rival_ms] {
        return fastest != nullptr ? fastest->Rival(config, leased) : leased;
      };
    }
  }
  return o;
}

// An eval report of `job` that succeeded (so far).
coordinator::Report EvalReport(const coordinator::LeasedJob& job) {
  coordinator::Report r;
  r.job_id = job.job_id;
  r.attempt = job.attempt;
  r.step = jobs::JobStep::kEval;
  r.succeeded = true;
  return r;
}

// The options of a perf job's compile step (a dry run of its search). A model-guided search
// proposes from its cost model once its initial random sample is observed, and the eval step
// fits that model on its own timings: only the proposals before that (the first sample's
// batches as the eval step asks for them, search::ModelBlindProposals) are built here; the
// eval step builds the model's proposals itself, while the batch before them is timed.
search::TuneOptions CompileStepOptions(const JobTuning& t, const coordinator::LeasedJob& job,
                                       const solver::Solver& s, const solver::Target& target,
                                       const Problem& problem, search::CompilePool* pool) {
  search::TuneOptions o = TuneOptionsFor(t, job, true, false, pool);
  if (t.strategy != search::StrategyKind::kModel) return o;
  // The eval step's executor compiles on threads of its own (no pool): its batches are these
  // (with the same --compile-jobs; an eval worker with more threads than this one asks for
  // larger batches and builds the few first-sample points beyond these itself).
  const int eval_threads =
      t.compile_threads > 0 ? t.compile_threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  o.budget = search::ModelBlindProposals(s.Space(target, problem).axes().size(), search::DefaultBatch(eval_threads),
                                         target.IsGpu(), o.budget);
  return o;
}

coordinator::Report Failure(const coordinator::LeasedJob& job, const std::string& error,
                            bool retryable, jobs::Blame blame = jobs::Blame::kJob) {
  coordinator::Report r = EvalReport(job);
  r.blame = blame;
  r.succeeded = false;
  r.error = error;
  r.retryable = retryable;
  return r;
}

// A job Prepare refused: a solver this worker does not know goes back for another worker
// (unsupported); anything else (a driver line that does not parse) is the job's for good.
coordinator::Report Refused(const coordinator::LeasedJob& job, const absl::Status& st) {
  return Failure(job, std::string(st.message()), false,
                 absl::IsUnimplemented(st) ? jobs::Blame::kUnsupported : jobs::Blame::kJob);
}

coordinator::Sample ToSample(const solver::PerfConfig& config, const search::Measurement& m) {
  coordinator::Sample s;
  s.params = config.ToString();
  if (m.disposition == search::Disposition::kPassed && std::isfinite(m.time_ms) && m.time_ms > 0) {
    s.time_ms = m.time_ms;
  }
  s.status = std::string(search::DispositionName(m.disposition));
  s.error = m.error.substr(0, 2000);
  return s;
}

// The config a find job times: the session's tuned params when the coordinator sent valid
// ones (the perf job of the same config and solver ended first), else the default.
solver::PerfConfig FindConfig(const coordinator::LeasedJob& job, const solver::Solver& s,
                              const solver::Target& target, const Problem& problem) {
  if (!job.tuned_params.empty() && s.IsTunable()) {
    absl::StatusOr<solver::PerfConfig> tuned = s.Space(target, problem).Parse(job.tuned_params);
    if (tuned.ok() && s.IsValid(target, problem, *tuned).ok()) return *tuned;
    spdlog::warn("job {} ({}): tuned params '{}' unusable ({}); timing the default params",
                 job.job_id, job.solver_name, job.tuned_params,
                 tuned.ok() ? std::string(s.IsValid(target, problem, *tuned).message())
                            : std::string(tuned.status().message()));
  }
  return s.DefaultConfig(target, problem);
}

// The finishing step of a find job (search/finishing.h): its tuned params built for this problem
// alone, when the solver offers that build and it is another one; else none.
std::optional<solver::PerfConfig> FinishingConfig(const coordinator::LeasedJob& job, const JobTuning& t,
                                                  const solver::Solver& s, const solver::Target& target,
                                                  const Problem& problem, const solver::PerfConfig& tuned) {
  if (!t.specialize || job.kind != "find" || job.tuned_params.empty() || !s.IsTunable()) return std::nullopt;
  std::optional<solver::PerfConfig> spec = s.Specialize(target, problem, tuned);
  if (!spec || *spec == tuned) return std::nullopt;
  return spec;
}

}  // namespace

std::vector<std::string> JobTuningArgs(const JobTuning& t) {
  std::vector<std::string> args = {"--strategy", std::string(search::StrategyKindName(t.strategy)),
                                   "--budget", std::to_string(t.budget),
                                   "--seed", std::to_string(t.seed),
                                   "--compile-jobs", std::to_string(t.compile_threads),
                                   "--repetitions", std::to_string(t.repetitions),
                                   "--launch-timeout", std::to_string(absl::ToInt64Seconds(t.launch_timeout)),
                                   "--patience", std::to_string(t.patience),
                                   "--whole-space", std::to_string(t.whole_space),
                                   "--time-limit-per-job", absl::StrCat(t.time_limit_s),
                                   "--outclassed", absl::StrCat(t.outclassed)};
  if (!t.specialize) args.push_back("--no-specialize");  // a flag of `tuna worker` (cli/search_flags.h)
  if (!t.heuristics_model.empty()) {
    args.push_back("--heuristics-model");
    args.push_back(t.heuristics_model);
  }
  return args;
}

absl::StatusOr<CompileOutcome> CompileJob(const coordinator::LeasedJob& job,
                                          const backend::Backend& backend,
                                          const solver::SolverRegistry& registry,
                                          const JobTuning& tuning,
                                          search::CompilePool* pool) {
  auto prepared = Prepare(job, registry);
  if (!prepared.ok()) return prepared.status();
  auto target = solver::TargetForArch(job.arch, job.num_cu);
  if (!target.ok()) {  // an arch this build does not know: another worker may
    return absl::UnimplementedError(absl::StrCat("arch '", job.arch, "' is unknown to this worker: ",
                                                 target.status().message()));
  }
  CompileOutcome out;
  const solver::Solver& s = *prepared->solver->solver;
  if (job.kind == "find" || !s.IsTunable()) {
    search::Compiler compiler(backend, *target, {tuning.compile_threads, pool});
    std::vector<solver::PerfConfig> configs = {FindConfig(job, s, *target, prepared->problem)};
    if (auto spec = FinishingConfig(job, tuning, s, *target, prepared->problem, configs[0])) configs.push_back(*spec);
    for (const search::CompiledCandidate& c : compiler.Compile(s, prepared->problem, configs)) {
      ++out.candidates;
      out.compiled += c.disposition == search::Disposition::kPassed;
      out.failed += c.disposition == search::Disposition::kCompileFailed;
      if (c.disposition != search::Disposition::kPassed && out.first_error.empty()) out.first_error = c.error;
    }
  } else {
    // The dry run proposes the same candidates as the eval search (exhaustive and random
    // strategies do not depend on observations), so it compiles what eval will load.
    search::Tuner tuner(registry, backend, nullptr, *target, CompileStepOptions(tuning, job, s, *target,
                                                                                prepared->problem, pool));
    auto r = tuner.Tune(prepared->problem);
    if (!r.ok()) return absl::FailedPreconditionError(std::string(r.status().message()));
    for (const search::SolverTuneResult& sr : r->solvers) {
      out.candidates += sr.tried;
      out.compiled += sr.compiled;
      out.failed += sr.compile_failed;
      if (out.first_error.empty() && sr.compiled == 0) out.first_error = sr.error;
    }
  }
  return out;
}

absl::StatusOr<search::Evaluator*> EvaluatorCache::Get(backend::Device& device,
                                                      const Problem& problem,
                                                      const search::EvaluatorOptions& options,
                                                      const solver::SolverRegistry& registry,
                                                      const backend::Backend& backend,
                                                      const solver::Target& target) {
  const std::string key = Key(problem, options);
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = entries_[i];
    if (e.key != key || !(e.evaluator->problem() == problem)) continue;
    if (!e.evaluator->healthy()) {
      entries_.erase(entries_.begin() + static_cast<ptrdiff_t>(i));
      break;
    }
    std::rotate(entries_.begin(), entries_.begin() + static_cast<ptrdiff_t>(i),
                entries_.begin() + static_cast<ptrdiff_t>(i) + 1);
    ++reuses_;
    return entries_.front().evaluator.get();
  }
  while (entries_.size() >= capacity_) entries_.pop_back();
  search::EvaluatorOptions with_cache = options;
  if (!with_cache.compare_kernels) with_cache.compare_kernels = compare_kernels_;
  if (!with_cache.modules) with_cache.modules = modules_;
  if (!with_cache.flush_buffer) with_cache.flush_buffer = flush_;
  std::optional<search::HostPreparation> host;
  for (auto p = pending_.begin(); p != pending_.end(); ++p) {
    if (p->key != key) continue;
    absl::StatusOr<search::HostPreparation> h = p->host.get();  // usually done by now
    pending_.erase(p);
    if (h.ok()) {
      host = *std::move(h);
      ++prefetched_;
    }
    break;
  }
  auto ev = search::Evaluator::Create(device, problem, with_cache, &registry, &backend, &target,
                                      host ? &*host : nullptr);
  if (!ev.ok()) return ev.status();
  entries_.insert(entries_.begin(), Entry{key, *std::move(ev)});
  const double budget = max_device_fraction_ * static_cast<double>(device.Info().global_memory_bytes);
  size_t held = 0;
  for (const Entry& e : entries_) held += e.evaluator->device_bytes();
  while (entries_.size() > 1 && budget > 0 && static_cast<double>(held) > budget) {
    held -= entries_.back().evaluator->device_bytes();
    entries_.pop_back();
  }
  return entries_.front().evaluator.get();
}

std::string EvaluatorCache::Key(const Problem& problem, const search::EvaluatorOptions& options) {
  // Everything of the options that changes the data or the reference (the rest only changes
  // how candidates are timed).
  return absl::StrCat(problem.Canonical(), "|", options.seed, "|", options.cpu_reference_max_flops,
                      "|", options.reference_solver, "|", options.flush_l2);
}

void EvaluatorCache::WarmUp(const backend::Backend& backend, backend::Device& device,
                            const solver::SolverRegistry& registry) {
  const solver::Target target = solver::TargetForDevice(backend.Kind(), device.Info());
  if (!target.IsGpu()) return;
  const auto t0 = std::chrono::steady_clock::now();
  for (reference::ElementType type : {reference::ElementType::kFp32, reference::ElementType::kFp16,
                                      reference::ElementType::kBf16}) {
    (void)compare_kernels_->Get(backend, target.arch, type);
  }
  search::Compiler compiler(backend, target, {1});
  for (const char* line : {"conv -n 1 -c 1 -H 4 -W 4 -k 1 -y 1 -x 1 -F 1",
                           "conv -n 1 -c 1 -H 4 -W 4 -k 1 -y 1 -x 1 -F 2",
                           "conv -n 1 -c 1 -H 4 -W 4 -k 1 -y 1 -x 1 -F 4"}) {
    auto problems = ParseDriverLine(line);
    if (!problems.ok() || problems->size() != 1) continue;
    for (const solver::RegisteredSolver& r : registry.All()) {
      const auto dirs = r.solver->Directions();
      if (std::string_view(r.solver->Name()).substr(0, 19) != "ConvDirectNaiveConv" ||
          std::find(dirs.begin(), dirs.end(), (*problems)[0].direction) == dirs.end()) {
        continue;
      }
      (void)compiler.CompileOne(*r.solver, (*problems)[0],
                                r.solver->DefaultConfig(target, (*problems)[0]));
    }
  }
  spdlog::info("executor: warmed up for {} in {:.0f} ms", target.arch,
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
}

void EvaluatorCache::Prefetch(const Problem& problem, const search::EvaluatorOptions& options) {
  const std::string key = Key(problem, options);
  for (const Entry& e : entries_) {
    if (e.key == key) return;
  }
  for (const Pending& p : pending_) {
    if (p.key == key) return;
  }
  if (pending_.size() >= kMaxPending) {  // make room only by dropping one that has ended
    auto ended = std::find_if(pending_.begin(), pending_.end(), [](const Pending& p) {
      return p.host.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    });
    if (ended == pending_.end()) return;
    pending_.erase(ended);
  }
  pending_.push_back({key, std::async(std::launch::async, [problem, options] {
                        return search::Evaluator::PrepareOnHost(problem, options);
                      })});
}

namespace {

// Where an eval job's wall went on the executor's thread (ms), each part measured around its
// calls (job_runner.h, EvalJob: the `split ms:` of the log line).
struct JobSplit {
  double ready = 0;       // the evaluator (EvaluatorCache::Get)
  double plan_wait = 0;   // PlannedTuner::Take
  double plan = 0;        // the rest are the search's (search::TuneResult)
  double code = 0;
  double strategy = 0;
  double candidates = 0;
  double retime = 0;
  double discard = 0;
  uint64_t dropped = 0;   // candidates of the discarded batches

  void Add(const search::TuneResult& r) {
    plan += r.plan_ms;
    code += r.compile_ms;
    strategy += r.strategy_ms;
    candidates += r.evaluate_ms;
    retime += r.retime_ms;
    discard += r.discard_ms;
    dropped += r.discarded;
  }
  double Named() const { return ready + plan_wait + plan + code + strategy + candidates + retime + discard; }
};

// Where an eval job's time went, for its log line and the report.
void Account(const coordinator::LeasedJob& job, const search::EvalTimings& t, double wall_s,
             const JobSplit& x, bool reused, coordinator::Report& rep) {
  rep.timings.wall_seconds = wall_s;
  rep.timings.device_seconds = t.device_ms / 1e3;
  rep.timings.kernel_seconds = t.kernel_ms / 1e3;
  spdlog::info(
      "job {} ({}, config {}, {}): {:.3f} s: setup {:.0f} ms, reference {:.0f} ms, load {:.0f} ms, "
      "verify {:.0f} ms, timing {:.0f} ms; device {:.0f} ms ({:.0f}%), kernels {:.0f} ms, "
      "{} candidate(s); evaluator ready in {:.0f} ms, plan {:.0f} ms, code {:.0f} ms, "
      "device lock wait {:.0f} ms; evaluator {}, modules {} loaded, {} reused; split ms: ready {:.0f}, "
      "plan wait {:.0f}, plan {:.0f}, code {:.0f}, strategy {:.0f}, candidates {:.0f}, retime {:.0f}, "
      "discard wait {:.0f} ({} dropped), other {:.0f}",
      job.job_id, job.kind, job.config_id, job.solver_name, wall_s, t.setup_ms, t.reference_ms,
      t.load_ms, t.verify_ms, t.timing_ms, t.device_ms,
      wall_s > 0 ? 100 * t.device_ms / 1e3 / wall_s : 0.0, t.kernel_ms, t.candidates, x.ready,
      x.plan, x.code, t.device_wait_ms, reused ? "reused" : "new", t.modules_loaded,
      t.modules_reused, x.ready, x.plan_wait, x.plan, x.code, x.strategy, x.candidates, x.retime,
      x.discard, x.dropped, 1e3 * wall_s - x.Named());
}

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A find job, or a perf job of a solver with nothing to tune: the one config timed
// (FindConfig), and for a find job the finishing step on it (FinishingConfig: the build for this
// problem alone, verified and timed against it, kept when faster: the report is then `finished`).
coordinator::Report EvalOne(const coordinator::LeasedJob& job, const solver::Solver& s, const Problem& problem,
                            const solver::Target& target, const backend::Backend& backend, const JobTuning& tuning,
                            int retime_repetitions, search::Evaluator& ev, JobSplit& split) {
  coordinator::Report rep = EvalReport(job);
  search::Compiler compiler(backend, target, {tuning.compile_threads});
  const solver::PerfConfig config = FindConfig(job, s, target, problem);
  const std::optional<solver::PerfConfig> spec = FinishingConfig(job, tuning, s, target, problem, config);
  const auto code_start = std::chrono::steady_clock::now();
  const search::CompiledCandidate c = compiler.CompileOne(s, problem, config);
  split.code = 1e3 * SecondsSince(code_start);
  const auto eval_start = std::chrono::steady_clock::now();
  const search::Measurement m = ev.Evaluate(c, 0);
  split.candidates = 1e3 * SecondsSince(eval_start);
  rep.samples.push_back(ToSample(config, m));
  rep.candidates_tried = 1;
  if (m.disposition == search::Disposition::kTimeout) {
    return Failure(job, absl::StrCat("launch timeout: ", m.error), true);
  }
  if (m.disposition != search::Disposition::kPassed || m.time_ms <= 0) return rep;
  rep.has_result = true;
  rep.params = config.ToString();
  rep.kernel_time_ms = m.time_ms;
  rep.workspace_bytes = static_cast<int64_t>(c.solution.workspace_bytes);
  rep.verified = true;  // kPassed means the output matched the reference
  if (!spec || !ev.healthy()) return rep;
  const auto spec_code = std::chrono::steady_clock::now();
  const search::CompiledCandidate built = compiler.CompileOne(s, problem, *spec);  // the compile step's
  split.code += 1e3 * SecondsSince(spec_code);
  const auto retime_start = std::chrono::steady_clock::now();
  const search::Specialized f = search::Finish(ev, c, *spec, built, retime_repetitions);
  split.retime = 1e3 * SecondsSince(retime_start);
  ++rep.candidates_tried;
  search::Measurement fm;
  fm.disposition = f.disposition;
  fm.error = f.error;
  fm.time_ms = f.fixed_ms;
  rep.samples.push_back(ToSample(f.config, fm));
  spdlog::info("job {} ({}, config {}, {}): finishing step: [{}] for this problem alone {}", job.job_id, job.kind,
               job.config_id, job.solver_name, f.config.ToString(),
               f.runtime_ms > 0 ? absl::StrCat(f.fixed_ms, " ms against ", f.runtime_ms, " ms: ",
                                               f.kept ? "kept" : "not kept")
                                : absl::StrCat(std::string(search::DispositionName(f.disposition)), ": ", f.error));
  // A specialisation that hung leaves the device unusable (the caller sees it), but the tuned
  // build's verified time above stands: the job keeps it rather than failing on every retry.
  if (!f.kept) return rep;
  rep.params = f.config.ToString();
  rep.kernel_time_ms = f.fixed_ms;
  rep.finished = true;
  rep.workspace_bytes = static_cast<int64_t>(built.solution.workspace_bytes);
  return rep;
}

// The job's solver in its tune result (null when it was not searched). With a predictor, logs
// how many predicted configs its search was seeded with, or why none.
const search::SolverTuneResult* JobSolver(const coordinator::LeasedJob& job, const search::TuneResult& r,
                                          bool predictor) {
  for (const search::SolverTuneResult& x : r.solvers) {
    if (x.name != job.solver_name) continue;
    if (x.reused) {
      spdlog::info("job {} ({}, config {}, {}): reusing params [{}] an earlier session verified (no search; "
                   "tune -f --retune searches again)", job.job_id, job.kind, job.config_id, job.solver_name,
                   job.prior_params);
    } else if (predictor && x.tunable) {
      spdlog::info("job {} ({}, config {}, {}): {} predicted config(s) seeded from the heuristics model{}", job.job_id,
                   job.kind, job.config_id, job.solver_name, x.predicted_seeded,
                   x.predictor_note.empty() ? "" : " (not used: " + x.predictor_note + ")");
    }
    return &x;
  }
  return nullptr;
}

}  // namespace

void PrefetchEvaluator(const coordinator::LeasedJob& next, const backend::Backend& backend,
                       backend::Device& device, const JobTuning& tuning,
                       EvaluatorCache& evaluators) {
  auto problems = ParseDriverLine(next.driver);
  if (!problems.ok() || problems->size() != 1) return;
  const solver::Target target = solver::TargetForDevice(backend.Kind(), device.Info());
  evaluators.Prefetch((*problems)[0],
                      TuneOptionsFor(tuning, next, false, target.IsGpu()).evaluator);
}

void PlannedTuner::Start(const coordinator::LeasedJob& next, const backend::Backend& backend,
                         backend::Device& device, const solver::SolverRegistry& registry,
                         const JobTuning& tuning) {
  for (const Plan& p : plans_) {
    if (p.job_id == next.job_id) return;
  }
  auto prepared = Prepare(next, registry);
  if (!prepared.ok() || next.kind == "find" || !prepared->solver->solver->IsTunable()) return;
  if (plans_.size() >= kMaxPlanned) plans_.erase(plans_.begin());  // waits for its planning
  const solver::Target target = solver::TargetForDevice(backend.Kind(), device.Info());
  const search::TuneOptions options = TuneOptionsFor(tuning, next, false, target.IsGpu());
  auto tuner = std::make_unique<search::Tuner>(registry, backend, &device, target, options);
  plans_.push_back({next.job_id, std::async(std::launch::async,
                                            [tuner = std::move(tuner), problem = prepared->problem]() mutable {
                                              tuner->PlanAhead(problem);
                                              return std::move(tuner);
                                            })});
}

std::unique_ptr<search::Tuner> PlannedTuner::Take(int64_t job_id) {
  for (auto p = plans_.begin(); p != plans_.end(); ++p) {
    if (p->job_id != job_id) continue;
    std::unique_ptr<search::Tuner> tuner = p->tuner.get();
    plans_.erase(p);
    return tuner;
  }
  return nullptr;
}

coordinator::Report EvalJob(const coordinator::LeasedJob& job, const backend::Backend& backend,
                            backend::Device& device, const solver::SolverRegistry& registry,
                            const JobTuning& tuning, EvaluatorCache& evaluators,
                            bool* device_wedged, PlannedTuner* planned) {
  const auto start = std::chrono::steady_clock::now();
  *device_wedged = false;
  auto prepared = Prepare(job, registry);
  if (!prepared.ok()) return Refused(job, prepared.status());
  const solver::Target target = solver::TargetForDevice(backend.Kind(), device.Info());
  const solver::Solver& s = *prepared->solver->solver;
  const Problem& problem = prepared->problem;
  if (absl::Status st = s.IsApplicable(target, problem); !st.ok()) {
    return Failure(job, absl::StrCat("not applicable on ", target.arch, ": ", st.message()), false);
  }
  coordinator::Report rep = EvalReport(job);

  const search::TuneOptions options = TuneOptionsFor(tuning, job, false, target.IsGpu());
  const int64_t reuses = evaluators.reuses();
  JobSplit split;
  const auto get_start = std::chrono::steady_clock::now();
  auto ev = evaluators.Get(device, problem, options.evaluator, registry, backend, target);
  split.ready = 1e3 * SecondsSince(get_start);
  if (!ev.ok()) return Failure(job, absl::StrCat("evaluator: ", ev.status().ToString()), false);
  // A reused evaluator's setup and reference were another job's.
  const bool reused = evaluators.reuses() > reuses;
  const search::EvalTimings before = reused ? (*ev)->timings() : search::EvalTimings{};

  if (job.kind == "find" || !s.IsTunable()) {
    rep = EvalOne(job, s, problem, target, backend, tuning, options.retime_repetitions, **ev, split);
    *device_wedged = !(*ev)->healthy();
    Account(job, (*ev)->timings() - before, SecondsSince(start), split, reused, rep);
    return rep;
  }

  const auto take_start = std::chrono::steady_clock::now();
  std::unique_ptr<search::Tuner> tuner = planned ? planned->Take(job.job_id) : nullptr;
  split.plan_wait = 1e3 * SecondsSince(take_start);
  if (!tuner) tuner = std::make_unique<search::Tuner>(registry, backend, &device, target, options);
  auto r = tuner->Tune(problem, *ev);
  *device_wedged = !(*ev)->healthy();
  if (r.ok()) split.Add(*r);
  Account(job, (*ev)->timings() - before, SecondsSince(start), split, reused, rep);
  if (!r.ok()) return Failure(job, r.status().ToString(), false);
  const search::SolverTuneResult* sr = JobSolver(job, *r, options.predictor != nullptr);
  if (sr == nullptr) return Failure(job, "the solver was not searched (not applicable)", false);
  for (const auto& [config, m] : sr->history) rep.samples.push_back(ToSample(config, m));
  if (sr->by_disposition.count(search::Disposition::kTimeout) > 0) *device_wedged = true;
  rep.candidates_tried = static_cast<int64_t>(sr->tried);
  if (sr->disposition == search::Disposition::kPassed && sr->best_ms > 0) {
    rep.has_result = true;
    rep.params = sr->best_params;
    rep.kernel_time_ms = sr->best_ms;
    auto sol = s.GetSolution(target, problem, sr->best_config);
    rep.workspace_bytes = sol.ok() ? static_cast<int64_t>(sol->workspace_bytes) : 0;
    rep.verified = true;  // only candidates whose output matched the reference can pass
  } else if (*device_wedged) {
    return Failure(job, absl::StrCat("launch timeout: ", sr->error), true);
  }
  return rep;
}

}  // namespace tuna::worker
