// The search's score learned from transfer points (transfer.h): a gradient-boosted-trees
// regression (tuner_core/model, XGBoost) of the points' slowdown on log2 of each axis value,
// evaluated over the configs of the problem being tuned. The Tuner gives it to the model-guided
// search as its score (StrategyInput::score) when no learned predictor serves the solver: the
// kTransferSeeds best-scored valid configs are tried right after the default, and the score is a
// feature of the online cost model, which learns where this problem differs.
//
// Why a model and not the points themselves: a search times a few dozen of a space's points, so
// the configs timed on other problems are a thin, biased sample; the trees generalise from them
// to the configs nobody timed. On the H100 tables of bench/search the default search reaches 3 %
// of the exhaustive best after a median of 29.5 % of the space with it, 52.5 % without
// (docs/BENCHMARKS.md, "Transfer").
//
// Threads: TransferScore may be called from any thread; the ScoreFn it returns is immutable and
// may be called from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/transfer.h"
#include "tuner_core/solver/perf_config.h"

namespace tuna::search {

// Best-scored configs a search tries right after the default (TuneOptions::transfer_seeds).
inline constexpr uint64_t kTransferSeeds = 16;
// Fewer points than this that parse against the space: no score.
inline constexpr size_t kMinTransferPoints = 8;

// NotFound when fewer than kMinTransferPoints points parse against `space`; Internal when
// XGBoost fails.
absl::StatusOr<ScoreFn> TransferScore(const solver::SearchSpace& space, const std::vector<TransferPoint>& points);

}  // namespace tuna::search
