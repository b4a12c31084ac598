// Transfer of tuning results across problems (issue #19: the default search warm-started from
// results already in the database for the same solver on other configs and other sessions of the
// same arch; the store also keeps to configs of the job's data type, direction and layout). The
// store (schema/store/lease_store.cc) ships with a perf job what the same solver's searches timed
// on other problems, one run per problem. The search learns a problem-aware score from the runs
// (transfer_score.h), tries the timed params it ranks best for this problem first, then its
// best-scored configs; bench/search replays the same over measured tables (docs/BENCHMARKS.md,
// "Transfer"). AggregateTransfer reduces the runs to one point per params string: how far from
// each problem's fastest it ran there, averaged over the problems it was timed on (mean log2
// slowdown).
//
// Pure functions, no state; any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tuna::search {

// Points ranked for the warm params (the best-ranked by mean slowdown).
inline constexpr size_t kTransferPoints = 512;
// Params timed on other problems that a search tries as they are, right after the default (built
// already: kernels take sizes at run time), before the configs the learned score ranks first:
// the points the score (transfer_score.h) ranks best for this problem.
inline constexpr size_t kWarmParams = 8;

// What a solver's search timed on one other problem: the problem's MIOpenDriver line and the
// verified time of each params string. Times that are not finite and > 0 are ignored; params
// timed more than once count with their fastest time.
struct TransferTime {
  std::string params;
  double ms = 0;
  bool operator==(const TransferTime&) const = default;
};
struct TransferRun {
  std::string driver;
  std::vector<TransferTime> times;
  bool operator==(const TransferRun&) const = default;
};

struct TransferPoint {
  std::string params;
  double slowdown = 0;  // mean over `problems` of log2(ms / that problem's fastest); 0 = the fastest everywhere
  int problems = 0;
  bool operator==(const TransferPoint&) const = default;
};

// At most `limit` points, best first: lowest slowdown, then timed on more problems, then params in
// byte order (the same points for the same runs and times in any order). Each run is one problem.
std::vector<TransferPoint> AggregateTransfer(const std::vector<TransferRun>& runs, size_t limit);

}  // namespace tuna::search
