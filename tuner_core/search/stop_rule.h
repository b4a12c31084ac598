// When a tunable search stops before its strategy is done (the Tuner's driver loop, and the
// table replay of bench/search that must stop where the Tuner would): `patience` candidates in a
// row without a gain of more than `min_gain` over the best (counted once something has passed),
// the time limit, or outclassed by another search of the problem (TuneOptions::rival_ms).
// Non-tunable solvers never stop early. Threads: one thread at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "tuner_core/search/tuner.h"

namespace tuna::search {

class StopRule {
 public:
  // `patience`: the search's (SearchLimits::patience), in place of options.patience.
  StopRule(const TuneOptions& options, bool tunable, uint64_t patience);

  // One candidate processed; `timed_ok` when it passed with a full timing.
  void Note(bool timed_ok, double ms);

  // Whether the search stops for patience unless one of the next `n` candidates gains: a batch
  // proposed now would then be compiled for nothing whenever the current one does not gain.
  bool MayStopWithin(uint64_t n) const { return patience_ > 0 && best_ > 0 && since_gain_ + n >= patience_; }

  // "patience", "time limit", "outclassed", or "" to go on. Patience and the time limit are
  // asked after each batch (the batch in flight finishes).
  std::string Reason() const;

  // The outclassed clause alone, asked after every candidate: a search already far slower than
  // another solver's time on the problem stops mid-batch (the rest of the batch is not timed:
  // the device time goes to searches that can win; a capped generic search is one batch).
  bool Outclassed() const;

 private:
  const uint64_t patience_;
  const double min_gain_;
  const double limit_s_;
  const std::function<double()> rival_ms_;
  const double outclassed_factor_;
  const uint64_t outclassed_after_;
  const std::chrono::steady_clock::time_point start_;
  double best_ = 0;
  uint64_t since_gain_ = 0;
  uint64_t noted_ = 0;
};

}  // namespace tuna::search
