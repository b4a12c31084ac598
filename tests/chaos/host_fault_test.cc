// Hosts, not jobs, take the blame for host faults (issue 15 part 5): a `tuna coordinator` PROCESS
// (--max-retries 1, so a single charged failure would fail a job; --max-host-faults 2) with a
// compile-only `tuna worker` and an eval-only `tuna worker` whose CPU device cannot be opened
// (TUNA_CPU_DEVICE_FAULT_FILE exists). The broken host fails the jobs it leases with a host
// fault: each is handed back uncharged, its lane backs off and its health says NOT_SERVING, and
// after two in a row the coordinator benches it. Then the device is "repaired" (the file is
// removed): after the bench the same worker evaluates everything and reports SERVING again.
// Checks the invariants (every job evaluated once, none failed, no retry charged, nothing
// doubled or left leased) and prints the counts.
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/chaos/chaos_util.h"
#include "tests/distributed/health_client.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna {
namespace {

using testing::CountRows;

std::string Health(const std::string& addr) {
  auto s = testing::CheckHealth(addr, "");
  return s.ok() ? *s : s.status().ToString();
}

TEST_CASE_METHOD(testing::MariadbTest, "a host whose device fails is benched, not its jobs",
                 "[mariadb][chaos]") {
  const testing::ChaosStage stage = testing::SetUpChaos(db(), connection(), 8, "hostfault");
  const std::string coord_log = stage.out + "/hostfault-coordinator.log";
  const std::string good_log = stage.out + "/hostfault-compile.log";
  const std::string bad_log = stage.out + "/hostfault-eval.log";
  const std::string fault_file = stage.out + "/device-broken";
  std::ofstream(fault_file) << "broken\n";

  pid_t coord = testing::StartCoordinator(stage,
                                          {"--lease-seconds", "5", "--max-retries", "1",
                                           "--max-host-faults", "2", "--host-bench-seconds", "3"},
                                          coord_log);
  pid_t compiler = testing::Spawn(testing::WorkerArgv(stage, "good", {"--steps", "compile"}), good_log);
  REQUIRE(compiler > 0);
  REQUIRE(testing::WaitUntil(120, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'compiled'") >= 4;
  }));
  std::vector<std::string> broken_argv = {"/usr/bin/env", "TUNA_CPU_DEVICE_FAULT_FILE=" + fault_file};
  for (std::string& a : testing::WorkerArgv(stage, "broken",
                                            {"--steps", "eval", "--lease-batch", "2",
                                             "--device-backoff-max", "2", "--health", "127.0.0.1:0"})) {
    broken_argv.push_back(std::move(a));
  }
  pid_t evaluator = testing::Spawn(broken_argv, bad_log);
  REQUIRE(evaluator > 0);
  const std::string health = testing::WorkerHealthAddress(bad_log, 60);
  REQUIRE(!health.empty());

  // The broken host: its failures are handed back, it backs off, says NOT_SERVING, is benched.
  REQUIRE(testing::WaitForLines(coord_log, "benched for 3 s", 1, 120));
  REQUIRE(testing::WaitForLines(bad_log, "backing off", 2, 60));
  const bool not_serving = testing::WaitUntil(30, [&] { return Health(health) == "NOT_SERVING"; });
  CHECK(not_serving);
  CHECK(testing::WaitForLines(bad_log, "refuses eval leases", 1, 30));
  const int64_t failed_while_broken = CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'failed'");
  const int64_t charged_while_broken =
      CountRows(db(), "SELECT CAST(COALESCE(SUM(retries), 0) AS SIGNED) FROM job");
  const int64_t handed_back = CountRows(db(), "SELECT COUNT(*) FROM job WHERE error LIKE 'host fault on broken/%'");

  // Repaired: after the bench the same host evaluates everything and is SERVING again.
  std::remove(fault_file.c_str());
  const bool finished = testing::WaitAllJobsDone(db(), 240);
  const bool serving_again = testing::WaitUntil(30, [&] { return Health(health) == "SERVING"; });
  for (int st : testing::StopAll({compiler, evaluator}, 60)) CHECK(testing::ExitCode(st) == 0);
  CHECK(testing::ExitCode(testing::StopAll({coord}, 30).front()) >= 0);
  REQUIRE(finished);

  const testing::Invariants v = testing::CheckInvariants(db());
  const int host_faults = testing::CountLines(bad_log, "cannot open the device");
  const int backoffs = testing::CountLines(bad_log, "backing off");
  const int benches = testing::CountLines(coord_log, "benched for 3 s");
  std::printf("host fault: %s; while broken: %d log lines naming the device fault, %lld jobs handed back "
              "uncharged (last error), %d backoffs, benched %d time(s), %lld failed, %lld retries "
              "charged; NOT_SERVING seen %d, SERVING again %d\n",
              v.Summary().c_str(), host_faults, static_cast<long long>(handed_back), backoffs,
              benches, static_cast<long long>(failed_while_broken),
              static_cast<long long>(charged_while_broken), not_serving, serving_again);
  CHECK(serving_again);
  CHECK(testing::CountLines(bad_log, "works again") >= 1);
  CHECK(host_faults >= 2);
  CHECK(benches >= 1);
  CHECK(failed_while_broken == 0);
  CHECK(charged_while_broken == 0);
  testing::CheckNothingLost(v, stage.jobs);
  CHECK(v.sampled_attempts == stage.jobs);
}

}  // namespace
}  // namespace tuna
