// The hook by which a search strategy warm-starts from the perf-config predictor
// (search_predictor.h hands it to the tuner; ConfigScoreFn is search::ScoreFn).
//
// A ConfigScoreFn scores a batch of configs of one (problem, solver): lower is predicted faster
// (the predictor's log2 slowdown against the problem's best config). Two ways to use it:
//   * prior: TopPredicted(...) gives the k best-predicted valid configs, to pass as
//     StrategyInput::prior, so the first measured batch is the model's choice;
//   * seeds and cost model: as StrategyInput::score, the strategies propose its best configs
//     right after the prior, and the model-guided one takes it as a feature of its online fit.
// Threads: the function holds a shared_ptr to the immutable Models and may be called from any
// thread. Errors: MakeConfigScorer returns the Models' NotFound / OutOfRange when there is no
// predictor for the solver or the problem is out of range (the strategy then runs unguided).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/solver.h"
#include "tuner_core/solver/target.h"

namespace tuna::heuristics {

using ConfigScoreFn = std::function<absl::StatusOr<std::vector<float>>(const std::vector<solver::PerfConfig>&)>;

absl::StatusOr<ConfigScoreFn> MakeConfigScorer(std::shared_ptr<const Models> models, const Problem& problem,
                                               const solver::Target& target, const solver::Solver& solver);

// The k valid configs (solver.IsValid) of the first `max_points` points of the space with the
// best scores, best first.
absl::StatusOr<std::vector<solver::PerfConfig>> TopPredicted(const ConfigScoreFn& score, const Problem& problem,
                                                             const solver::Target& target, const solver::Solver& solver,
                                                             size_t k, uint64_t max_points = 50000);

}  // namespace tuna::heuristics
