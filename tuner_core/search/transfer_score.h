// The search's score learned from other problems' runs (transfer.h): a gradient-boosted-trees
// regression (tuner_core/model, XGBoost) of each timed config's log2 slowdown against its
// problem's fastest, on features of the (problem, config) pair, evaluated over the configs of the
// problem being tuned. The features are the config's axes (log2 of each value) and the shape of
// the solver's solution for that problem on the target: blocks of its largest launch, blocks per
// compute unit, how full the last wave is, threads per block, shared memory, launches, work per
// block. The shape is what makes the score problem-aware: a tile that fills the GPU on one
// problem leaves it half idle on another, and the trees learn that from the runs.
//
// The Tuner gives the score to the model-guided search (StrategyInput::score) when no learned
// predictor serves the solver (tuner.h AddWarmStart): the params timed elsewhere that it ranks
// best come right after the default (kWarmParams), then its kTransferSeeds best-scored valid
// configs, and the score is a feature of the online cost model, which learns where this problem
// differs. On the H100 tables of bench/search the default search reaches 3 % of the exhaustive
// best after a median of 7.8 % of the space with it (31.0 % with the axes alone, 52.5 % cold;
// docs/BENCHMARKS.md, "Transfer").
//
// Threads: TransferScore may be called from any thread; the ScoreFn it returns is immutable and
// may be called from any thread (ctx.solver must outlive it: registry solvers do).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/transfer.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/solver.h"

namespace tuna::search {

// Best-scored configs a search tries right after the warm params (TuneOptions::transfer_seeds).
inline constexpr uint64_t kTransferSeeds = 16;
// Fewer timed configs than this that parse against the space: no score.
inline constexpr size_t kMinTransferPoints = 8;

// The problem being tuned, by the solver that plans it on the target.
struct ScoreContext {
  const solver::Solver* solver = nullptr;
  solver::Target target;
  Problem problem;
};

// NotFound when fewer than kMinTransferPoints timed configs of `runs` parse against `space`
// (runs whose driver line is not one problem are skipped); Internal when XGBoost fails. A config
// the solver gives no solution for has the shape features missing (the trees route it).
absl::StatusOr<ScoreFn> TransferScore(const ScoreContext& ctx, const solver::SearchSpace& space,
                                      const std::vector<TransferRun>& runs);

}  // namespace tuna::search
