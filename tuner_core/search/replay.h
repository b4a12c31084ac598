// A tunable solver's search replayed against a table of measured times instead of a device
// (bench/search): the same driver loop as Tuner::TuneSolver without compiles or timings.
// Proposals come from the strategy in batches of `batch`; with `ahead` (the Tuner on a GPU) batch
// k+1 is asked for before batch k is observed unless the StopRule says batch k may end the search
// (stop_rule.h: patience, TuneOptions::min_gain), exactly as the Tuner speculates; a batch asked
// for ahead and not needed is not counted. Every proposal is answered from the table; a proposal
// outside it counts as a failure. Not replayed: the time limit, the outclassed stop (no other
// solver's time), the re-timing of the best few, warm params and predictors unless given in
// `input`. Threads: none of its own; the strategy is used by the calling thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/tuner.h"

namespace tuna::search {

struct ReplayPoint {
  bool ok = false;  // compiled, ran and verified
  double ms = 0;
};

// The measured outcome of a config; nullopt when the table does not hold it.
using ReplayLookup = std::function<std::optional<ReplayPoint>(const solver::PerfConfig&)>;

struct ReplayOptions {
  TuneOptions tune;  // patience, min_gain (the Tuner's StopRule); strategy and budget come in input
  size_t batch = 16;
  bool ahead = true;         // speculate as the Tuner does on GPU targets
  double target_ms = 0;      // "reached": a passing time <= this (0: never)
  bool stop_at_target = false;  // end the replay once reached (unbounded strategies)
};

struct ReplayResult {
  uint64_t tried = 0;       // candidates the search processed
  uint64_t reached_at = 0;  // 1-based position of the first one within target_ms; 0 = never
  double best_ms = 0;       // the search's pick (0 = nothing passed)
  solver::PerfConfig best;
  std::string stopped_by;   // "patience", "target"; "" when the strategy ran out (budget, space)
  std::string error;        // the strategy did not start
  std::vector<Observation> observed;  // every candidate processed, in order
};

ReplayResult ReplaySearch(SearchStrategy& strategy, const StrategyInput& input, const ReplayOptions& options,
                          const ReplayLookup& lookup);

// What `tuna tune` searches with no flags, as options of a replay on a host whose compile pool
// has `compile_threads` threads (the batch follows from them, tuner.h DefaultBatch): the
// model-guided strategy, DefaultBudget / DefaultPatience / min_gain / generic_budget of
// TuneOptions, kWholeSpace, seed 1, compile ahead (GPU). The budget and patience for a given
// solver and problem are LimitsOf(tune, ...).
ReplayOptions DefaultSearchReplay(int compile_threads);

}  // namespace tuna::search
