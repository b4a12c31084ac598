// Transfer of tuning results across problems (issue #19: the default search warm-started from
// results already in the database for the same solver on other configs and other sessions of the
// same arch; the store also keeps to configs of the job's data type, direction and layout). What
// the same solver's searches timed on other problems is reduced to one point per
// params string: how far from each problem's fastest it ran there, averaged over the problems it
// was timed on (mean log2 slowdown). The store (schema/store/lease_store.cc) reduces the database's
// samples so and ships the points with a perf job; the search learns a score over the whole space
// from them (transfer_score.h) and tries its best-scored configs first; bench/search replays the
// same over measured tables (docs/BENCHMARKS.md, "Transfer").
//
// Pure functions, no state; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tuna::search {

// Points a perf job carries (the best-ranked; ~25 bytes each on the wire).
inline constexpr size_t kTransferPoints = 512;
// The best-ranked points' params a perf job also tries as they are, right after the default
// (TuneOptions::warm_params), before the configs the learned score ranks first.
inline constexpr size_t kWarmParams = 8;

// One timed candidate of another problem: `problem` identifies the problem (a config id), `params`
// the perf-db params string, `ms` the verified time. Samples whose time is not finite and > 0 are
// ignored; a (problem, params) pair timed more than once counts with its fastest time.
struct TransferSample {
  int64_t problem = 0;
  std::string params;
  double ms = 0;
};

struct TransferPoint {
  std::string params;
  double slowdown = 0;  // mean over `problems` of log2(ms / that problem's fastest); 0 = the fastest everywhere
  int problems = 0;
  bool operator==(const TransferPoint&) const = default;
};

// At most `limit` points, best first: lowest slowdown, then timed on more problems, then params in
// byte order (the same points for the same samples in any order).
std::vector<TransferPoint> AggregateTransfer(const std::vector<TransferSample>& samples, size_t limit);

}  // namespace tuna::search
