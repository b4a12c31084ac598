// The worker against a real coordinator (gRPC on loopback) and a real MariaDB:
//  * three `tuna worker` PROCESSES (one compile-only, two eval-only, each eval with its own
//    executor child) tune 20 small configs (perf + find of TunaCpuGemmConv) to completion; one
//    eval worker is killed with SIGKILL while it holds eval leases: those jobs are leased again
//    after expiry and complete once; the others stop on SIGTERM with exit status 0;
//  * an executor whose kernel hangs (TestFaultSolver, a test-only executor binary) is killed
//    at the per-job deadline, its job failed with "timeout after N s", and the worker goes on.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tests/search/test_solvers.h"
#include "tuner_core/solver/registry.h"
#include "worker/coordinator_client.h"
#include "worker/worker.h"

namespace tuna {
namespace {

using testing::CountRows;

using testing::WaitUntil;

TEST_CASE_METHOD(testing::MariadbTest,
                 "three worker processes finish every job once, surviving a kill -9",
                 "[mariadb][distributed]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  auto session = testing::LoadCpuWorkload(db(), registry, testing::SmallDriverLines(20), "w20",
                                          {"TunaCpuGemmConv"}, {"perf", "find"});
  REQUIRE(session.ok());
  const int64_t jobs = CountRows(db(), "SELECT COUNT(*) FROM job");
  REQUIRE(jobs == 40);

  coordinator::CoordinatorOptions co;
  co.registry = &registry;
  co.lease_seconds = 3;
  co.reap_interval = absl::Milliseconds(300);
  co.empty_poll_interval = absl::Milliseconds(50);
  co.max_wait = absl::Seconds(1);
  auto coord = coordinator::Coordinator::Create(db(), co);
  REQUIRE(coord.ok());
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  REQUIRE(server.ok());
  const std::string addr = (*server)->address();

  auto worker = [&](const std::string& host, const std::string& steps) {
    return std::vector<std::string>{tuna_bin, "worker", "--coordinator", addr, "--backend", "cpu",
                                    "--steps", steps, "--host", host, "--budget", "2",
                                    "--repetitions", "2", "--lease-batch", "3", "--compile-jobs", "1"};
  };
  const std::string log = testing::TestOutputDir() + "/workers.log";
  // The victim starts first and alone on eval, so it is sure to hold eval leases.
  pid_t compiler = testing::Spawn(worker("compiler", "compile"), log + ".compiler");
  pid_t victim = testing::Spawn(worker("victim", "eval"), log + ".victim");
  REQUIRE(compiler > 0);
  REQUIRE(victim > 0);
  REQUIRE(WaitUntil(60, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'eval_start' AND lease_owner LIKE 'victim/%'") > 0;
  }));
  REQUIRE(kill(victim, SIGKILL) == 0);
  const int victim_status = testing::WaitFor(victim, 10);
  CHECK(WIFSIGNALED(victim_status));
  // The leases the victim held when it died (counted after its death: until then it may still
  // finish some of them); none has expired yet (3 s lease, renewed every second).
  auto held = db().Query("SELECT id FROM job WHERE state = 'eval_start' AND lease_owner LIKE 'victim/%'");
  REQUIRE(held.ok());
  std::string held_ids = "0";
  for (const auto& row : *held) held_ids += "," + std::to_string(row.Int(0));
  const int64_t victim_held = static_cast<int64_t>(held->size());
  pid_t survivor = testing::Spawn(worker("survivor", "eval"), log + ".survivor");
  REQUIRE(survivor > 0);

