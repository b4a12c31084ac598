// Coordinator::LeaseJobsAsync (what the gRPC Lease handler calls: no thread waits for the answer):
// jobs come from a dispatcher; a poll that finds nothing is answered empty when its wait ends,
// not before, and polls end in the order of their deadlines whatever order they came in; a
// poll still waiting at Shutdown is answered Unavailable, at EndPolls empty (one a dispatcher holds
// when its claim ends); a refused request is answered at once.
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna {
namespace {

using Answer = absl::StatusOr<std::vector<coordinator::LeasedJob>>;
using Clock = std::chrono::steady_clock;

struct Poll {
  std::promise<Answer> answer;
  std::future<Answer> got = answer.get_future();
  Clock::time_point sent = Clock::now();
  Clock::time_point answered;
};

// Sends a compile lease of `max_jobs` with `wait`; the Poll's future gets the answer.
std::shared_ptr<Poll> Send(coordinator::Coordinator& c, const std::string& worker_id, int max_jobs,
                           absl::Duration wait) {
  auto p = std::make_shared<Poll>();
  coordinator::LeaseRequest req;
  req.worker_id = worker_id;
  req.step = coordinator::JobStep::kCompile;
  req.compile_backends = {"cpu"};
  req.max_jobs = max_jobs;
  req.wait = wait;
  c.LeaseJobsAsync(req, [p](Answer a) {
    p->answered = Clock::now();
    p->answer.set_value(std::move(a));
  });
  return p;
}

double WaitedMs(const Poll& p) {
  return std::chrono::duration<double, std::milli>(p.answered - p.sent).count();
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "asynchronous leases: jobs, empty polls at their deadline, shutdown",
                 "[mariadb][distributed]") {
  auto seeded = testing::SeedQueue(db(), 3, 1);
  REQUIRE(seeded.ok());
  coordinator::CoordinatorOptions o;
  o.reap_interval = absl::ZeroDuration();
  // Once a claim finds the queue dry, no dispatcher takes a poll of that filter again for the rest
  // of the case, so the polls below are idle when EndPolls and Shutdown come and are answered on
  // the spot (a poll a dispatcher holds is answered when its claim ends: the next case).
  o.empty_poll_interval = absl::Seconds(30);
  auto coord = coordinator::Coordinator::Create(db(), o);
  REQUIRE(coord.ok());
  coordinator::Coordinator& c = **coord;
  auto reg = c.Register({coordinator::kProtocolVersion, "host", "test", {}});
  REQUIRE(reg.ok());

  auto jobs = Send(c, reg->worker_id, 3, absl::Seconds(5));
  Answer a = jobs->got.get();
  REQUIRE(a.ok());
  CHECK(a->size() == 3);

  // The queue is dry now. Sent first with the later deadline, the 600 ms poll must not hold up
  // the 150 ms one.
  auto late = Send(c, reg->worker_id, 1, absl::Milliseconds(600));
  auto early = Send(c, reg->worker_id, 1, absl::Milliseconds(150));
  Answer e = early->got.get();
  Answer l = late->got.get();
  REQUIRE(e.ok());
  REQUIRE(l.ok());
  CHECK(e->empty());
  CHECK(l->empty());
  CHECK(WaitedMs(*early) >= 150);
  CHECK(WaitedMs(*late) >= 600);
  CHECK(early->answered < late->answered);

  // Refused before it queues: answered on the calling thread, before LeaseJobsAsync returns.
  auto bad = Send(c, reg->worker_id, 0, absl::Seconds(1));
  REQUIRE(bad->got.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(absl::IsInvalidArgument(bad->got.get().status()));

  // EndPolls answers the polls waiting now, empty, at once; later ones wait as before.
  auto ended = Send(c, reg->worker_id, 1, absl::Seconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  c.EndPolls();
  REQUIRE(ended->got.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  Answer en = ended->got.get();
  REQUIRE(en.ok());
  CHECK(en->empty());
  CHECK(WaitedMs(*ended) < 5000);
  auto next = Send(c, reg->worker_id, 1, absl::Milliseconds(150));
  REQUIRE(next->got.get().ok());
  CHECK(WaitedMs(*next) >= 150);

  // A poll still waiting when the coordinator shuts down is answered then.
  auto waiting = Send(c, reg->worker_id, 1, absl::Seconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  c.Shutdown();
  REQUIRE(waiting->got.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(absl::IsUnavailable(waiting->got.get().status()));
  // And after Shutdown every request is refused at once.
  auto after = Send(c, reg->worker_id, 1, absl::Seconds(1));
  REQUIRE(after->got.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(absl::IsUnavailable(after->got.get().status()));
}

TEST_CASE_METHOD(testing::MariadbTest, "EndPolls ends a poll a dispatcher holds when its claim ends",
                 "[mariadb][distributed]") {
  auto seeded = testing::SeedQueue(db(), 1, 1);
  REQUIRE(seeded.ok());
  coordinator::CoordinatorOptions o;
  o.reap_interval = absl::ZeroDuration();
  o.empty_poll_interval = absl::ZeroDuration();  // a dry filter is claimed again at once: polls are mostly held
  auto coord = coordinator::Coordinator::Create(db(), o);
  REQUIRE(coord.ok());
  coordinator::Coordinator& c = **coord;
  auto reg = c.Register({coordinator::kProtocolVersion, "host", "test", {}});
  REQUIRE(reg.ok());
  Answer first = Send(c, reg->worker_id, 1, absl::Seconds(5))->got.get();
  REQUIRE(first.ok());
  REQUIRE(first->size() == 1);  // the queue is dry from here on
  int late = 0;
  for (int i = 0; i < 40; ++i) {
    auto p = Send(c, reg->worker_id, 1, absl::Seconds(30));
    std::this_thread::sleep_for(std::chrono::microseconds(500 * (i % 7)));
    c.EndPolls();
    if (p->got.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
      ++late;
      continue;
    }
    Answer a = p->got.get();
    REQUIRE(a.ok());
    CHECK(a->empty());
  }
  CHECK(late == 0);
  c.Shutdown();
}

}  // namespace
}  // namespace tuna
