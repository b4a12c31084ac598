#include "tuner_core/runtime/convolution.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/heuristics/config_scorer.h"
#include "tuner_core/problem/transpose.h"
#include "tuner_core/runtime/command_log.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/solution.h"

namespace tuna::runtime {
namespace {

// MIOpen's EvaluateInvokers limits (§5.4).
constexpr int kRunsMax = 8;
constexpr int kRunsDiscard = 3;
constexpr double kTimeBudgetMs = 5000;

struct PerfChoice {
  solver::PerfConfig config;
  std::string params;
  ChoiceSource source = ChoiceSource::kDefault;
};

std::string ProblemKey(const Problem& p) { return p.Canonical(); }

bool IsApplicable(Handle& h, const Problem& p, const solver::RegisteredSolver& r) {
  const auto dirs = r.solver->Directions();
  if (std::find(dirs.begin(), dirs.end(), p.direction) == dirs.end()) return false;
  return r.solver->IsApplicable(h.target(), p).ok();
}

ChoiceSource FromDb(DbSource s) { return s == DbSource::kUser ? ChoiceSource::kUserDb : ChoiceSource::kSystemDb; }

PerfChoice DefaultChoice(Handle& h, const Problem& p, const solver::Solver& s) {
  PerfChoice c;
  c.config = s.DefaultConfig(h.target(), p);
  c.params = c.config.ToString();
  c.source = ChoiceSource::kDefault;
  return c;
}

std::optional<PerfChoice> PerfFromDb(Handle& h, const Problem& p, const solver::Solver& s) {
  PerfLookup l = h.db().LookupPerf(p, s.Name());
  if (l.source == DbSource::kNone) return std::nullopt;
  absl::StatusOr<solver::PerfConfig> cfg = s.Space(h.target(), p).Parse(l.params);
  if (cfg.ok()) {
    if (absl::Status v = s.IsValid(h.target(), p, *cfg); v.ok()) {
      return PerfChoice{*cfg, l.params, FromDb(l.source)};
    } else {
      spdlog::warn("perf db ({}) params '{}' of {} are not valid here: {}", DbSourceName(l.source), l.params,
                   s.Name(), std::string(v.message()));
    }
  } else {
    spdlog::warn("perf db ({}) params '{}' of {}: {}", DbSourceName(l.source), l.params, s.Name(),
                 std::string(cfg.status().message()));
  }
  return std::nullopt;
}

// The predictor's best valid config (models.h), kept per (problem, solver) in the handle;
// nullopt without a predictor for the solver or when the problem is out of its range (logged).
std::optional<PerfChoice> PredictedPerf(Handle& h, const Problem& p, const solver::Solver& s) {
  const std::shared_ptr<const heuristics::Models>& models = h.heuristics();
  const std::string name(s.Name());
  if (models == nullptr || !models->HasPredictor(name)) return std::nullopt;
  const std::string key = absl::StrCat(ProblemKey(p), "|", name);
  if (auto it = h.predicted_params().find(key); it != h.predicted_params().end()) {
    return PerfChoice{it->second, it->second.ToString(), ChoiceSource::kHeuristics};
  }
  absl::StatusOr<heuristics::ConfigScoreFn> score = heuristics::MakeConfigScorer(models, p, h.target(), s);
  absl::StatusOr<std::vector<solver::PerfConfig>> top =
      score.ok() ? heuristics::TopPredicted(*score, p, h.target(), s, 1) : score.status();
  if (!top.ok() || top->empty()) {
    spdlog::info("{}: heuristics predictor not used ({}); default params", name,
                 top.ok() ? "no valid config" : std::string(top.status().message()));
    return std::nullopt;
  }
  h.predicted_params()[key] = top->front();
  return PerfChoice{top->front(), top->front().ToString(), ChoiceSource::kHeuristics};
}

absl::StatusOr<PerfChoice> SearchPerf(Handle& h, const Problem& p, const solver::RegisteredSolver& r) {
  search::TuneOptions opts;
  opts.strategy = search::StrategyKind::kExhaustive;
  opts.budget = h.config().search_budget;
  opts.solvers = {std::string(r.solver->Name())};
  opts.evaluator.repetitions = 5;
  opts.retime_top = 0;
  search::Tuner tuner(h.registry(), h.backend(), &h.device(), h.target(), opts);
  absl::StatusOr<search::TuneResult> res = tuner.Tune(p);
  if (!res.ok()) return res.status();
  for (const search::SolverTuneResult& sr : res->solvers) {
    if (sr.id != r.id) continue;
    if (sr.disposition != search::Disposition::kPassed) {
      return absl::InternalError(absl::StrCat("search of ", std::string(r.solver->Name()), " found no passing config: ", sr.error));
    }
    spdlog::info("search {}: best {} ({} ms) of {} tried", r.solver->Name(), sr.best_params, sr.best_ms, sr.tried);
    if (absl::Status st = h.db().UpdateUserPerf(p, r.solver->Name(), sr.best_params); !st.ok()) {
      spdlog::warn("user perf db update: {}", st.ToString());
    }
    return PerfChoice{sr.best_config, sr.best_params, ChoiceSource::kSearch};
  }
  return absl::InternalError(absl::StrCat("search did not run ", std::string(r.solver->Name())));
}

// MIOpen's FindSolutionImpl for one solver (§5.1).
PerfChoice ResolvePerf(Handle& h, const Problem& p, const solver::RegisteredSolver& r, bool exhaustive,
                       bool enforce_enabled, FindTrace* trace) {
  const solver::Solver& s = *r.solver;
  if (!s.IsTunable()) return DefaultChoice(h, p, s);
  const FindEnforce enforce = enforce_enabled ? h.config().find_enforce : FindEnforce::kNone;
  if (enforce == FindEnforce::kDbClean) {
    if (absl::Status st = h.db().RemoveUserPerf(p, s.Name()); !st.ok()) spdlog::warn("DB_CLEAN: {}", st.ToString());
    if (trace != nullptr) trace->cleaned.push_back(std::string(s.Name()));
    return DefaultChoice(h, p, s);
  }
  const bool do_search = exhaustive || enforce == FindEnforce::kSearch || enforce == FindEnforce::kSearchDbUpdate;
  const bool skip_load = enforce == FindEnforce::kSearchDbUpdate || (enforce == FindEnforce::kDbUpdate && exhaustive);
  if (!skip_load) {
    if (std::optional<PerfChoice> c = PerfFromDb(h, p, s); c.has_value()) return *c;
  } else {
    spdlog::debug("perf db: load skipped ({})", FindEnforceName(enforce));
  }
  if (do_search) {
    if (trace != nullptr) trace->searched.push_back(std::string(s.Name()));
    absl::StatusOr<PerfChoice> c = SearchPerf(h, p, r);
    if (c.ok()) return *c;
    spdlog::warn("{}; using the default config", c.status().ToString());
  }
  if (std::optional<PerfChoice> c = PredictedPerf(h, p, s); c.has_value()) return *c;
  return DefaultChoice(h, p, s);
}

absl::StatusOr<PreparedInvoker*> Prepare(Handle& h, const Problem& p, const solver::RegisteredSolver& r,
                                         const PerfChoice& choice) {
  const std::string key = absl::StrCat(ProblemKey(p), "|", r.id, "|", choice.params);
  if (PreparedInvoker* inv = h.FindInvoker(key); inv != nullptr) return inv;
  absl::StatusOr<solver::Solution> sol = r.solver->GetSolution(h.target(), p, choice.config);
  if (!sol.ok()) return sol.status();
  absl::StatusOr<std::vector<backend::CodeObject>> code = h.kernels().Get(*sol);
  if (!code.ok()) return code.status();
  absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(h.device(), *sol, *code);
  if (!inv.ok()) return inv.status();
  PreparedInvoker prepared;
  prepared.solver_id = r.id;
  prepared.params = choice.params;
  prepared.params_source = std::string(ChoiceSourceName(choice.source));
  prepared.solution = *std::move(sol);
  prepared.invoker = *std::move(inv);
  return h.StoreInvoker(key, std::move(prepared));
}

ConvSolution Describe(const Problem& p, const solver::RegisteredSolver& r, float time_ms, uint64_t workspace,
                      ChoiceSource source) {
  ConvSolution s;
  s.time_ms = time_ms;
  s.workspace_bytes = workspace;
  s.solver_id = r.id;
  s.solver = std::string(r.solver->Name());
  s.algorithm = std::string(solver::FindDbAlgorithmName(r.solver->Algo(), p.direction));
  s.source = source;
  return s;
}

// MIOpen's SolutionTimeComparator: non-negative times ascending, negative ("estimates") last.
void SortByTime(std::vector<ConvSolution>& v) {
  std::stable_sort(v.begin(), v.end(), [](const ConvSolution& a, const ConvSolution& b) {
    const bool na = a.time_ms < 0, nb = b.time_ms < 0;
    if (na != nb) return nb;
    return na ? a.time_ms > b.time_ms : a.time_ms < b.time_ms;
  });
}

std::vector<ConvSolution> DbSolutions(Handle& h, const Problem& p) {
  std::vector<ConvSolution> out;
  FindRecordLookup rec = h.db().LookupFind(p);
  for (const db::FindDbEntry& e : rec.entries) {
    const solver::RegisteredSolver* r = h.registry().ByName(e.solver);
    if (r == nullptr) {
      spdlog::debug("find db: unknown solver {} skipped", e.solver);
      continue;
    }
    if (!IsApplicable(h, p, *r)) continue;
    out.push_back(Describe(p, *r, e.time_ms, e.workspace, FromDb(rec.source)));
  }
  SortByTime(out);
  return out;
}

uint64_t PlannedWorkspace(Handle& h, const Problem& p, const solver::RegisteredSolver& r) {
  PerfChoice c = ResolvePerf(h, p, r, false, false, nullptr);
  absl::StatusOr<solver::Solution> sol = r.solver->GetSolution(h.target(), p, c.config);
  return sol.ok() ? sol->workspace_bytes : 0;
}

// The analytic ranking reordered by the heuristics picker; an error says why it was not used.
absl::StatusOr<std::vector<RankedSolver>> PickerOrder(Handle& h, const Problem& p,
                                                      const std::vector<RankedSolver>& analytic) {
  const std::shared_ptr<const heuristics::Models>& models = h.heuristics();
  if (models == nullptr) return absl::NotFoundError(absl::StrCat("no heuristics model for ", h.db().files().basename));
  std::vector<solver::RegisteredSolver> order;
  for (const RankedSolver& rs : analytic) order.push_back(rs.solver);
  absl::StatusOr<std::vector<solver::RegisteredSolver>> picked = models->RankSolvers(p, h.target(), order);
  if (!picked.ok()) {
    return absl::Status(picked.status().code(), absl::StrCat("heuristics model not used: ", picked.status().message()));
  }
  std::vector<RankedSolver> out;
  for (const solver::RegisteredSolver& r : *picked) {
    out.push_back(*std::find_if(analytic.begin(), analytic.end(), [&](const RankedSolver& a) { return a.solver.id == r.id; }));
  }
  return out;
}

std::vector<ConvSolution> FallbackSolutions(Handle& h, const Problem& p) {
  std::vector<ConvSolution> out;
  if (h.config().disable_fallback) return out;
  std::vector<solver::RegisteredSolver> applicable;
  for (const solver::RegisteredSolver& r : h.registry().Applicable(h.target(), p)) {
    if (IsApplicable(h, p, r)) applicable.push_back(r);
  }
  auto tuned = [&](const solver::RegisteredSolver& r) {
    return r.solver->IsTunable() && PerfFromDb(h, p, *r.solver).has_value();
  };
  std::vector<RankedSolver> ranked = RankFallback(h.model(), p, applicable, tuned);
  ChoiceSource source = ChoiceSource::kFallback;
  std::string note;
  if (absl::StatusOr<std::vector<RankedSolver>> picked = PickerOrder(h, p, ranked); picked.ok()) {
    ranked = *std::move(picked);
    source = ChoiceSource::kHeuristics;
  } else {
    note = std::string(picked.status().message());
    spdlog::info("immediate-mode fallback for {}: analytic ({})", ProblemKey(p), note);
  }
  for (const RankedSolver& rs : ranked) {
    out.push_back(Describe(p, rs.solver, static_cast<float>(rs.estimate_ms), PlannedWorkspace(h, p, rs.solver), source));
    out.back().note = note;
  }
  return out;
}

// The benchmark buffers of one problem: x, w, y with seeded random data.
struct BenchBuffers {
  backend::DeviceBuffer x, w, y, workspace;
};

absl::StatusOr<BenchBuffers> AllocBench(Handle& h, const Problem& p, uint64_t seed) {
  BenchBuffers b;
  const reference::ElementType in = reference::StorageType(p.data_type);
  const reference::ElementType out = reference::OutputType(p, p.direction);
  const int written = static_cast<int>(solver::WrittenRole(p.direction));
  const int64_t counts[3] = {p.XDesc().ElementCount(), p.WDesc().ElementCount(), p.YDesc().ElementCount()};
  backend::DeviceBuffer* bufs[3] = {&b.x, &b.w, &b.y};
  for (int i = 0; i < 3; ++i) {
    const reference::ElementType t = i == written ? out : in;
    std::vector<std::byte> host = reference::RandomBuffer(t, counts[i], seed * 3 + i);
    absl::StatusOr<backend::DeviceBuffer> d = h.device().Alloc(host.size());
    if (!d.ok()) return d.status();
    *bufs[i] = *std::move(d);
    if (absl::Status st = h.device().CopyToDevice(*bufs[i], host.data(), host.size()); !st.ok()) return st;
  }
  return b;
}

absl::StatusOr<double> Benchmark(Handle& h, PreparedInvoker& inv, BenchBuffers& b) {
  const uint64_t ws = inv.solution.workspace_bytes;
  if (ws > b.workspace.bytes()) {
    absl::StatusOr<backend::DeviceBuffer> d = h.device().Alloc(ws);
    if (!d.ok()) return d.status();
    b.workspace = *std::move(d);
  }
  const solver::ConvBuffers buffers{&b.x, &b.w, &b.y, b.workspace.valid() ? &b.workspace : nullptr};
  std::vector<double> runs;
  double total = 0;
  while (static_cast<int>(runs.size()) < kRunsMax && total < kTimeBudgetMs) {
    absl::StatusOr<std::vector<double>> t =
        h.device().TimeLaunches([&] { return inv.invoker->Run(buffers); }, 1);
    if (!t.ok()) return t.status();
    runs.push_back(t->front());
    total += t->front();
  }
  if (absl::Status st = h.device().Synchronize(); !st.ok()) return st;
  if (static_cast<int>(runs.size()) <= kRunsDiscard) return *std::min_element(runs.begin(), runs.end());
  double sum = 0;
  for (size_t i = kRunsDiscard; i < runs.size(); ++i) sum += runs[i];
  return sum / static_cast<double>(runs.size() - kRunsDiscard);
}

absl::StatusOr<std::vector<ConvSolution>> FindCore(Handle& h, const Problem& p, const FindOptions& opts,
                                                   bool dynamic_only, FindTrace& trace) {
  std::vector<solver::RegisteredSolver> solvers;
  for (const solver::RegisteredSolver& r : h.registry().Applicable(h.target(), p)) {
    if (IsApplicable(h, p, r)) solvers.push_back(r);
  }
  if (dynamic_only) {
    std::vector<solver::RegisteredSolver> dyn;
    for (const auto& r : solvers) {
      if (r.solver->IsDynamic()) dyn.push_back(r);
    }
    if (!dyn.empty()) solvers = std::move(dyn);
  }
  if (solvers.empty()) return absl::NotFoundError(absl::StrCat("no applicable solver for ", ProblemKey(p)));
  absl::StatusOr<BenchBuffers> bufs = AllocBench(h, p, opts.seed);
  if (!bufs.ok()) return bufs.status();
  trace.benchmarked = true;
  std::vector<ConvSolution> out;
  std::vector<db::FindDbEntry> record;
  for (const solver::RegisteredSolver& r : solvers) {
    const PerfChoice choice = ResolvePerf(h, p, r, opts.exhaustive_search, true, &trace);
    absl::StatusOr<PreparedInvoker*> inv = Prepare(h, p, r, choice);
    if (!inv.ok()) {
      spdlog::warn("find: {} skipped: {}", r.solver->Name(), inv.status().ToString());
      continue;
    }
    absl::StatusOr<double> ms = Benchmark(h, **inv, *bufs);
    if (!ms.ok()) {
      spdlog::warn("find: {} failed to run: {}", r.solver->Name(), ms.status().ToString());
      continue;
    }
    ConvSolution s = Describe(p, r, static_cast<float>(*ms), (*inv)->solution.workspace_bytes, ChoiceSource::kBenchmark);
    s.params = choice.params;
    s.params_source = choice.source;
    record.push_back({s.solver, s.time_ms, s.workspace_bytes, s.algorithm});
    out.push_back(std::move(s));
  }
  if (out.empty()) return absl::InternalError(absl::StrCat("find: no solver ran for ", ProblemKey(p)));
  SortByTime(out);
  if (absl::Status st = h.db().StoreUserFind(p, std::move(record)); st.ok()) {
    trace.stored_find_db = true;
  } else {
    spdlog::warn("user find db not written: {}", st.ToString());
  }
  return out;
}

absl::StatusOr<ConvSolution> CompileChosen(Handle& h, const Problem& p, ConvSolution s) {
  const solver::RegisteredSolver* r = h.registry().ById(s.solver_id);
  const PerfChoice c = ResolvePerf(h, p, *r, false, false, nullptr);
  absl::StatusOr<PreparedInvoker*> inv = Prepare(h, p, *r, c);
  if (!inv.ok()) return inv.status();
  s.params = c.params;
  s.params_source = c.source;
  s.workspace_bytes = (*inv)->solution.workspace_bytes;
  return s;
}

// A transposed problem's buffers as its convolution's (problem/transpose.h): x and y swap roles.
solver::ConvBuffers SolvedBuffers(const Problem& given, solver::ConvBuffers b) {
  if (given.mode == ConvMode::kTrans) std::swap(b.x, b.y);
  return b;
}

// `p` as the caller gave it (logged so); PrepareSolution solves its convolution.
absl::Status RunLogged(Handle& h, const Problem& p, uint64_t solver_id, const solver::ConvBuffers& buffers,
                       bool immediate) {
  absl::StatusOr<const PreparedInvoker*> inv = PrepareSolution(h, p, solver_id);
  if (!inv.ok()) return inv.status();
  if (h.config().logging_cmd) h.LogCommand(LogCmdLine(h.backend().Kind(), "LogCmdConvolution", p, immediate));
  return const_cast<PreparedInvoker*>(*inv)->invoker->Run(SolvedBuffers(p, buffers));
}

}  // namespace

std::string_view ChoiceSourceName(ChoiceSource s) {
  switch (s) {
    case ChoiceSource::kUserDb: return "user db";
    case ChoiceSource::kSystemDb: return "system db";
    case ChoiceSource::kFallback: return "fallback";
    case ChoiceSource::kBenchmark: return "benchmark";
    case ChoiceSource::kSearch: return "search";
    case ChoiceSource::kDefault: return "default";
    case ChoiceSource::kHeuristics: return "heuristics model";
  }
  return "?";
}

absl::StatusOr<FindResult> FindConvolution(Handle& h, const Problem& given, const FindOptions& opts) {
  if (h.config().logging_cmd) h.LogCommand(LogCmdLine(h.backend().Kind(), "LogCmdFindConvolution", given, false));
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return conv.status();
  const Problem& p = *conv;
  FindResult result;
  FindTrace& trace = result.trace;
  const FindMode mode = EffectiveFindMode(h.config().find_mode, h.config().find_enforce);
  trace.effective_mode = mode;
  if (mode != h.config().find_mode) {
    spdlog::debug("MIOPEN_FIND_MODE is set to NORMAL due to MIOPEN_FIND_ENFORCE");
  }
  absl::StatusOr<std::vector<ConvSolution>> found;
  if (mode != FindMode::kNormal) {
    std::vector<ConvSolution> db = DbSolutions(h, p);
    if (!db.empty()) {
      trace.find_db_hit = true;
      for (ConvSolution& s : db) {  // the first that compiles
        absl::StatusOr<ConvSolution> c = CompileChosen(h, p, s);
        if (c.ok()) {
          result.solutions.push_back(*std::move(c));
          return result;
        }
        spdlog::warn("find db solution {} failed: {}", s.solver, c.status().ToString());
      }
    }
    if (mode == FindMode::kFast) {
      for (ConvSolution& s : FallbackSolutions(h, p)) {
        absl::StatusOr<ConvSolution> c = CompileChosen(h, p, s);
        if (c.ok()) {
          result.solutions.push_back(*std::move(c));
          return result;
        }
        spdlog::warn("fallback solution {} failed: {}", s.solver, c.status().ToString());
      }
    }
    found = FindCore(h, p, opts, mode == FindMode::kDynamicHybrid, trace);
  } else {
    FindRecordLookup user = h.db().LookupUserFind(p);
    bool reuse = user.source == DbSource::kUser;
    const std::string key = ProblemKey(p);
    for (const db::FindDbEntry& e : user.entries) {
      const solver::RegisteredSolver* r = h.registry().ByName(e.solver);
      reuse = reuse && r != nullptr && h.HasInvokerFor(key, r->id);
    }
    if (reuse) {
      trace.find_db_hit = true;
      std::vector<ConvSolution> v;
      for (const db::FindDbEntry& e : user.entries) {
        v.push_back(Describe(p, *h.registry().ByName(e.solver), e.time_ms, e.workspace, ChoiceSource::kUserDb));
      }
      SortByTime(v);
      found = std::move(v);
    } else {
      if (user.source == DbSource::kUser) spdlog::debug("find-db regenerating");
      found = FindCore(h, p, opts, false, trace);
    }
  }
  if (!found.ok()) return found.status();
  result.solutions = *std::move(found);
  if (opts.request_count > 0 && result.solutions.size() > opts.request_count) {
    result.solutions.resize(opts.request_count);
  }
  return result;
}

absl::StatusOr<std::vector<ConvSolution>> GetSolution(Handle& h, const Problem& given, size_t max_count) {
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return conv.status();
  const Problem& p = *conv;
  std::vector<ConvSolution> v = DbSolutions(h, p);
  if (v.empty()) v = FallbackSolutions(h, p);
  if (v.empty()) {
    return absl::NotFoundError(absl::StrCat("requested convolution is not supported or immediate mode fallback "
                                            "unsuccessful: ", ProblemKey(p)));
  }
  if (max_count > 0 && v.size() > max_count) v.resize(max_count);
  return v;
}

absl::StatusOr<size_t> GetSolutionCount(Handle& h, const Problem& p) {
  absl::StatusOr<std::vector<ConvSolution>> v = GetSolution(h, p, 0);
  if (!v.ok()) return v.status();
  return v->size();
}

absl::StatusOr<const PreparedInvoker*> PrepareSolution(Handle& h, const Problem& given, uint64_t solver_id) {
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return conv.status();
  const Problem& p = *conv;
  const solver::RegisteredSolver* r = h.registry().ById(solver_id);
  if (r == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown solver id ", solver_id));
  if (!IsApplicable(h, p, *r)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(r->solver->Name()), " is not applicable to ", ProblemKey(p)));
  }
  absl::StatusOr<PreparedInvoker*> inv = Prepare(h, p, *r, ResolvePerf(h, p, *r, false, false, nullptr));
  if (!inv.ok()) return inv.status();
  return *inv;
}

