// The in-process tuner: one problem on one device (or, in a dry run, one target arch without a
// device). The driver loop of search/ (TVM's TaskScheduler::Tune, MIOpen's GenericSearch):
//
//   for each applicable solver (registry order, optionally filtered by name):
//     non-tunable: its single solution           → compile → evaluate
//     tunable:     strategy.Start(space, IsValid, budget, seed, prior = {DefaultConfig, warm
//                  params}, score = the predictor's, when one is given and knows the solver,
//                  else the one learned from the transfer points, when given)
//                  loop: Next(batch) → Compiler → Evaluator → Observe
//                        (on a GPU, batch k+1 is proposed and compiled on another thread while
//                        batch k is timed: the device never waits for a compiler it need not)
//                  stop: strategy done, budget, patience, or time limit (a batch compiled
//                        ahead is then not needed: its compile is cancelled and, with
//                        options.abandoned, left to end there instead of being waited for)
//                  re-time the best few, interleaved
//                  finish: where the solver offers it (Solver::Specialize), the winner built
//                  for this problem alone (sizes compiled in; on a GPU built while the search's
//                  later batches are timed), verified, timed against the winner, interleaved:
//                  the faster is the solver's best. Not for reused prior_params.
//   overall best = fastest passing solver
//
// The default config is always the first candidate of a tunable solver, so its time is known
// (`default_ms`) and the search can only improve on it.
//
// Compile ahead: batch k+1 is asked of the strategy before batch k is observed, so a
// model-guided strategy proposes from a model one batch old (speculation; the contract of
// SearchStrategy allows Observe after a later Next). On the CPU backend compiling and timing share
// the same cores, so there the batches run one after the other and times stay undisturbed.
// A device shared with other processes (a worker's executors_per_device) is held through
// options.evaluator.device_guard (measure/device_guard.h) only while a candidate is loaded,
// verified and timed, and during the re-timing: never while batches compile, so another
// process's search times while this one compiles.
//
// Errors: a candidate's failure is data (its Disposition); Tune itself fails only when the
// problem cannot be evaluated at all (reference, buffers). No applicable solver is not an
// error: the result then lists no solvers. Threads: a Tuner is used by one thread at a time; it
// compiles on its own pool. The registry, backend and device must outlive it.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/finishing.h"
#include "tuner_core/search/measure/abandoned_compiles.h"
#include "tuner_core/search/measure/compiler.h"
#include "tuner_core/search/measure/disposition.h"
#include "tuner_core/search/measure/evaluator.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/transfer.h"
#include "tuner_core/search/transfer_score.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::search {

struct TuneProgress {
  std::string solver;         // the solver being searched
  uint64_t done = 0;          // candidates finished for this problem (all solvers)
  uint64_t total = 0;         // planned candidates for this problem (grows when unknown)
  double best_ms = 0;         // best time so far for the problem (0 = none yet)
  std::string best_solver;
  double solver_best_ms = 0;  // best time so far of the solver being searched (0 = none yet)
  double default_ms = 0;      // that solver's default config's time (0 = not passed / not yet)
};

// The learned perf-config predictor as the search sees it (tuner_core/heuristics implements it;
// the search knows no model files): for a tunable solver on a problem, a score over that
// solver's configs (strategy.h), or why there is none: NotFound (no predictor for the solver or
// the target), OutOfRange (the problem is outside the predictor's training range). Called once
// per tunable solver when its search is planned, possibly on a planning thread (PlanAhead), so
// it must be safe to call from any thread; the score it returns is used by one thread at a time.
using PredictorFn = std::function<absl::StatusOr<ScoreFn>(const Problem&, const solver::Target&, const solver::Solver&)>;

// The budget of a generic solver's search (solver::Solver::IsGeneric) on a problem that a
// specialised tunable solver also serves, when the budget asked for is larger (0, every valid
// config, stays 0; TuneOptions::generic_budget 0: no cap). The specialised families won every config of both ResNet-50 files while the
// generic solvers' builds were 926 of 2,005 in a default `tune -f` (H200, 2026-11-25): their
// find-db entries only need a reasonable time, not the best one.
inline constexpr uint64_t kGenericBudget = 16;

