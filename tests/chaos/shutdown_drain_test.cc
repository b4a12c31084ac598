// A coordinator told to stop (what SIGTERM does in `tuna coordinator`: CoordinatorServer::Shutdown)
// commits the reports it has queued before it stops: 100 workers' reports arrive over gRPC while
// the reporter commits one per transaction, the server is shut down with most of them still
// queued, and every one of them is answered OK and applied — also when the commits take longer
// than the server's grace period (a second connection holds the job table locked for 3 s across
// the shutdown). Real MariaDB, real gRPC on loopback.
#include <atomic>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "tests/distributed/seed.h"
#include "schema/store/database.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "worker/coordinator_client.h"

namespace tuna {
namespace {

int64_t Count(schema::Database& db, const std::string& sql) {
  auto r = db.Query(sql);
  REQUIRE(r.ok());
  return (*r)[0].Int(0);
}

TEST_CASE_METHOD(testing::MariadbTest, "shutdown commits the queued reports before it stops",
                 "[mariadb][chaos]") {
  constexpr int kJobs = 100;
  auto seeded = testing::SeedQueue(db(), kJobs, 1);
  REQUIRE(seeded.ok());
  coordinator::CoordinatorOptions o;
  o.lease_seconds = 60;
  o.max_report_batch = 1;  // one transaction per report: the queue stays long
  o.reap_interval = absl::ZeroDuration();
  auto coord = coordinator::Coordinator::Create(db(), o);
  REQUIRE(coord.ok());
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  REQUIRE(server.ok());
  auto client = worker::MakeGrpcClient({(*server)->address(), ""});
  auto reg = client->Register({coordinator::kProtocolVersion, "drain", "test", {}});
  REQUIRE(reg.ok());
  std::vector<coordinator::LeasedJob> held;
  while (static_cast<int>(held.size()) < kJobs) {
    coordinator::LeaseRequest req;
    req.worker_id = reg->worker_id;
    req.step = jobs::JobStep::kCompile;
    req.compile_backends = {"cpu"};
    req.max_jobs = 50;
    req.wait = absl::Seconds(1);
    auto jobs = client->Lease(req);
    REQUIRE(jobs.ok());
    held.insert(held.end(), jobs->begin(), jobs->end());
  }

  // Every report is a retryable failure: applied, the job goes back to 'new' with retries 1.
  std::vector<absl::Status> answers(kJobs);
  std::vector<std::thread> senders;
  for (int k = 0; k < kJobs; ++k) {
    senders.emplace_back([&, k] {
      coordinator::Report r;
      r.worker_id = reg->worker_id;
      r.job_id = held[k].job_id;
      r.attempt = held[k].attempt;
      r.step = jobs::JobStep::kCompile;
      r.error = "drain test";
      answers[k] = client->Report(r);
    });
  }
  auto applied = [&] { return Count(db(), "SELECT COUNT(*) FROM job WHERE retries = 1"); };
  // All reports are in the coordinator: committed or queued (at most one in the reporter's hand).
  size_t queued = 0;
  for (int k = 0; k < 600; ++k) {
    queued = (*coord)->TEST_QueuedReports();
    if (static_cast<int64_t>(queued) + applied() + 1 >= kJobs) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int64_t applied_before = applied();
  // A slow database: the reporter's commits wait 3 s on a table lock, longer than the server's
  // 2 s grace for the calls in flight.
  schema::DatabaseOptions lock_options;
  lock_options.connection = connection();
  lock_options.pool_size = 1;
  auto locker_db = schema::Database::Open(lock_options);
  REQUIRE(locker_db.ok());
  std::atomic<bool> locked{false};
  std::thread locker([&] {
    absl::Status st = (*locker_db)->WithConnection([&](schema::Connection& c) -> absl::Status {
      if (absl::Status s = c.ExecuteUnprepared("LOCK TABLES job WRITE"); !s.ok()) return s;
      locked = true;
      std::this_thread::sleep_for(std::chrono::seconds(3));
      return c.ExecuteUnprepared("UNLOCK TABLES");
    });
    locked = true;
    CHECK(st.ok());
  });
  while (!locked) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  (*server)->Shutdown();
  locker.join();
  for (auto& t : senders) t.join();
  int ok = 0;
  for (const auto& st : answers) ok += st.ok();
  const int64_t applied_after = applied();
  std::printf("shutdown drain: %d reports, %zu queued and %lld committed when the shutdown began, "
              "%d answered OK, %lld committed in all\n",
              kJobs, queued, static_cast<long long>(applied_before), ok,
              static_cast<long long>(applied_after));
  CHECK(ok == kJobs);
  CHECK(applied_after == kJobs);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE lease_owner IS NOT NULL") == 0);
  // Refused after the shutdown (the worker sends it to the next coordinator).
  coordinator::Report late;
  late.worker_id = reg->worker_id;
  late.job_id = held[0].job_id;
  late.attempt = held[0].attempt;
  late.error = "after the shutdown";
  CHECK(absl::IsUnavailable((*coord)->SubmitReport(late)));
}

}  // namespace
}  // namespace tuna
