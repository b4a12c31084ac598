// Token rotation (issue 15 part 6): a `tuna coordinator` PROCESS (--token-file, re-read every
// second; --lease-seconds 5 --max-retries 1) serves a `tuna worker` process holding the token.
// While it holds leases the coordinator's token file is rewritten with a new token: within 10 s
// the worker logs that its token is refused, turns NOT_SERVING and stops (exit status 1); a worker
// started with the new token finishes the queue. The leases the refused worker held are requeued
// without a retry charged. Checks the invariants (every job evaluated once, none failed, no retry
// charged, nothing doubled or left leased) and prints the counts and the delays.
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>

#include "catch2/catch.hpp"
#include "tests/chaos/chaos_util.h"
#include "tests/distributed/health_client.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna {
namespace {

using testing::CountRows;

void WriteToken(const std::string& path, const std::string& token) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << token << "\n";
  }
  chmod(tmp.c_str(), 0600);
  std::rename(tmp.c_str(), path.c_str());
}

double Now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

TEST_CASE_METHOD(testing::MariadbTest, "a rotated token stops its workers, costs no job",
                 "[mariadb][chaos]") {
  const testing::ChaosStage stage = testing::SetUpChaos(db(), connection(), 8, "rotation");
  const std::string coord_log = stage.out + "/rotation-coordinator.log";
  const std::string old_log = stage.out + "/rotation-old-worker.log";
  const std::string new_log = stage.out + "/rotation-new-worker.log";
  const std::string coord_token = stage.out + "/coordinator.token";
  const std::string old_token = stage.out + "/old.token";
  const std::string new_token = stage.out + "/new.token";
  WriteToken(coord_token, "token-one");
  WriteToken(old_token, "token-one");
  WriteToken(new_token, "token-two");

  pid_t coord = testing::StartCoordinator(
      stage, {"--token-file", coord_token, "--lease-seconds", "5", "--max-retries", "1"}, coord_log);
  pid_t old_worker = testing::Spawn(
      testing::WorkerArgv(stage, "old", {"--lease-batch", "2", "--token-file", old_token,
                                         "--health", "127.0.0.1:0"}),
      old_log);
  REQUIRE(old_worker > 0);
  const std::string health = testing::WorkerHealthAddress(old_log, 60);
  REQUIRE(!health.empty());
  REQUIRE(testing::WaitUntil(120, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'") >= 3 &&
           CountRows(db(), "SELECT COUNT(*) FROM job WHERE lease_owner IS NOT NULL") > 0;
  }));
  const int64_t held = CountRows(db(), "SELECT COUNT(*) FROM job WHERE lease_owner IS NOT NULL");

  // Rotate: the coordinator re-reads its file within a second; the old token is refused.
  const double rotated = Now();
  WriteToken(coord_token, "token-two");
  const bool not_serving = testing::WaitUntil(10, [&] {
    auto h = testing::CheckHealth(health, "");
    return !h.ok() || *h == "NOT_SERVING";
  });
  const double not_serving_after = Now() - rotated;
  const int old_status = testing::WaitFor(old_worker, 60);
  const std::vector<double> refused = testing::LineTimes(old_log, "refuses this worker's token");
  const double refused_after = refused.empty() ? -1 : refused.front() - rotated;

  pid_t new_worker = testing::Spawn(
      testing::WorkerArgv(stage, "new", {"--lease-batch", "2", "--token-file", new_token}), new_log);
  REQUIRE(new_worker > 0);
  const bool finished = testing::WaitAllJobsDone(db(), 240);
  const int new_status = testing::StopAll({new_worker}, 60).front();
  CHECK(testing::ExitCode(testing::StopAll({coord}, 30).front()) >= 0);
  REQUIRE(finished);

  const testing::Invariants v = testing::CheckInvariants(db());
  const int64_t handed_over = CountRows(db(), "SELECT COUNT(*) FROM job WHERE eval_worker LIKE 'new/%'");
  std::printf("token rotation: %s; %lld leases held at the rotation; the old worker logged the "
              "refusal after %.2f s, was NOT_SERVING (or gone) after %.2f s, exit status %d; the "
              "new worker evaluated %lld jobs\n",
              v.Summary().c_str(), static_cast<long long>(held), refused_after, not_serving_after,
              testing::ExitCode(old_status), static_cast<long long>(handed_over));
  CHECK(not_serving);
  CHECK(refused_after >= 0);
  CHECK(refused_after < 10);
  CHECK(testing::ExitCode(old_status) == 1);
  CHECK(testing::ExitCode(new_status) == 0);
  CHECK(testing::CountLines(coord_log, "a token file changed") == 1);
  testing::CheckNothingLost(v, stage.jobs);
}

}  // namespace
}  // namespace tuna