// TuneOptions::whole_space of the default search. On the H200 (2026-12-03) the default search
// (budget 48, patience 16) stopped at 32 of the 49 points of TunaHopperTmaFwd on a 1x1 FP16
// layer, twice 3.9-4.0 % slower than the space's best; timing a 64-point space whole costs
// tens of ms of device time per job, and its builds serve every problem (sizes at run time).
inline constexpr uint64_t kWholeSpace = 64;

// Best-predicted configs a search tries right after the default and the warm params.
inline constexpr uint64_t kDefaultPredictedSeeds = 8;

// Configs per strategy batch when TuneOptions::batch is 0, for a Compiler of that many threads
// (Compiler::threads()): two per thread keeps every thread busy; at most 16, so that a
// model-guided search still refits several times within its budget.
size_t DefaultBatch(int compile_threads);

struct TuneOptions {
  StrategyKind strategy = StrategyKind::kExhaustive;
  uint64_t budget = 0;  // candidates per tunable solver; 0 = every valid config
  // A generic solver's budget where a specialised solver applies too (kGenericBudget).
  uint64_t generic_budget = kGenericBudget;
  uint64_t seed = 1;    // strategy seed (data seed is evaluator.seed)
  std::vector<std::string> solvers;  // only these names (empty = every applicable solver)
  // Params tried right after the default, in order (transfer from other configs' results): each
  // is parsed against a tunable solver's space; ones that do not parse or are invalid for the
  // problem are skipped. They count against the budget.
  std::vector<std::string> warm_params;
  // Params an earlier session verified for this very problem, solver and target (a perf job's
  // prior_params): when they parse and are valid for a tunable solver, its search times only
  // them (budget 1, no predictor): the result is reused, verified and timed again. Else ignored.
  std::string prior_params;
  // Warm start from a learned predictor (null = none): its `predicted_seeds` best valid configs
  // are tried after the warm params (deduplicated, counting against the budget), and the
  // model-guided strategy's cost model also takes its score as a feature.
  PredictorFn predictor;
  uint64_t predicted_seeds = kDefaultPredictedSeeds;
  // Transfer from other problems' searches of the solver (a perf job's, from the database:
  // transfer.h; AddWarmStart says what the search does with them). Parsed against a tunable
  // solver's space: meant for a search of one solver (a job's); params that do not parse are
  // skipped.
  std::vector<TransferRun> transfer;
  uint64_t transfer_seeds = kTransferSeeds;
    size_t batch = 0;                  // configs per strategy batch; 0 = compile threads * 2, 2..16
  CompilerOptions compiler;
  EvaluatorOptions evaluator;
  int retime_top = 3;          // re-time this many best candidates per solver (0 = none)
  // The finishing step (Solver::Specialize) after each search: false keeps every winner a build
  // that serves every problem (a smaller kernel db, no build per problem).
  bool specialize = true;
  int retime_repetitions = 10;
  // Adaptive stop of a tunable solver's search (MIOpen's MIOPEN_TUNING_PATIENCE): stop after this
  // many timed candidates in a row that do not beat the best by more than `min_gain` (a fraction).
  // 0 = no patience (the strategy or budget ends the search).
  uint64_t patience = 0;
  double min_gain = 0.01;
  // A tunable solver's space with at most this many valid points is searched whole: no budget,
  // no patience (LimitsOf). 0 = never; `tuna tune` / `tuna worker` default to kWholeSpace
  // unless --budget or --patience is given.
  uint64_t whole_space = 0;
  // Cross-solver stop: `rival_ms` gives the fastest verified time other searches reached on this
  // problem so far (0 = none known; null = never asked), read after every batch. A tunable search
  // that has processed at least `outclassed_after` candidates and whose best is still above
  // `outclassed_factor` times that time stops (stopped_by "outclassed"): it cannot become the
  // problem's pick. factor 0 = never.
  std::function<double()> rival_ms;
  double outclassed_factor = 0;
  uint64_t outclassed_after = 8;
  // Wall-clock limit of one solver's search in seconds (MIOPEN_TUNING_TIME_MS_MAX); the batch in
  // flight finishes. 0 = none.
  double time_limit_s = 0;
  // Overlap compiling batch k+1 with timing batch k: kAuto does on GPU targets only.
  enum class CompileAhead { kAuto, kOn, kOff } compile_ahead = CompileAhead::kAuto;
  // Where a batch compiled ahead goes when the search stops without it (abandoned_compiles.h):
  // the search returns at once instead of waiting for its builds. Null: it waits (the time is
  // TuneResult::discard_ms). Must outlive every Tune given it, and the registry and backend must
  // outlive it.
  AbandonedCompiles* abandoned = nullptr;
  bool dry_run = false;        // compile only (no device needed)
  std::function<void(const TuneProgress&)> progress;  // called after every candidate
};

