// coordinator/handler_pool.h: blocking handlers get threads as they come (up to the limit), and
// at the limit they wait their turn; the destructor runs what is queued.
#include "coordinator/handler_pool.h"

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "catch2/catch.hpp"

namespace tuna {
namespace {

TEST_CASE("a task that blocks does not hold up the next one", "[distributed]") {
  // Eight tasks that each wait until all eight run: only a pool that starts a thread for each
  // lets them finish.
  constexpr int kTasks = 8;
  absl::Mutex mu;
  int started = 0, finished = 0;
  {
    coordinator::HandlerPool pool(/*max_threads=*/kTasks, /*keep_idle=*/2);
    for (int i = 0; i < kTasks; ++i) {
      pool.Run([&] {
        absl::MutexLock l(&mu);
        ++started;
        auto all = [&] { return started == kTasks; };
        if (mu.AwaitWithTimeout(absl::Condition(&all), absl::Seconds(60))) ++finished;
      });
    }
  }
  CHECK(started == kTasks);
  CHECK(finished == kTasks);
}

TEST_CASE("at its limit the pool queues tasks and runs them all", "[distributed]") {
  std::atomic<int> running{0}, most{0}, done{0};
  {
    coordinator::HandlerPool pool(/*max_threads=*/2, /*keep_idle=*/0);
    for (int i = 0; i < 50; ++i) {
      pool.Run([&] {
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        absl::SleepFor(absl::Milliseconds(1));
        --running;
        ++done;
      });
    }
  }  // the destructor runs the queued tasks, then joins
  CHECK(done == 50);
  CHECK(most <= 2);
  CHECK(most >= 1);
}

TEST_CASE("threads that exit when idle are replaced", "[distributed]") {
  // keep_idle 0: every thread exits after its task, so each later task needs a new one.
  coordinator::HandlerPool pool(/*max_threads=*/1, /*keep_idle=*/0);
  for (int round = 0; round < 20; ++round) {
    absl::Mutex mu;
    bool ran = false;
    pool.Run([&] {
      absl::MutexLock l(&mu);
      ran = true;
    });
    absl::MutexLock l(&mu);
    auto did = [&] { return ran; };
    CHECK(mu.AwaitWithTimeout(absl::Condition(&did), absl::Seconds(60)));
  }
}

}  // namespace
}  // namespace tuna
