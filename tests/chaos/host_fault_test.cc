// Hosts, not jobs, take the blame for host faults (issue 15 part 5): a `tuna coordinator` PROCESS
// (--max-retries 1, so a single charged failure would fail a job; --max-host-faults 2) with a
// compile-only `tuna worker` and an eval-only `tuna worker` whose CPU device cannot be opened
// (TUNA_CPU_DEVICE_FAULT_FILE exists). The broken host fails the jobs it leases with a host
// fault: each is handed back uncharged, its lane backs off and its health says NOT_SERVING, and
// after two in a row the coordinator benches it. Then the device is "repaired" (the file is
// removed): after the bench the same worker evaluates everything and reports SERVING again.
// Checks the invariants (every job evaluated once, none failed, no retry charged, nothing
// doubled or left leased) and prints the counts.
#include <signal.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "schema/embedded/mariadb_server.h"
#include "tests/chaos/chaos_util.h"
#include "tests/distributed/health_client.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using testing::CountRows;

std::string Health(const std::string& addr) {
  auto s = testing::CheckHealth(addr, "");
  return s.ok() ? *s : s.status().ToString();
}

TEST_CASE_METHOD(testing::MariadbTest, "a host whose device fails is benched, not its jobs",
                 "[mariadb][chaos]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  auto session = testing::LoadCpuWorkload(db(), solver::SolverRegistry::Builtin(),
                                          testing::SmallDriverLines(8), "hostfault",
                                          {"TunaCpuGemmConv"}, {"perf", "find"});
  REQUIRE(session.ok());
  const int64_t jobs = CountRows(db(), "SELECT COUNT(*) FROM job");
  REQUIRE(jobs == 16);
  auto server = testing::SharedMariadb();
  REQUIRE(server.ok());
  const std::string url = testing::DbUrl(connection(), (*server)->data_dir() + "/tuna-client.cnf");
  auto port = schema::PickFreeLoopbackPort();
  REQUIRE(port.ok());
  const std::string addr = "127.0.0.1:" + std::to_string(*port);
  const std::string out = testing::TestOutputDir();
  const std::string coord_log = out + "/hostfault-coordinator.log";
  const std::string good_log = out + "/hostfault-compile.log";
  const std::string bad_log = out + "/hostfault-eval.log";
  const std::string fault_file = out + "/device-broken";
  std::ofstream(fault_file) << "broken\n";

  pid_t coord = testing::Spawn({tuna_bin, "--db", url, "coordinator", "--listen", addr,
                                "--lease-seconds", "5", "--max-retries", "1",
                                "--max-host-faults", "2", "--host-bench-seconds", "3"},
                               coord_log);
  REQUIRE(coord > 0);
  REQUIRE(testing::WaitForLines(coord_log, "coordinator ready", 1, 60));
  pid_t compiler = testing::Spawn({tuna_bin, "worker", "--coordinator", addr, "--backend", "cpu",
                                   "--host", "good", "--steps", "compile", "--budget", "2",
                                   "--repetitions", "2", "--compile-jobs", "1"},
                                  good_log);
  REQUIRE(compiler > 0);
  REQUIRE(testing::WaitUntil(120, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'compiled'") >= 4;
  }));
  pid_t evaluator = testing::Spawn(
      {"/usr/bin/env", "TUNA_CPU_DEVICE_FAULT_FILE=" + fault_file, tuna_bin, "worker",
       "--coordinator", addr, "--backend", "cpu", "--host", "broken", "--steps", "eval",
       "--budget", "2", "--repetitions", "2", "--lease-batch", "2", "--device-backoff-max", "2",
       "--health", "127.0.0.1:0"},
      bad_log);
  REQUIRE(evaluator > 0);
  const std::regex port_line(R"(health service listening on 127\.0\.0\.1:0 \(port (\d+)\))");
  std::string health;
  REQUIRE(testing::WaitUntil(60, [&] {
    std::smatch m;
    const std::string text = testing::ReadWholeFile(bad_log);
    if (!std::regex_search(text, m, port_line)) return false;
    health = "127.0.0.1:" + m[1].str();
    return true;
  }));

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
  const bool finished = testing::WaitUntil(240, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
  const bool serving_again = testing::WaitUntil(30, [&] { return Health(health) == "SERVING"; });
  for (pid_t w : {compiler, evaluator}) kill(w, SIGTERM);
  for (pid_t w : {compiler, evaluator}) {
    const int st = testing::WaitFor(w, 60);
    CHECK(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 0);
  }
  kill(coord, SIGTERM);
  CHECK(WIFEXITED(testing::WaitFor(coord, 30)));
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
  CHECK(v.evaluated == jobs);
  CHECK(v.failed == 0);
  CHECK(v.retries == 0);
  CHECK(v.leased == 0);
  CHECK(v.results == jobs);
  CHECK(v.sampled_attempts == jobs);
  CHECK(v.doubled == 0);
}

}  // namespace
}  // namespace tuna
