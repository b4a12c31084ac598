// Coordinator restarts and outages cost nothing (issue 15 parts 2 and 3): a `tuna coordinator`
// PROCESS serving two `tuna worker` processes (compile + eval each, CPU backend) is killed with
// SIGKILL or stopped with SIGTERM while the workers hold leases, four times, for less and for
// more than the lease (5 s), and started again on the same port. With --max-retries 1 every
// charged expiry would fail a job, so the run proves: every job evaluated once, none failed,
// no retry charged, no result doubled or lost, no lease left, no report given up. It prints the
// counts and how long the workers took to renew again after each restart.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "schema/embedded/mariadb_server.h"
#include "tests/chaos/chaos_util.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using testing::CountRows;

struct Outage {
  int signal;
  int seconds;
};

TEST_CASE_METHOD(testing::MariadbTest, "coordinator kills and restarts cost no job and no retry",
                 "[mariadb][chaos]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  auto session = testing::LoadCpuWorkload(db(), solver::SolverRegistry::Builtin(),
                                          testing::SmallDriverLines(24), "chaos",
                                          {"TunaCpuGemmConv"}, {"perf", "find"});
  REQUIRE(session.ok());
  const int64_t jobs = CountRows(db(), "SELECT COUNT(*) FROM job");
  REQUIRE(jobs == 48);
  auto server = testing::SharedMariadb();
  REQUIRE(server.ok());
  const std::string url = testing::DbUrl(connection(), (*server)->data_dir() + "/tuna-client.cnf");
  auto port = schema::PickFreeLoopbackPort();
  REQUIRE(port.ok());
  const std::string addr = "127.0.0.1:" + std::to_string(*port);
  const std::string out = testing::TestOutputDir();
  const std::string coord_log = out + "/coordinator.log";
  const std::vector<std::string> coord_argv = {
      tuna_bin, "--db", url, "coordinator", "--listen", addr, "--lease-seconds", "5",
      "--max-retries", "1", "--restart-grace", "10"};
  int starts = 0;
  auto start_coordinator = [&] {
    pid_t pid = testing::Spawn(coord_argv, coord_log);
    REQUIRE(pid > 0);
    ++starts;
    REQUIRE(testing::WaitForLines(coord_log, "coordinator ready", starts, 60));
    return pid;
  };
  pid_t coord = start_coordinator();
  std::vector<pid_t> workers;
  std::vector<std::string> worker_logs;
  for (const char* host : {"w1", "w2"}) {
    worker_logs.push_back(out + "/worker-" + host + ".log");
    workers.push_back(testing::Spawn(
        {tuna_bin, "worker", "--coordinator", addr, "--backend", "cpu", "--host", host,
         "--budget", "2", "--repetitions", "2", "--lease-batch", "3", "--compile-jobs", "1"},
        worker_logs.back()));
    REQUIRE(workers.back() > 0);
  }

  const std::vector<Outage> plan = {{SIGKILL, 1}, {SIGKILL, 8}, {SIGTERM, 8}, {SIGKILL, 12}};
  int outages = 0;
  int64_t leased_at_stop = 0;
  for (const Outage& o : plan) {
    // Stop it while workers hold leases (and after some progress since the last restart).
    const int64_t done_before = CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'");
    testing::WaitUntil(60, [&] {
      return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'") >= done_before + 2 ||
             CountRows(db(), "SELECT COUNT(*) FROM job WHERE state <> 'evaluated'") == 0;
    });
    if (!testing::WaitUntil(60, [&] {
          return CountRows(db(), "SELECT COUNT(*) FROM job WHERE lease_owner IS NOT NULL") > 0 ||
                 CountRows(db(), "SELECT COUNT(*) FROM job WHERE state <> 'evaluated'") == 0;
        }) ||
        CountRows(db(), "SELECT COUNT(*) FROM job WHERE state <> 'evaluated'") == 0) {
      break;  // the work ran out first
    }
    leased_at_stop += CountRows(db(), "SELECT COUNT(*) FROM job WHERE lease_owner IS NOT NULL");
    REQUIRE(kill(coord, o.signal) == 0);
    const int status = testing::WaitFor(coord, 30);
    if (o.signal == SIGTERM) {
      CHECK(WIFEXITED(status));
      CHECK(WEXITSTATUS(status) == 0);
    }
    std::this_thread::sleep_for(std::chrono::seconds(o.seconds));
    coord = start_coordinator();
    ++outages;
  }
  const bool finished = testing::WaitUntil(300, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
  for (pid_t w : workers) kill(w, SIGTERM);
  for (pid_t w : workers) {
    const int st = testing::WaitFor(w, 60);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
  }
  kill(coord, SIGTERM);
  const int cs = testing::WaitFor(coord, 30);
  CHECK(WIFEXITED(cs));
  REQUIRE(finished);

  // How soon after each restart the workers renewed their leases again.
  const std::vector<double> up = testing::LineTimes(coord_log, "coordinator: listening on");
  std::string renew_delays;
  double worst = 0;
  for (const std::string& log : worker_logs) {
    const std::vector<double> renewed = testing::LineTimes(log, "leases renewed again");
    for (size_t k = 1; k < up.size(); ++k) {
      auto it = std::lower_bound(renewed.begin(), renewed.end(), up[k]);
      if (it == renewed.end() || (k + 1 < up.size() && *it > up[k + 1])) continue;
      worst = std::max(worst, *it - up[k]);
      renew_delays += " " + std::to_string(*it - up[k]).substr(0, 4);
    }
  }
  int lost = 0, given_up = 0, late_reports = 0;
  for (const std::string& log : worker_logs) {
    lost += testing::CountLines(log, ") lost");
    given_up += testing::CountLines(log, "report not accepted");
    late_reports += testing::CountLines(log, "report accepted after");
  }
  const testing::Invariants v = testing::CheckInvariants(db());
  std::printf("coordinator restarts: %d outages (%d with leases held: %lld), %s; worker leases "
              "lost %d, reports given up %d, reports accepted after retries %d; renewed again "
              "after a restart in (s):%s (worst %.2f s)\n",
              outages, outages, static_cast<long long>(leased_at_stop), v.Summary().c_str(), lost,
              given_up, late_reports, renew_delays.c_str(), worst);
  CHECK(outages >= 3);
  CHECK(v.evaluated == jobs);
  CHECK(v.failed == 0);
  CHECK(v.retries == 0);
  CHECK(v.leased == 0);
  CHECK(v.results == jobs);
  CHECK(v.sampled_attempts == jobs);
  CHECK(v.doubled == 0);
  CHECK(given_up == 0);
}

}  // namespace
}  // namespace tuna
