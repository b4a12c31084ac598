// Token rotation (issue 15 part 6): a `tuna coordinator` PROCESS (--token-file, re-read every
// second; --lease-seconds 5 --max-retries 1) serves a `tuna worker` process holding the token.
// While it holds leases the coordinator's token file is rewritten with a new token: within 10 s
// the worker logs that its token is refused, turns NOT_SERVING and stops (exit status 1); a worker
// started with the new token finishes the queue. The leases the refused worker held are requeued
// without a retry charged. Checks the invariants (every job evaluated once, none failed, no retry
// charged, nothing doubled or left leased) and prints the counts and the delays.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>
#include <string>

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
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  auto session = testing::LoadCpuWorkload(db(), solver::SolverRegistry::Builtin(),
                                          testing::SmallDriverLines(8), "rotation",
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
  const std::string coord_log = out + "/rotation-coordinator.log";
  const std::string old_log = out + "/rotation-old-worker.log";
  const std::string new_log = out + "/rotation-new-worker.log";
  const std::string coord_token = out + "/coordinator.token";
  const std::string old_token = out + "/old.token";
  const std::string new_token = out + "/new.token";
  WriteToken(coord_token, "token-one");
  WriteToken(old_token, "token-one");
  WriteToken(new_token, "token-two");

  pid_t coord = testing::Spawn({tuna_bin, "--db", url, "coordinator", "--listen", addr,
                                "--token-file", coord_token, "--lease-seconds", "5",
                                "--max-retries", "1"},
                               coord_log);
  REQUIRE(coord > 0);
  REQUIRE(testing::WaitForLines(coord_log, "coordinator ready", 1, 60));
  const std::vector<std::string> worker = {tuna_bin, "worker", "--coordinator", addr, "--backend",
                                           "cpu", "--budget", "2", "--repetitions", "2",
                                           "--lease-batch", "2", "--compile-jobs", "1"};
  std::vector<std::string> old_argv = worker;
  for (const char* a : {"--token-file", old_token.c_str(), "--host", "old", "--health", "127.0.0.1:0"}) {
    old_argv.push_back(a);
  }
  pid_t old_worker = testing::Spawn(old_argv, old_log);
  REQUIRE(old_worker > 0);
  const std::regex port_line(R"(health service listening on 127\.0\.0\.1:0 \(port (\d+)\))");
  std::string health;
  REQUIRE(testing::WaitUntil(60, [&] {
    std::smatch m;
    const std::string text = testing::ReadWholeFile(old_log);
    if (!std::regex_search(text, m, port_line)) return false;
    health = "127.0.0.1:" + m[1].str();
    return true;
  }));
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

  std::vector<std::string> new_argv = worker;
  for (const char* a : {"--token-file", new_token.c_str(), "--host", "new"}) new_argv.push_back(a);
  pid_t new_worker = testing::Spawn(new_argv, new_log);
  REQUIRE(new_worker > 0);
  const bool finished = testing::WaitUntil(240, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
  kill(new_worker, SIGTERM);
  const int new_status = testing::WaitFor(new_worker, 60);
  kill(coord, SIGTERM);
  CHECK(WIFEXITED(testing::WaitFor(coord, 30)));
  REQUIRE(finished);

  const testing::Invariants v = testing::CheckInvariants(db());
  const int64_t handed_over = CountRows(db(), "SELECT COUNT(*) FROM job WHERE eval_worker LIKE 'new/%'");
  std::printf("token rotation: %s; %lld leases held at the rotation; the old worker logged the "
              "refusal after %.2f s, was NOT_SERVING (or gone) after %.2f s, exit status %d; the "
              "new worker evaluated %lld jobs\n",
              v.Summary().c_str(), static_cast<long long>(held), refused_after, not_serving_after,
              WIFEXITED(old_status) ? WEXITSTATUS(old_status) : -1,
              static_cast<long long>(handed_over));
  CHECK(not_serving);
  CHECK(refused_after >= 0);
  CHECK(refused_after < 10);
  CHECK(WIFEXITED(old_status));
  CHECK(WEXITSTATUS(old_status) == 1);
  CHECK(WIFEXITED(new_status));
  CHECK(WEXITSTATUS(new_status) == 0);
  CHECK(testing::CountLines(coord_log, "a token file changed") == 1);
  CHECK(v.evaluated == jobs);
  CHECK(v.failed == 0);
  CHECK(v.retries == 0);
  CHECK(v.leased == 0);
  CHECK(v.results == jobs);
  CHECK(v.doubled == 0);
}

}  // namespace
}  // namespace tuna
