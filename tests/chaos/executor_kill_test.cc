// kill -9 of an executor (issue 15 part 9): a `tuna coordinator` PROCESS and one `tuna worker`
// process (compile + eval, CPU backend, one executor child); six times, while the worker holds
// eval leases, its executor child is killed with SIGKILL (when it is seen running, i.e. mid-step,
// where it can be). The worker reports the interrupted step as a crash (charged to its job: a
// crash may be the kernel's fault, quarantine counts it), starts a new executor and goes on.
// --max-retries 7 and --quarantine-kills 7 are above the number of kills, so no job may fail.
// Checks: every job evaluated from one attempt's samples, one result each, none failed, no lease
// left, exactly one retry charged per crash the worker logged, the worker still running. Prints
// the counts.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <sstream>
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

int64_t Evaluated(schema::Database& db) {
  return CountRows(db, "SELECT COUNT(*) FROM job WHERE state = 'evaluated'");
}

TEST_CASE_METHOD(testing::MariadbTest, "executors killed mid-eval lose and double nothing",
                 "[mariadb][chaos]") {
  const testing::ChaosStage stage = testing::SetUpChaos(db(), connection(), 20, "execkill");
  const std::string coord_log = stage.out + "/execkill-coordinator.log";
  const std::string worker_log = stage.out + "/execkill-worker.log";
  const pid_t coord = testing::StartCoordinator(
      stage, {"--lease-seconds", "5", "--max-retries", "7", "--quarantine-kills", "7"}, coord_log);
  const pid_t worker = testing::Spawn(
      testing::WorkerArgv(stage, "w1", {"--lease-batch", "3", "--device-backoff-max", "1"}),
      worker_log);
  REQUIRE(worker > 0);

  const int kKills = 6;
  int kills = 0, seen_running = 0;
  for (int k = 0; k < kKills; ++k) {
    const int64_t before = Evaluated(db());
    testing::WaitUntil(60, [&] {
      return Evaluated(db()) >= before + 2 || Evaluated(db()) == stage.jobs;
    });
    // An executor while the worker holds eval leases, preferably seen running (computing).
    pid_t victim = -1;
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until && Evaluated(db()) < stage.jobs) {
      const std::vector<pid_t> execs = testing::ChildPids(worker, "--executor");
      if (execs.size() == 1 &&
          CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'eval_start'") > 0) {
        victim = execs.front();
        if (testing::ProcessState(victim) == 'R') break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (victim <= 0) break;  // the work ran out first
    seen_running += testing::ProcessState(victim) == 'R';
    if (kill(victim, SIGKILL) == 0) ++kills;
    // The worker reaps its child; wait until it is gone before looking for the next one.
    testing::WaitUntil(10, [&] { return testing::ProcessState(victim) == 0; });
  }
  const bool finished = testing::WaitAllJobsDone(db(), 180);
  const char state = testing::ProcessState(worker);
  const bool worker_alive = state != 0 && state != 'Z';
  for (int st : testing::StopAll({worker}, 60)) CHECK(testing::ExitCode(st) == 0);
  CHECK(testing::ExitCode(testing::StopAll({coord}, 30).front()) >= 0);
  REQUIRE(finished);

  const testing::Invariants v = testing::CheckInvariants(db());
  // "worker: job N: executor crashed: signal 9" once per interrupted step (the backoff lines
  // quote the reason too: not counted).
  int crashed = 0;
  std::istringstream lines(testing::ReadWholeFile(worker_log));
  for (std::string line; std::getline(lines, line);) {
    crashed += line.find("] worker: job ") != std::string::npos &&
               line.find(": executor crashed") != std::string::npos;
  }
  const int idle = testing::CountLines(worker_log, "ended while idle");
  const int backoffs = testing::CountLines(worker_log, "backing off");
  std::printf("executor kill -9: %d kills (%d seen running), %d mid-step (crash reported, "
              "charged), %d between steps (replaced, not charged), %d backoffs; %s\n",
              kills, seen_running, crashed, idle, backoffs, v.Summary().c_str());
  CHECK(worker_alive);
  CHECK(kills == kKills);
  CHECK(crashed + idle == kills);
  CHECK(crashed >= 1);
  testing::CheckNothingLost(v, stage.jobs, crashed);
  CHECK(v.sampled_attempts == stage.jobs);
}

}  // namespace
}  // namespace tuna
