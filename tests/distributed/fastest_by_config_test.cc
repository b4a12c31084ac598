// worker::FastestByConfig, the rival a perf job's outclassed stop compares against: only verified
// results count, the fastest per config is kept, and a lease's rival (read at the claim) is
// replaced by a lower one that another lane of the worker reported since.
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "worker/fastest_by_config.h"

namespace tuna {
namespace {

coordinator::Report Result(double ms, bool verified = true) {
  coordinator::Report r;
  r.succeeded = true;
  r.has_result = true;
  r.verified = verified;
  r.kernel_time_ms = ms;
  return r;
}

TEST_CASE("fastest by config: verified results only, the fastest kept, the lower rival wins", "[worker]") {
  worker::FastestByConfig f;
  CHECK(f.Get(7) == 0.0);
  CHECK(f.Rival(7, 0.0) == 0.0);
  CHECK(f.Rival(7, 2.5) == 2.5);  // nothing seen: the lease's

  f.Note(7, Result(3.0));
  f.Note(7, Result(1.0, /*verified=*/false));  // not verified: ignored
  coordinator::Report failed = Result(0.5);
  failed.succeeded = false;
  f.Note(7, failed);
  coordinator::Report none = Result(0.4);
  none.has_result = false;  // no passing candidate
  f.Note(7, none);
  CHECK(f.Get(7) == 3.0);
  f.Note(7, Result(2.0));
  f.Note(7, Result(2.2));
  CHECK(f.Get(7) == 2.0);
  CHECK(f.Get(8) == 0.0);  // per config

  CHECK(f.Rival(7, 0.0) == 2.0);  // no lease rival: what the lanes saw
  CHECK(f.Rival(7, 5.0) == 2.0);  // claimed before the lower time was committed
  CHECK(f.Rival(7, 1.5) == 1.5);  // the session had a faster one
}

TEST_CASE("fastest by config: lanes note and read concurrently", "[worker]") {
  worker::FastestByConfig f;
  std::vector<std::thread> lanes;
  for (int t = 0; t < 4; ++t) {
    lanes.emplace_back([&f, t] {
      for (int i = 1; i <= 1000; ++i) {
        f.Note(i % 10, Result(2000.0 - i + t));
        (void)f.Rival(i % 10, 0.0);
      }
    });
  }
  for (std::thread& th : lanes) th.join();
  // Config c's fastest: lane 0's report of the largest i with i % 10 == c.
  for (int c = 0; c < 10; ++c) CHECK(f.Get(c) == 2000.0 - (c == 0 ? 1000 : 990 + c));
}

}  // namespace
}  // namespace tuna
