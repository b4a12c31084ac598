// Search strategies: which perf configs to measure next (TVM meta_schedule's SearchStrategy).
//
//   Tuner ──Start(space, validity, budget, seed, prior)──▶ SearchStrategy
//         ◀──────────── Next(n): batch of configs ─────────
//         ── Compiler → Evaluator (measure/) ──▶ results
//         ───────────── Observe(results) ─────────────────▶
//
// A strategy never compiles, launches or times anything: it only proposes configs and learns
// from the outcomes it is told about, so the same strategy drives an in-process search, a
// dry-run compile sweep, a distributed job or a synthetic cost function in a test.
//
// Contract of every implementation:
//   * Next proposes only configs inside the space for which the validity predicate is true,
//     never the same config twice, and at most `budget` configs in total (0 = no limit).
//   * Prior configs (e.g. the solver's default, perf-db entries) are proposed first, in order,
//     when valid; they count against the budget.
//   * With a score (a learned predictor's estimate), its `scored_first` best-scored valid configs
//     come right after the prior, best first, deduplicated against it; they count against the
//     budget too. A score that fails changes nothing (the search runs as without one).
//   * An empty batch means the search is over; every later Next is empty too.
//   * Observe may be called with any subset of proposed configs, in any order, or not at all.
//   * Same (space, predicate, budget, seed, prior, observations) → same proposals, on every
//     platform (own PRNG use, no std::*_distribution).
// Threads: one strategy object is used by one thread at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/solver/perf_config.h"

namespace tuna::search {

using ValidityFn = std::function<bool(const solver::PerfConfig&)>;

// A learned estimate of configs' relative cost, lower = predicted faster (the perf-config
// predictor of tuner_core/heuristics scores log2 slowdown against the problem's best): one value
// per config, in order. An error means no estimate. Must be deterministic; called from the
// strategy's thread only.
using ScoreFn = std::function<absl::StatusOr<std::vector<float>>(const std::vector<solver::PerfConfig>&)>;

struct StrategyInput {
  solver::SearchSpace space;
  ValidityFn is_valid;  // null = every point of the space is valid
  uint64_t budget = 0;  // most configs proposed in total; 0 = no limit
  uint64_t seed = 1;
  std::vector<solver::PerfConfig> prior;  // proposed first when valid
  ScoreFn score;                // null = no predictor
  uint64_t scored_first = 0;    // best-scored configs proposed right after the prior
};

// What a strategy's score did at Start: how many configs it put after the prior, or why none.
struct ScoreUse {
  uint64_t seeded = 0;  // at most what the budget leaves after the prior
  uint64_t scored = 0;  // configs scored to choose them (all valid points, or a sample)
  std::string error;    // the score failed: the search runs unguided
};

// What the tuner learned about one proposed config. `ok` is false for configs that failed to
// compile, launch or verify; the time is then meaningless.
struct Observation {
  solver::PerfConfig config;
  bool ok = false;
  double time_ms = 0;
};

class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  virtual std::string_view Name() const = 0;
  // Resets all state. InvalidArgument for an empty space.
  virtual absl::Status Start(const StrategyInput& input) = 0;
  // Up to n (n >= 1) new configs; empty when done.
  virtual std::vector<solver::PerfConfig> Next(size_t n) = 0;
  virtual void Observe(const std::vector<Observation>& observations) = 0;
  // How many configs the whole search will propose if known (exhaustive and random know it
  // after Start: min(budget, valid points)); nullopt when not known in advance.
  virtual std::optional<uint64_t> PlannedTotal() const = 0;
  // Valid after Start; all zero without a score.
  virtual ScoreUse score_use() const { return {}; }
};

// An axis value as a cost-model feature (the model-guided search's, the transfer score's): log2
// of a positive value (tile-size effects are roughly multiplicative), -log2(1 - v) otherwise.
double AxisFeature(int64_t value);

enum class StrategyKind { kExhaustive, kRandom, kModel };

// "exhaustive" | "random" | "model"; InvalidArgument otherwise.
absl::StatusOr<StrategyKind> ParseStrategyKind(std::string_view name);
std::string_view StrategyKindName(StrategyKind kind);

std::unique_ptr<SearchStrategy> MakeStrategy(StrategyKind kind);

// The search a user gets without flags (`tuna tune`, `tuna worker`): model-guided, bounded by a
// budget and a patience (search::TuneOptions), so that the default finishes. Exhaustive and
// random search every valid config unless the user bounds them.
inline constexpr StrategyKind kDefaultStrategy = StrategyKind::kModel;
// Candidates per tunable solver when the user gives no --budget: 48 for the model-guided search
// (a tile space's useful corner is a few dozen points), 0 (= every valid config) otherwise.
uint64_t DefaultBudget(StrategyKind kind);
// --patience when not given: 16 for the model-guided search (a third of its budget), 0 (none)
// otherwise.
uint64_t DefaultPatience(StrategyKind kind);

// Exhaustive: valid points in odometer order (SearchSpace::At), after the prior.
std::unique_ptr<SearchStrategy> NewExhaustiveStrategy();
// Seeded random order without replacement, after the prior.
std::unique_ptr<SearchStrategy> NewRandomStrategy();

// Model-guided: a cost model fitted online on log(time) of the observed configs. After an
// initial random sample it proposes the unseen points with the lowest predicted time, with a
// share of random exploration. With a score (StrategyInput::score), its best configs lead (as in
// every strategy) and the score is one more feature of the online cost model, so the fit starts
// from the predictor's ranking and learns where the predictor is wrong for this problem (a
// misleading score costs the evaluations of the seeds, then the online fit discounts it).
// Cost models:
//   kGbt    gradient-boosted trees (XGBoost, tuner_core/model) on log2 of each axis value, as
//           TVM's MetaSchedule does: captures thresholds (a tile that stops fitting) and
//           interactions without a chosen functional form. Deterministic, one thread.
//   kRidge  ridge regression on log2 values, their squares and pairwise products: a smooth bowl
//           in log space; cheaper, better with very few observations.
enum class CostModelKind { kGbt, kRidge };
struct ModelStrategyOptions {
  CostModelKind cost_model = CostModelKind::kGbt;
  size_t initial_random = 0;       // random points before the first fit; 0 = auto (2d+2, >= 8)
  double exploration = 0.2;        // share of each batch drawn at random
  double ridge_lambda = 1e-2;      // kRidge: L2 penalty on standardised features
  int gbt_rounds = 60;             // kGbt: boosting rounds
  int gbt_depth = 4;               // kGbt: tree depth
  size_t max_pool = 20000;         // unseen points scored per batch (sampled when larger)
  bool score_feature = true;       // with a score: also a feature of the cost model
};
std::unique_ptr<SearchStrategy> NewModelStrategy(const ModelStrategyOptions& options = {});

// Observations the model-guided search waits for before its first fit, on a space of `axes`
// axes: options.initial_random, else 2 * axes + 2 and at least 8.
size_t ModelInitialRandom(size_t axes, const ModelStrategyOptions& options = {});
// How many proposals of a model-guided search come before any can follow its cost model, when
// batches of `batch` are asked for and every observation passes: the batches of its initial
// random sample, plus one when each batch is asked for before the previous one is observed
// (`ahead`: the Tuner's compile-ahead). At most `budget` (0 = no limit). These are the same
// points whatever else happens (the first sample is one seeded permutation); the later ones
// depend on the timings, so a compile step building ahead of the search builds only these.
uint64_t ModelBlindProposals(size_t axes, size_t batch, bool ahead, uint64_t budget,
                             const ModelStrategyOptions& options = {});

}  // namespace tuna::search