// Configs a search tries from the transfer score (TuneOptions::transfer), given its budget
// (LimitsOf): options.transfer_seeds, but none for a generic search capped because a
// specialised solver serves the problem. That search only needs a reasonable time, and in its
// large space the best-scored configs are ones nobody built: the compile step cannot know them
// (it plans before most configs are timed), so the search would build them while the device
// waits (H200, 2026-12-01: 72 s of in-search compiles in TunaIgemm* jobs over a default tune of
// both ResNet-50 files, against 0.3 s without seeds).
uint64_t TransferSeeds(const TuneOptions& options, uint64_t budget);

// The warm start of one solver's search of ctx.problem from `options` (the Tuner's, and
// bench/search's replay of it; set in.space, in.is_valid, in.prior and in.budget first):
//   1. options.warm_params that parse against in.space are appended to in.prior;
//   2. then kWarmParams params timed on other problems (options.transfer), valid and not in the
//      prior yet: the ones the search's score ranks best for this problem. That score is in.score
//      when set (a predictor's); else the transfer score (transfer_score.h) when it can be
//      learned, which becomes in.score with TransferSeeds(options, in.budget) seeds; else none,
//      and they go by mean slowdown (AggregateTransfer).
// True when the transfer score was taken.
bool AddWarmStart(const TuneOptions& options, const ScoreContext& ctx, StrategyInput& in);

struct SolverTuneResult {
  uint64_t id = 0;
  std::string name;
  bool tunable = false;
  Disposition disposition = Disposition::kSkipped;  // kPassed when some candidate passed
  std::string error;                                // the first failure's text, if none passed
  solver::PerfConfig best_config;
  std::string best_params;  // best_config.ToString()
  double best_ms = 0;       // 0 unless kPassed
  std::optional<double> default_ms;  // the default config's time (when it passed)
  uint64_t planned = 0;     // candidates the strategy planned (exhaustive: valid points)
  uint64_t tried = 0;       // candidates proposed and processed
  uint64_t passed = 0;
  uint64_t failed = 0;      // tried - passed - skipped
  uint64_t dropped_early = 0;
  std::string stopped_by;   // why a tunable search ended early: "patience", "time limit"; else ""
  uint64_t predicted_seeded = 0;  // configs the predictor put first (TuneOptions::predictor)
  std::string predictor_note;     // with a predictor: why it was not used ("" when it was)
  bool reused = false;            // only TuneOptions::prior_params was timed (no search)
  uint64_t compiled = 0;        // candidates whose kernels built (the dry run's count)
  uint64_t compile_failed = 0;
  std::map<Disposition, uint64_t> by_disposition;
  // Order in which candidates were tried and their times (ms; 0 for failures): for benchmarks.
  std::vector<std::pair<solver::PerfConfig, Measurement>> history;
  // The re-timing of the best few (TuneOptions::retime_top), each candidate's time (ms; 0 when
  // it did not pass again): for benchmarks.
  std::vector<std::pair<solver::PerfConfig, double>> retimed;
  // The finishing step (Solver::Specialize, finishing.h), when the solver offered one for the
  // winner and TuneOptions::specialize is on.
  using Specialized = search::Specialized;
  std::optional<Specialized> specialized;
};

