// Coordinator + real gRPC on loopback + real MariaDB: three workers (threads with their own
// channels) run 20 perf jobs to completion, compile and eval on different workers; one worker
// dies holding a lease (reaped, re-leased, completed once); the coordinator is restarted mid-run;
// tokens, fencing, duplicates and validation are checked.
#include <atomic>
#include <cmath>
#include <thread>

#include "catch2/catch.hpp"
#include "tuner_core/hash/sha256.h"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "worker/coordinator_client.h"

namespace tuna {
namespace {

using coordinator::LeaseRequest;
using coordinator::Report;
using jobs::JobStep;

int64_t Count(schema::Database& db, const std::string& sql) {
  auto r = db.Query(sql);
  REQUIRE(r.ok());
  return (*r)[0].Int(0);
}

struct Running {
  std::unique_ptr<coordinator::Coordinator> coord;
  std::unique_ptr<coordinator::CoordinatorServer> server;
};

Running StartCoordinator(schema::Database& db, const solver::SolverRegistry* reg,
                         const std::string& listen) {
  coordinator::CoordinatorOptions o;
  o.lease_seconds = 2;
  o.reap_interval = absl::Milliseconds(200);
  o.empty_poll_interval = absl::Milliseconds(50);
  o.registry = reg;
  auto c = coordinator::Coordinator::Create(db, o);
  REQUIRE(c.ok());
  coordinator::ServerOptions so;
  so.listen = listen;
  so.token = "s3cret";
  auto s = coordinator::CoordinatorServer::Start(**c, so);
  REQUIRE(s.ok());
  return {std::move(*c), std::move(*s)};
}

TEST_CASE("a non-loopback listen address needs a token", "[distributed]") {
  CHECK(coordinator::IsLoopbackAddress("127.0.0.1:5"));
  CHECK(coordinator::IsLoopbackAddress("[::1]:5"));
  CHECK(coordinator::IsLoopbackAddress("localhost:5"));
  CHECK_FALSE(coordinator::IsLoopbackAddress("0.0.0.0:5"));
  CHECK_FALSE(coordinator::IsLoopbackAddress("10.1.2.3:5"));
}

TEST_CASE_METHOD(testing::MariadbTest, "distributed run over gRPC completes every job once",
                 "[mariadb]") {
  auto registry = testing::MakeTestRegistry();
  auto seeded = testing::SeedQueue(db(), 20, 0, "perf", "new", "cpu-test", 4, "CPU",
                                   {"TestSolver9001"});
  REQUIRE(seeded.ok());
  REQUIRE(seeded->jobs == 20);
  Running run = StartCoordinator(db(), registry.get(), "127.0.0.1:0");
  const int port = run.server->port();
  const std::string addr = run.server->address();

  {  // no token / wrong token
    auto none = worker::MakeGrpcClient({addr, ""});
    auto st = none->Register({coordinator::kProtocolVersion, "h", "v", {}});
    CHECK(st.status().code() == absl::StatusCode::kUnauthenticated);
    auto wrong = worker::MakeGrpcClient({addr, "s3cre7"});
    st = wrong->Register({coordinator::kProtocolVersion, "h", "v", {}});
    CHECK(st.status().code() == absl::StatusCode::kUnauthenticated);
  }

  coordinator::Device dev{"cpu", "cpu-test", 4, 0, 0};
  std::atomic<bool> done{false};
  std::atomic<int> evaluated{0};
  std::atomic<int64_t> abandoned_job{0}, abandoned_attempt{0};
  std::string abandoned_owner;
  std::mutex mu;
  std::vector<Report> sent;  // successful eval reports, for the duplicate check

  auto retry = [](auto fn) {
    for (int k = 0;; ++k) {
      auto r = fn();
      if (!worker::IsTransient(r) || k > 100) {
        return r;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  };

  auto run_worker = [&](const std::string& name, JobStep step, bool die_on_first) {
    auto client = worker::MakeGrpcClient({addr, "s3cret", "", absl::Seconds(5)});
    std::string id;
    REQUIRE(retry([&] {
              auto r = client->Register({coordinator::kProtocolVersion, name, "test", {dev}});
              if (r.ok()) id = r->worker_id;
              return r.status();
            }).ok());
    while (!done) {
      LeaseRequest req;
      req.worker_id = id;
      req.step = step;
      req.compile_backends = {"cpu"};
      req.device = dev;
      req.max_jobs = 2;
      req.wait = absl::Milliseconds(500);
      auto jobs = client->Lease(req);
      if (!jobs.ok()) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // coordinator restarting
        continue;
      }
      for (const auto& j : *jobs) {
        if (die_on_first) {  // like kill -9: the lease is simply never renewed or reported
          std::lock_guard<std::mutex> l(mu);
          abandoned_owner = id;
          abandoned_attempt = j.attempt;
          abandoned_job = j.job_id;
          return;
        }
        Report rep;
        rep.worker_id = id;
        rep.job_id = j.job_id;
        rep.attempt = j.attempt;
        rep.step = step;
        rep.succeeded = true;
        if (step == JobStep::kCompile) {
          coordinator::KernelBlob k{hash::Sha256Hex(j.driver), j.arch, "test", "k.cc",
                                 "-DX=1", "f", "code of " + j.driver};
          absl::StatusOr<std::vector<int64_t>> ids;
          REQUIRE(retry([&] {
                    ids = client->PutKernels(id, j.job_id, j.attempt, {k});
                    return ids.status();
                  }).ok());
          rep.kernels = {{(*ids)[0], k.build_key}};
        } else {
          absl::StatusOr<std::vector<coordinator::KernelBlob>> k;
          REQUIRE(retry([&] {
                    k = client->FetchKernels(id, j.job_id, j.attempt);
                    return k.status();
                  }).ok());
          REQUIRE(k->size() == 1);
          CHECK((*k)[0].code_object == "code of " + j.driver);
          rep.has_result = true;
          rep.params = "2";
          rep.kernel_time_ms = 0.25;
          rep.verified = true;
          rep.candidates_tried = 2;
          rep.samples = {{"1", 0.5, "Passed", ""}, {"2", 0.25, "Passed", ""}};
        }
        absl::Status st = retry([&] { return client->Report(rep); });
        CHECK(st.ToString() == "OK");
        if (step == JobStep::kEval && st.ok()) {
          ++evaluated;
          std::lock_guard<std::mutex> l(mu);
          sent.push_back(rep);
        }
      }
    }
  };

  std::thread compiler([&] { run_worker("compile-host", JobStep::kCompile, false); });
  std::thread dying([&] { run_worker("dying-host", JobStep::kEval, true); });
  // Let the dying worker take its job before the healthy evaluator starts.
  for (int k = 0; k < 100 && abandoned_job == 0; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  REQUIRE(abandoned_job != 0);
  std::thread evaluator([&] { run_worker("eval-host", JobStep::kEval, false); });

  // Restart the coordinator mid-run (same port; workers reconnect).
  for (int k = 0; k < 200 && evaluated < 5; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  run.server->Shutdown();
  run.server.reset();
  run.coord.reset();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  run = StartCoordinator(db(), registry.get(), "127.0.0.1:" + std::to_string(port));

  for (int k = 0; k < 600 && evaluated < 20; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  done = true;
  compiler.join();
  dying.join();
  evaluator.join();

  CHECK(evaluated == 20);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'") == 20);
  CHECK(Count(db(), "SELECT COUNT(*) FROM perf_result") == 20);
  CHECK(Count(db(), "SELECT COUNT(*) FROM eval_sample") == 40);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE compile_worker LIKE 'compile-host/%' AND "
                    "eval_worker LIKE 'eval-host/%'") == 20);
  // The abandoned job was reaped and finished by the other worker: with a retry counted when the
  // first coordinator reaped it, without one when its lease (taken before the restart) ran out
  // around the restart (coordinator.h: serving grace, docs/RELIABILITY.md).
  auto r = db().Query("SELECT state, retries, attempt FROM job WHERE id = ?",
                      {abandoned_job.load()});
  REQUIRE(r.ok());
  CHECK((*r)[0].String(0) == "evaluated");
  CHECK((*r)[0].Int(1) <= 1);

  auto client = worker::MakeGrpcClient({addr, "s3cret"});
  // Stale: the dead worker's attempt is fenced.
  Report stale = sent[0];
  stale.worker_id = abandoned_owner;
  stale.job_id = abandoned_job;
  stale.attempt = abandoned_attempt;
  CHECK(client->Report(stale).code() == absl::StatusCode::kFailedPrecondition);
  // Duplicate: accepted, nothing changes.
  CHECK(client->Report(sent[0]).ok());
  CHECK(Count(db(), "SELECT COUNT(*) FROM perf_result") == 20);
  CHECK(Count(db(), "SELECT COUNT(*) FROM eval_sample") == 40);
  // Validation: non-finite time, params outside the space, params the solver rejects.
  Report bad = sent[0];
  bad.kernel_time_ms = std::nan("");
  CHECK(client->Report(bad).code() == absl::StatusCode::kInvalidArgument);
  bad = sent[0];
  bad.params = "3";
  CHECK(client->Report(bad).code() == absl::StatusCode::kInvalidArgument);
  bad.params = "4";
  CHECK(client->Report(bad).code() == absl::StatusCode::kInvalidArgument);
  bad = sent[0];
  bad.samples[0].status = "Bogus";
  CHECK(client->Report(bad).code() == absl::StatusCode::kInvalidArgument);
  // An empty queue long-polls and answers empty.
  LeaseRequest req;
  req.worker_id = "idle/1";
  req.step = JobStep::kEval;
  req.device = dev;
  req.wait = absl::Milliseconds(300);
  auto t0 = absl::Now();
  auto none = client->Lease(req);
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK(absl::Now() - t0 >= absl::Milliseconds(250));
}

}  // namespace
}  // namespace tuna
