// Hosts take the blame (issue 15 part 5) at the coordinator, in process against a real MariaDB:
//  * a job a worker reports unsupported goes back uncharged and is not leased to that worker
//    again, while another worker gets it;
//  * host faults hand their jobs back uncharged; after --max-host-faults in a row the host's
//    eval leases are refused (FailedPrecondition naming the bench), its compile leases are not,
//    and an eval success after the bench clears it.
#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "coordinator/in_process_client.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna {
namespace {

struct Setup {
  std::unique_ptr<coordinator::Coordinator> coord;
  std::unique_ptr<coordinator::WorkerApi> client;
};

Setup Start(schema::Database& db, absl::Duration bench) {
  coordinator::CoordinatorOptions o;
  o.reap_interval = absl::ZeroDuration();
  o.empty_poll_interval = absl::Milliseconds(20);
  o.max_retries = 1;  // a single charge would fail the job
  o.max_host_faults = 2;
  o.host_bench = bench;
  auto coord = coordinator::Coordinator::Create(db, o);
  REQUIRE(coord.ok());
  Setup s{*std::move(coord), nullptr};
  s.client = coordinator::MakeInProcessClient(*s.coord);
  return s;
}

std::string Register(coordinator::WorkerApi& client, const std::string& host) {
  coordinator::Device dev{"cpu", "cpu-test", 4, 0, 0};
  auto reg = client.Register({coordinator::kProtocolVersion, host, "test", {dev}});
  REQUIRE(reg.ok());
  return reg->worker_id;
}

coordinator::LeaseRequest Want(const std::string& worker, coordinator::JobStep step, int n) {
  coordinator::LeaseRequest req;
  req.worker_id = worker;
  req.step = step;
  if (step == coordinator::JobStep::kCompile) {
    req.compile_backends = {"cpu"};
  } else {
    req.device = coordinator::Device{"cpu", "cpu-test", 4, 0, 0};
  }
  req.max_jobs = n;
  req.wait = absl::Milliseconds(300);
  return req;
}

coordinator::Report Failed(const std::string& worker, const coordinator::LeasedJob& j,
                           jobs::Blame blame) {
  coordinator::Report r;
  r.worker_id = worker;
  r.job_id = j.job_id;
  r.attempt = j.attempt;
  r.step = j.step;
  r.error = "cannot run it here";
  r.blame = blame;
  return r;
}

int64_t Scalar(schema::Database& db, const std::string& sql) {
  auto r = db.Query(sql);
  REQUIRE(r.ok());
  return (*r)[0].Int(0);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "a job reported unsupported goes to another worker, uncharged",
                 "[mariadb][distributed]") {
  auto seeded = testing::SeedQueue(db(), 1, 1);  // one compile job
  REQUIRE(seeded.ok());
  Setup s = Start(db(), absl::Minutes(5));
  const std::string old_worker = Register(*s.client, "old");
  const std::string new_worker = Register(*s.client, "new");
  auto got = s.client->Lease(Want(old_worker, coordinator::JobStep::kCompile, 1));
  REQUIRE(got.ok());
  REQUIRE(got->size() == 1);
  REQUIRE(s.client->Report(Failed(old_worker, (*got)[0], jobs::Blame::kUnsupported)).ok());
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'new' AND retries = 0") == 1);
  // Not to the worker that cannot run it (it would only come back), but to the other one.
  auto again = s.client->Lease(Want(old_worker, coordinator::JobStep::kCompile, 1));
  REQUIRE(again.ok());
  CHECK(again->empty());
  auto other = s.client->Lease(Want(new_worker, coordinator::JobStep::kCompile, 1));
  REQUIRE(other.ok());
  REQUIRE(other->size() == 1);
  CHECK((*other)[0].job_id == (*got)[0].job_id);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "host faults are uncharged and bench the host's eval leases",
                 "[mariadb][distributed]") {
  auto seeded = testing::SeedQueue(db(), 4, 1);
  REQUIRE(seeded.ok());
  REQUIRE(db().Execute("UPDATE job SET state = 'compiled'").ok());
  Setup s = Start(db(), absl::Seconds(1));
  const std::string broken = Register(*s.client, "broken");
  for (int k = 0; k < 2; ++k) {
    auto got = s.client->Lease(Want(broken, coordinator::JobStep::kEval, 1));
    REQUIRE(got.ok());
    REQUIRE(got->size() == 1);
    REQUIRE(s.client->Report(Failed(broken, (*got)[0], jobs::Blame::kHost)).ok());
  }
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'compiled' AND retries = 0") == 4);
  auto refused = s.client->Lease(Want(broken, coordinator::JobStep::kEval, 1));
  REQUIRE(absl::IsFailedPrecondition(refused.status()));
  CHECK(refused.status().message().find("host broken is benched") != std::string::npos);
  // A restarted worker on that host is the same host.
  const std::string restarted = Register(*s.client, "broken");
  CHECK(absl::IsFailedPrecondition(
      s.client->Lease(Want(restarted, coordinator::JobStep::kEval, 1)).status()));
  CHECK(s.client->Lease(Want(restarted, coordinator::JobStep::kCompile, 1)).ok());
  // After the bench: leases again; a success clears the count (two more faults are needed).
  absl::SleepFor(absl::Milliseconds(1100));
  auto got = s.client->Lease(Want(restarted, coordinator::JobStep::kEval, 1));
  REQUIRE(got.ok());
  REQUIRE(got->size() == 1);
  coordinator::Report ok = Failed(restarted, (*got)[0], jobs::Blame::kJob);
  ok.succeeded = true;
  ok.error.clear();
  REQUIRE(s.client->Report(ok).ok());
  got = s.client->Lease(Want(restarted, coordinator::JobStep::kEval, 1));
  REQUIRE(got.ok());
  REQUIRE(got->size() == 1);
  REQUIRE(s.client->Report(Failed(restarted, (*got)[0], jobs::Blame::kHost)).ok());
  CHECK(s.client->Lease(Want(restarted, coordinator::JobStep::kEval, 1)).ok());
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'failed'") == 0);
}

}  // namespace
}  // namespace tuna
