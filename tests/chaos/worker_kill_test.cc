// kill -9 of a worker mid-eval (issue 15 part 9): a `tuna coordinator` PROCESS serving two
// `tuna worker` processes (compile + eval each, CPU backend). Twice, worker w1 is killed with
// SIGKILL while it evaluates (an eval lease of its in the store while its executor computes) and
// started again under the same host name (what systemd does). The leases it died with expire
// after the lease (5 s) and go to a live worker; each is charged exactly one retry — a worker
// that vanishes is a fault the coordinator cannot tell from a job that kills its host — and
// nothing else is charged. Checks: each counted kill left an eval lease behind (the worker died
// mid-eval, not just after its last report), every job evaluated once from one attempt's
// samples, one result each, none failed, no lease left, the retries charged are exactly the dead
// worker's leases (jobs claimed for its long-poll after it died are handed back uncharged,
// coordinator/service.cc). Prints the counts.
//
// The moment is an observed event, polled every 10 ms, not a timing guess: the jobs are
// MediumDriverLines (an eval takes 30-500 ms). With SmallDriverLines' few-ms evals and a 100 ms
// poll the window was often missed, and once Lease got faster (730b45d) the work ran out with 0
// or 1 kills in 2 of 5 runs. A kill whose eval lease was reported in the instant before the
// signal still counts its leases (retries), but not as a mid-eval kill, and the test kills again
// (at most kMaxKills in all).
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
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

// The leases held by owners LIKE `owner`: "job:attempt:owner" -> the job's state.
std::map<std::string, std::string> LeasesOf(schema::Database& db, const std::string& owner) {
  auto rows = db.Query("SELECT id, attempt, lease_owner, state FROM job WHERE lease_owner LIKE ?",
                       {owner});
  REQUIRE(rows.ok());
  std::map<std::string, std::string> out;
  for (const auto& row : *rows) {
    out[std::to_string(row.Int(0)) + ":" + std::to_string(row.Int(1)) + ":" + row.String(2)] =
        row.String(3);
  }
  return out;
}

TEST_CASE_METHOD(testing::MariadbTest, "a worker killed mid-eval loses and doubles nothing",
                 "[mariadb][chaos]") {
  const testing::ChaosStage stage = testing::SetUpChaos(db(), connection(), 20, "workerkill",
                                                        testing::MediumDriverLines(20));
  const int kKills = 2;               // kills of w1 mid-eval
  const int kMaxKills = kKills + 3;   // kills in all (one may just miss the eval: not counted)
  const std::string coord_log = stage.out + "/workerkill-coordinator.log";
  // --max-retries above kMaxKills: no job may fail, however many of the kills held it.
  pid_t coord = testing::StartCoordinator(
      stage, {"--lease-seconds", "5", "--max-retries", std::to_string(kMaxKills + 1)}, coord_log);
  auto start_worker = [&](const std::string& host) {
    const pid_t pid = testing::Spawn(testing::WorkerArgv(stage, host, {"--lease-batch", "3"}),
                                     stage.out + "/workerkill-" + host + ".log");
    REQUIRE(pid > 0);
    return pid;
  };
  pid_t w1 = start_worker("w1");
  const pid_t w2 = start_worker("w2");

  std::set<std::string> held_leases;  // a lease may still be held at the next kill: counted once
  std::string held_ids = "0";
  int kills = 0, attempts = 0, eval_leases_lost = 0;
  std::string kill_points;  // "evaluated N/M" at each kill, for the printout
  while (kills < kKills && attempts < kMaxKills) {
    // Some progress first, then a moment when w1 is evaluating: an eval lease of its in the
    // store while its executor child is on a CPU (running or runnable).
    const int64_t before = Evaluated(db());
    testing::WaitUntil(60, [&] {
      return Evaluated(db()) >= before + 3 || Evaluated(db()) == stage.jobs;
    });
    // Every 10 ms: 100 ms is coarse for an eval.
    const bool evaluating = testing::WaitUntil(
        60,
        [&] {
          const std::vector<pid_t> execs = testing::ChildPids(w1, "--executor");
          if (execs.size() != 1 || testing::ProcessState(execs.front()) != 'R') return false;
          return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'eval_start' AND "
                                 "lease_owner LIKE 'w1/%'") > 0;
        },
        std::chrono::milliseconds(10));
    if (!evaluating) break;  // the work ran out first (fails below)
    REQUIRE(kill(w1, SIGKILL) == 0);
    CHECK(WIFSIGNALED(testing::WaitFor(w1, 10)));
    ++attempts;
    kill_points += " " + std::to_string(Evaluated(db())) + "/" + std::to_string(stage.jobs);
    // Reports it had sent before dying are committed within a moment; what it holds then is
    // lost. Two looks 0.5 s apart: a claim for its dead long-poll, handed back at once, is
    // in at most one of them.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const std::map<std::string, std::string> first = LeasesOf(db(), "w1/%");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    int eval_held = 0;
    for (const auto& [lease, state] : LeasesOf(db(), "w1/%")) {
      // Held in both looks, and not already by an earlier kill's dead worker (not expired yet).
      if (first.count(lease) == 0 || !held_leases.insert(lease).second) continue;
      held_ids += "," + lease.substr(0, lease.find(':'));
      eval_held += state == "eval_start";
    }
    // Mid-eval: it died holding an eval lease (else its last eval was reported just before).
    if (eval_held > 0) ++kills;
    eval_leases_lost += eval_held;
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
  std::printf("worker kill -9: %d kills mid-eval of %d (at evaluated%s), %lld leases held by the "
              "dead worker (%d eval leases; %lld jobs re-run in a later attempt), %d claims for "
              "its dead long-poll handed back, %lld retries charged to other jobs; %s\n",
              kills, attempts, kill_points.c_str(), static_cast<long long>(held),
              eval_leases_lost, static_cast<long long>(rerun), handed_back,
              static_cast<long long>(charged_elsewhere), v.Summary().c_str());
  CHECK(kills == kKills);
  CHECK(eval_leases_lost >= kills);
  CHECK(held >= eval_leases_lost);
  CHECK(charged_elsewhere == 0);
  testing::CheckNothingLost(v, stage.jobs, held);
  CHECK(v.sampled_attempts == stage.jobs);
}

}  // namespace
}  // namespace tuna