  const bool finished = WaitUntil(150, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
  // SIGTERM: stop leasing, finish or release, exit 0.
  kill(compiler, SIGTERM);
  kill(survivor, SIGTERM);
  const int cs = testing::WaitFor(compiler, 30);
  const int ss = testing::WaitFor(survivor, 30);
  CHECK(WIFEXITED(cs));
  CHECK(WEXITSTATUS(cs) == 0);
  CHECK(WIFEXITED(ss));
  CHECK(WEXITSTATUS(ss) == 0);
  REQUIRE(finished);

  INFO("victim held " << victim_held << " eval lease(s) when killed");
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'") == 40);
  // Exactly one result per job, verified (so exportable), from exactly one attempt's samples.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM perf_result") == 20);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM find_result") == 20);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM perf_result WHERE verified") == 20);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM find_result WHERE verified") == 20);
  CHECK(CountRows(db(), "SELECT COUNT(DISTINCT job_id, attempt) FROM eval_sample") == 40);
  CHECK(CountRows(db(), "SELECT COUNT(DISTINCT job_id) FROM eval_sample") == 40);
  // Perf jobs sample every candidate of the budget (2), find jobs one.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM eval_sample s JOIN job j ON j.id = s.job_id WHERE j.kind = 'perf'") == 40);
  // Compile and eval by different workers; the victim's leases went to the survivor.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE compile_worker LIKE 'compiler/%'") == 40);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE eval_worker LIKE 'compiler/%'") == 0);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE eval_worker LIKE 'victim/%'") +
            CountRows(db(), "SELECT COUNT(*) FROM job WHERE eval_worker LIKE 'survivor/%'") == 40);
  // Each lease the victim died with was evaluated by the survivor in a later attempt.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE eval_worker LIKE 'survivor/%' AND attempt >= 3 AND id IN (" +
                            held_ids + ")") == victim_held);
  // Kernels went through the coordinator: every job has its compile step's kernels linked.
  CHECK(CountRows(db(), "SELECT COUNT(DISTINCT job_id) FROM job_kernel") == 40);
  (*server)->Shutdown();
}

TEST_CASE_METHOD(testing::MariadbTest, "a hung kernel kills only its executor; the worker goes on",
                 "[mariadb][distributed]") {
  const std::string executor_bin = testing::Runfile("tests/distributed/worker_fault_executor");
  REQUIRE(!executor_bin.empty());
  auto registry = search::testing::FaultRegistry({search::testing::kSpin}, 1e9f);
  // Two configs: a perf job of TestFaultSolver (its only config spins) and a find job of the
  // naive forward solver each.
  auto session = testing::LoadCpuWorkload(db(), *registry, testing::SmallDriverLines(2), "hang",
                                          {"TestFaultSolver", "ConvDirectNaiveConvFwd"}, {"perf", "find"});
  REQUIRE(session.ok());
  // find jobs for both solvers, perf only for the tunable one.
  REQUIRE(CountRows(db(), "SELECT COUNT(*) FROM job") == 6);

  coordinator::CoordinatorOptions co;
  co.registry = registry.get();
  co.lease_seconds = 20;
  co.max_retries = 1;  // one kill fails the job (no retry loop in a test)
  co.reap_interval = absl::Milliseconds(300);
  co.empty_poll_interval = absl::Milliseconds(50);
  auto coord = coordinator::Coordinator::Create(db(), co);
  REQUIRE(coord.ok());
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  REQUIRE(server.ok());
  auto client = worker::MakeGrpcClient({(*server)->address(), ""});

  worker::WorkerOptions wo;
  wo.host = "hang";
  wo.backend = "cpu";
  wo.registry = registry.get();
  wo.executor_argv = {executor_bin};
  wo.eval_deadline = absl::Seconds(3);
  wo.tuning.launch_timeout = absl::Seconds(120);  // the supervisor's deadline comes first
  wo.tuning.repetitions = 2;
  wo.lease_wait = absl::Milliseconds(500);
  worker::Worker w(*client, wo);
  absl::Status run_status;
  std::thread t([&] { run_status = w.Run(); });
  const bool finished = WaitUntil(90, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
  w.RequestStop();
  t.join();
  CHECK(run_status.ok());
  REQUIRE(finished);
  // Every TestFaultSolver job (perf and find, 2 configs: 4) hung, was killed and failed with why.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job j JOIN solver s ON s.id = j.solver_id "
                        "WHERE s.name = 'TestFaultSolver' AND j.state = 'failed' "
                        "AND j.error LIKE '%timeout after 3 s (executor killed)%'") == 4);
  // The naive solver's find jobs, evaluated by restarted executors, completed.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job j JOIN solver s ON s.id = j.solver_id "
                        "WHERE s.name = 'ConvDirectNaiveConvFwd' AND j.state = 'evaluated'") == 2);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM find_result WHERE verified") == 2);
  const worker::WorkerStats s = w.stats();
  CHECK(s.executor_kills == 4);
  CHECK(s.evaluated == 2);
  CHECK(s.eval_failed == 4);
  (*server)->Shutdown();
}

}  // namespace
}  // namespace tuna
