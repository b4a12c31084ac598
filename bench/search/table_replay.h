// Search strategies replayed against measured tables (tables.h) with search::ReplaySearch: every
// proposal answered with the time measured for that config, points outside the table invalid,
// the solver's space taken from the registry for the table's arch. No device.
//   ReplayDefault       what `tuna tune` runs with no flags (replay.h DefaultSearchReplay): budget
//                       48 (16 for a generic solver where a specialised one serves the problem:
//                       SearchBudget), patience 16, batches of DefaultBatch(threads), compile
//                       ahead as on a GPU; it runs to its own end, so its pick is known too.
//                       Cold: no warm params from other configs, no predictor (a `tune -f` warm-
//                       starts from the results of configs already done).
//   ReplayUntilWithin   a strategy with no budget or patience, until one point is within.
// "Reached" = a passing point within `within` (0.03) of the table's best.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "bench/search/tables.h"
#include "tuner_core/search/replay.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {

struct DefaultRun {
  ReplayResult result;
  uint64_t budget = 0;  // the default's budget for this table's solver and problem
};

// InvalidArgument when the table's solver, driver line or arch is unknown.
absl::StatusOr<DefaultRun> ReplayDefault(const Table& t, uint64_t seed, int compile_threads, double within,
                                         const solver::SolverRegistry& registry);
absl::StatusOr<ReplayResult> ReplayUntilWithin(const Table& t, SearchStrategy& strategy, uint64_t seed, size_t batch,
                                               double within, const solver::SolverRegistry& registry);

// Fraction of the table timed until reached; 1 (the whole space) when never reached.
double FractionUntilReached(const Table& t, const ReplayResult& r);

}  // namespace tuna::search