absl::StatusOr<uint64_t> GetSolutionWorkspaceSize(Handle& h, const Problem& given, uint64_t solver_id) {
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return conv.status();
  const Problem& p = *conv;
  const solver::RegisteredSolver* r = h.registry().ById(solver_id);
  if (r == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown solver id ", solver_id));
  if (!IsApplicable(h, p, *r)) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(r->solver->Name()), " is not applicable to ", ProblemKey(p)));
  }
  return PlannedWorkspace(h, p, *r);
}

absl::Status CompileSolution(Handle& h, const Problem& p, uint64_t solver_id) {
  return PrepareSolution(h, p, solver_id).status();
}

absl::Status Immediate(Handle& h, const Problem& given, uint64_t solver_id, const solver::ConvBuffers& buffers) {
  return RunLogged(h, given, solver_id, buffers, true);
}

absl::Status RunConvolution(Handle& h, const Problem& given, uint64_t solver_id, const solver::ConvBuffers& buffers) {
  return RunLogged(h, given, solver_id, buffers, false);
}

absl::StatusOr<std::vector<double>> TimeConvolution(Handle& h, const Problem& p, uint64_t solver_id,
                                                    const solver::ConvBuffers& buffers, int iterations) {
  absl::StatusOr<const PreparedInvoker*> inv = PrepareSolution(h, p, solver_id);
  if (!inv.ok()) return inv.status();
  if (h.config().logging_cmd) h.LogCommand(LogCmdLine(h.backend().Kind(), "LogCmdConvolution", p, false));
  solver::Invoker* invoker = (*inv)->invoker.get();
  const solver::ConvBuffers solved = SolvedBuffers(p, buffers);
  return h.device().TimeLaunches([&] { return invoker->Run(solved); }, std::max(1, iterations));
}

}  // namespace tuna::runtime
