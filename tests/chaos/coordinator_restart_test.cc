// Coordinator restarts and outages cost nothing (issue 15 parts 2 and 3): a `tuna coordinator`
// PROCESS serving two `tuna worker` processes (compile + eval each, CPU backend) is killed with
// SIGKILL or stopped with SIGTERM while the workers hold leases, six times: three outages
// shorter than the lease (5 s) and three longer, and started again on the same port. With --max-retries 1 every
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
#include "tests/chaos/chaos_util.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna {
namespace {

using testing::CountRows;

struct Outage {
  int signal;
  int seconds;
};

TEST_CASE_METHOD(testing::MariadbTest, "coordinator kills and restarts cost no job and no retry",
                 "[mariadb][chaos]") {
  const testing::ChaosStage stage = testing::SetUpChaos(db(), connection(), 28, "chaos");
  const std::string coord_log = stage.out + "/coordinator.log";
  const int kLeaseSeconds = 5;
  const std::vector<std::string> coord_flags = {"--lease-seconds", std::to_string(kLeaseSeconds),
                                                "--max-retries", "1", "--restart-grace", "10"};
  int starts = 0;
  auto start_coordinator = [&] { return testing::StartCoordinator(stage, coord_flags, coord_log, ++starts); };
  pid_t coord = start_coordinator();
  std::vector<pid_t> workers;
  std::vector<std::string> worker_logs;
  for (const char* host : {"w1", "w2"}) {
    worker_logs.push_back(stage.out + "/worker-" + host + ".log");
    workers.push_back(
        testing::Spawn(testing::WorkerArgv(stage, host, {"--lease-batch", "3"}), worker_logs.back()));
    REQUIRE(workers.back() > 0);
  }

  // Three shorter than the lease, three longer (one of each kind stopped with SIGTERM).
  const std::vector<Outage> plan = {{SIGKILL, 1}, {SIGTERM, 2}, {SIGKILL, 3},
                                    {SIGKILL, 6}, {SIGTERM, 6}, {SIGKILL, 8}};
  int shorter = 0, longer = 0;
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
    if (o.signal == SIGTERM) CHECK(testing::ExitCode(status) == 0);
    std::this_thread::sleep_for(std::chrono::seconds(o.seconds));
    coord = start_coordinator();
    ++outages;
    (o.seconds < kLeaseSeconds ? shorter : longer) += 1;
  }
  const bool finished = testing::WaitAllJobsDone(db(), 300);
  for (int st : testing::StopAll(workers, 60)) CHECK(testing::ExitCode(st) == 0);
  CHECK(testing::ExitCode(testing::StopAll({coord}, 30).front()) >= 0);
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
  std::printf("coordinator restarts: %d outages (%d shorter than the lease, %d longer; all with "
              "leases held: %lld), %s; worker leases lost %d, reports given up %d, reports "
              "accepted after retries %d; renewed again after a restart in (s):%s (worst %.2f s)\n",
              outages, shorter, longer, static_cast<long long>(leased_at_stop),
              v.Summary().c_str(), lost, given_up, late_reports, renew_delays.c_str(), worst);
  CHECK(shorter == 3);
  CHECK(longer == 3);
  testing::CheckNothingLost(v, stage.jobs);
  CHECK(v.sampled_attempts == stage.jobs);
  CHECK(given_up == 0);
}

}  // namespace
}  // namespace tuna
