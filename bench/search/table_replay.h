// Search strategies replayed against measured tables (tables.h) with search::ReplaySearch: every
// proposal answered with the time measured for that config, points outside the table invalid,
// the solver's space taken from the registry for the table's arch. No device.
//   ReplayDefault       what `tuna tune` runs with no flags (replay.h DefaultSearchReplay): budget
//                       48 (16 for a generic solver where a specialised one serves the problem:
//                       LimitsOf), patience 16 (a space of at most kWholeSpace valid points:
//                       whole, no budget or patience), batches of DefaultBatch(threads), compile
//                       ahead as on a GPU; it runs to its own end, so its pick is known too.
//                       Cold, or with the warm start a `tune -f` job gets from configs tuned
//                       before it (TransferFrom: the store's transfer runs of other tables).
//   ReplayUntilWithin   a strategy with no budget or patience, until one point is within.
// "Reached" = a passing point within `within` (0.03) of the table's best.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/search/tables.h"
#include "tuner_core/search/replay.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/transfer.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {

struct DefaultRun {
  ReplayResult result;
  uint64_t budget = 0;  // the default's budget for this table's solver and problem
};

// InvalidArgument when the table's solver, driver line or arch is unknown. With transfer runs (what
// a `tune -f` perf job brings from other configs' results: TuneOptions::transfer) the search is
// warm-started as the Tuner does it (search::AddWarmStart).
absl::StatusOr<DefaultRun> ReplayDefault(const Table& t, uint64_t seed, int compile_threads, double within,
                                         const solver::SolverRegistry& registry,
                                         const std::vector<TransferRun>& transfer = {});

// The transfer runs the store gives a perf job of table `i` from a database holding what `runs`
// (one per table, in order) timed on the other tables of the same solver, arch, data type,
// direction and layout: other configs, as when they were tuned before it. The table's own run is
// never read.
std::vector<TransferRun> TransferFrom(const std::vector<Table>& tables, const std::vector<ReplayResult>& runs,
                                      size_t i);
absl::StatusOr<ReplayResult> ReplayUntilWithin(const Table& t, SearchStrategy& strategy, uint64_t seed, size_t batch,
                                               double within, const solver::SolverRegistry& registry);

// Fraction of the table timed until reached; 1 (the whole space) when never reached.
double FractionUntilReached(const Table& t, const ReplayResult& r);

}  // namespace tuna::search
