// kill -9 of a worker mid-eval (issue 15 part 9): a `tuna coordinator` PROCESS serving two
// `tuna worker` processes (compile + eval each, CPU backend). Twice, worker w1 is killed with
// SIGKILL while it holds eval leases and started again under the same host name (what systemd
// does). The leases it died with expire after the lease (5 s) and go to a live worker; each is
// charged exactly one retry — a worker that vanishes is a fault the coordinator cannot tell from
// a job that kills its host — and nothing else is charged. Checks: every job evaluated once from
// one attempt's samples, one result each, none failed, no lease left, the retries charged are
// exactly the dead worker's leases (jobs claimed for its long-poll after it died are handed
// back uncharged, coordinator/service.cc). Prints the counts.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <set>
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

// The leases held by owners LIKE `owner`, as "job:attempt:owner".
std::set<std::string> LeasesOf(schema::Database& db, const std::string& owner) {
  auto rows =
      db.Query("SELECT id, attempt, lease_owner FROM job WHERE lease_owner LIKE ?", {owner});
  REQUIRE(rows.ok());
  std::set<std::string> out;
  for (const auto& row : *rows) {
    out.insert(std::to_string(row.Int(0)) + ":" + std::to_string(row.Int(1)) + ":" + row.String(2));
  }
  return out;
}

TEST_CASE_METHOD(testing::MariadbTest, "a worker killed mid-eval loses and doubles nothing",
                 "[mariadb][chaos]") {
  const testing::ChaosStage stage = testing::SetUpChaos(db(), connection(), 20, "workerkill");
  const std::string coord_log = stage.out + "/workerkill-coordinator.log";
  pid_t coord = testing::StartCoordinator(stage, {"--lease-seconds", "5", "--max-retries", "3"},
                                          coord_log);
  auto start_worker = [&](const std::string& host) {
    const pid_t pid = testing::Spawn(testing::WorkerArgv(stage, host, {"--lease-batch", "3"}),
                                     stage.out + "/workerkill-" + host + ".log");
    REQUIRE(pid > 0);
    return pid;
  };
  pid_t w1 = start_worker("w1");
  const pid_t w2 = start_worker("w2");

  const int kKills = 2;
  std::set<std::string> held_leases;  // a lease may still be held at the next kill: counted once
  std::string held_ids = "0";
  int kills = 0;
  for (int k = 0; k < kKills; ++k) {
    // Some progress first, then a moment when w1 is evaluating (holds eval leases).
    const int64_t before = Evaluated(db());
    testing::WaitUntil(60, [&] {
      return Evaluated(db()) >= before + 3 || Evaluated(db()) == stage.jobs;
    });
    const bool evaluating = testing::WaitUntil(60, [&] {
      return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'eval_start' AND "
                             "lease_owner LIKE 'w1/%'") > 0;
    });
    if (!evaluating) break;  // the work ran out first
    REQUIRE(kill(w1, SIGKILL) == 0);
    CHECK(WIFSIGNALED(testing::WaitFor(w1, 10)));
    ++kills;
    // Reports it had sent before dying are committed within a moment; what it holds then is
    // lost. Two looks 0.5 s apart: a claim for its dead long-poll, handed back at once, is
    // in at most one of them.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::set<std::string> first = LeasesOf(db(), "w1/%");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    for (const std::string& lease : LeasesOf(db(), "w1/%")) {
      if (first.count(lease) == 0) continue;
      held_leases.insert(lease);
      held_ids += "," + lease.substr(0, lease.find(':'));
    }
    w1 = start_worker("w1");
  }
  const bool finished = testing::WaitAllJobsDone(db(), 180);
  for (int st : testing::StopAll({w1, w2}, 60)) CHECK(testing::ExitCode(st) == 0);
  CHECK(testing::ExitCode(testing::StopAll({coord}, 30).front()) >= 0);
  REQUIRE(finished);

  const testing::Invariants v = testing::CheckInvariants(db());
  const int64_t held = static_cast<int64_t>(held_leases.size());
  const int64_t charged_elsewhere = CountRows(
      db(), "SELECT COUNT(*) FROM job WHERE retries > 0 AND id NOT IN (" + held_ids + ")");
  const int64_t rerun = CountRows(
      db(), "SELECT COUNT(*) FROM job WHERE attempt >= 3 AND id IN (" + held_ids + ")");
  const int handed_back = testing::CountLines(coord_log, "the caller went away");
  std::printf("worker kill -9: %d kills, %lld leases held by the dead worker (%lld jobs re-run in "
              "a later attempt), %d claims for its dead long-poll handed back, %lld retries "
              "charged to other jobs; %s\n",
              kills, static_cast<long long>(held), static_cast<long long>(rerun), handed_back,
              static_cast<long long>(charged_elsewhere), v.Summary().c_str());
  CHECK(kills == kKills);
  CHECK(held >= kills);
  CHECK(charged_elsewhere == 0);
  testing::CheckNothingLost(v, stage.jobs, held);
  CHECK(v.sampled_attempts == stage.jobs);
}

}  // namespace
}  // namespace tuna