struct TuneResult {
  Problem problem;
  std::string arch;
  bool dry_run = false;
  std::string reference;  // where the reference came from ("cpu", solver name); empty in a dry run
  std::vector<SolverTuneResult> solvers;
  int best = -1;  // index into solvers of the fastest passing one; -1 when none passed
  double seconds = 0;
  double plan_ms = 0;     // of which planning the searches (strategies over the spaces)
  double compile_ms = 0;  // of which waiting for candidates' code (builds or cache hits; a build
                          // overlapped with timing counts only for the time the search waited)
  double strategy_ms = 0;  // of which the strategies' Next and Observe (cost-model fits, scoring)
  double evaluate_ms = 0;  // of which verifying and timing candidates (Evaluate: device work, the
                           // device guard's waits, the host's comparison)
  double retime_ms = 0;    // of which re-timing the best few
  double discard_ms = 0;   // of which waiting for batches compiled ahead that stopped searches did
                           // not need (for older ones to make room with options.abandoned)
  uint64_t discarded = 0;  // candidates of such batches (built for nothing, or cancelled)
  std::string error;  // set by TuneProblems when the problem could not be tuned at all
};

// How far `s`'s search on `problem` goes (s tunable; the Tuner's plan, and bench/search's replay
// of the default search, ask the same):
//   budget    options.budget, or options.generic_budget where `s` is generic and a specialised
//             tunable solver of `registry` serves the problem too (any solver, not only
//             options.solvers: a worker's job names one solver); 0 when `whole`.
//   whole     options.whole_space > 0, the budget is options.budget (not a generic solver's cap)
//             and the space has at most options.whole_space valid points: every valid point is
//             timed, in the strategy's order (budget 0, patience 0).
//   patience  options.patience, 0 when whole.
// options.prior_params aside (Tuner: budget 1).
struct SearchLimits {
  uint64_t budget = 0;
  uint64_t patience = 0;
  bool whole = false;
};
SearchLimits LimitsOf(const TuneOptions& options, const solver::SolverRegistry& registry, const solver::Target& target,
                      const Problem& problem, const solver::Solver& s);

class Tuner {
 public:
  // device may be null only when options.dry_run is true.
  Tuner(const solver::SolverRegistry& registry, const backend::Backend& backend,
        backend::Device* device, solver::Target target, TuneOptions options);

  // `evaluator`, when given, is used instead of a new one: it must have been created for this
  // problem on this tuner's device (a worker keeps one across the jobs of a config, so the
  // inputs and the reference are prepared once). InvalidArgument when it is for another problem.
  absl::StatusOr<TuneResult> Tune(const Problem& problem, Evaluator* evaluator = nullptr);

  // Plans the searches of `problem` now (the strategies over the spaces: for a random search,
  // the whole valid space), for the next Tune of the same problem, which then starts searching
  // at once (its plan_ms is 0). A worker plans the next job while the device runs this one.
  // Needs no device; may run on another thread than Tune, but not at the same time.
  void PlanAhead(const Problem& problem);

  const solver::Target& target() const { return target_; }

 private:
  struct SolverPlan {
    solver::RegisteredSolver registered;
    bool tunable = false;
    solver::PerfConfig default_config;
    std::unique_ptr<SearchStrategy> strategy;  // started; null for non-tunable solvers
    uint64_t planned = 0;
    uint64_t patience = 0;  // SearchLimits::patience
    std::string error;  // the strategy could not start
    uint64_t predicted_seeded = 0;
    std::string predictor_note;
    bool reused = false;  // TuneOptions::prior_params alone
    solver::PerfConfig prior;  // with reused: the params, as they are (the strategy would propose
                               // their searched point, without what the finishing step set)
  };
  std::vector<solver::RegisteredSolver> SolversFor(const Problem& problem) const;
  std::vector<SolverPlan> PlanAll(const std::vector<solver::RegisteredSolver>& solvers,
                                  const Problem& problem) const;
  SolverPlan Plan(const solver::RegisteredSolver& r, const Problem& problem) const;
  SolverTuneResult TuneSolver(SolverPlan& plan, const Problem& problem, Evaluator* evaluator,
                              TuneProgress& progress, TuneResult& times);

  const solver::SolverRegistry& registry_;
  const backend::Backend& backend_;
  backend::Device* device_;
  solver::Target target_;
  TuneOptions options_;
  // Shared with a batch compile that may outlive this Tuner (options_.abandoned).
  std::shared_ptr<Compiler> compiler_;
  struct Ahead {
    Problem problem;
    std::vector<solver::RegisteredSolver> solvers;
    std::vector<SolverPlan> plans;
  };
  std::optional<Ahead> ahead_;  // PlanAhead's work, taken by the next Tune of that problem
};

}  // namespace tuna::search
