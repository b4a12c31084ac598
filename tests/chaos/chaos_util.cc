#include "tests/chaos/chaos_util.h"

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "schema/embedded/mariadb_server.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/solver/registry.h"

namespace tuna::testing {

std::string DbUrl(const schema::ConnectionInfo& c, const std::string& option_file) {
  return absl::StrCat("mysql://", c.user, "@", c.host, ":", c.port, "/", c.database,
                      "?option_file=", option_file);
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

bool WaitForLines(const std::string& path, const std::string& needle, int n, int seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
  while (std::chrono::steady_clock::now() < until) {
    if (CountLines(path, needle) >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return CountLines(path, needle) >= n;
}

std::vector<double> LineTimes(const std::string& path, const std::string& needle) {
  std::vector<double> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.find(needle) == std::string::npos || line.size() < 25 || line[0] != '[') continue;
    std::tm tm{};
    int ms = 0;
    if (sscanf(line.c_str(), "[%d-%d-%d %d:%d:%d.%d]", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
               &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
      continue;
    }
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    tm.tm_isdst = -1;
    out.push_back(static_cast<double>(mktime(&tm)) + ms / 1000.0);
  }
  return out;
}

namespace {
int64_t Scalar(schema::Database& db, const std::string& sql, int64_t session_id) {
  schema::Params p;
  if (session_id != 0) p.push_back(session_id);
  auto r = db.Query(sql, p);
  if (!r.ok() || r->empty()) return -1;
  return (*r)[0].IsNull(0) ? 0 : (*r)[0].Int(0);
}
}  // namespace

Invariants CheckInvariants(schema::Database& db, int64_t session_id) {
  const std::string where = session_id != 0 ? " WHERE j.session_id = ?" : " WHERE 1";
  auto q = [&](const std::string& what, const std::string& extra = "") {
    return Scalar(db, absl::StrCat("SELECT ", what, " FROM job j", where, extra), session_id);
  };
  Invariants v;
  v.jobs = q("COUNT(*)");
  v.evaluated = q("COUNT(*)", " AND j.state = 'evaluated'");
  v.failed = q("COUNT(*)", " AND j.state = 'failed'");
  v.retries = q("CAST(COALESCE(SUM(j.retries), 0) AS SIGNED)");
  v.leased = q("COUNT(*)", " AND j.lease_owner IS NOT NULL");
  v.results =
      Scalar(db, absl::StrCat("SELECT COUNT(*) FROM perf_result r JOIN job j ON j.session_id = "
                              "r.session_id AND j.config_id = r.config_id AND j.solver_id = "
                              "r.solver_id AND j.kind = 'perf'", where),
             session_id) +
      Scalar(db, absl::StrCat("SELECT COUNT(*) FROM find_result r JOIN job j ON j.session_id = "
                              "r.session_id AND j.config_id = r.config_id AND j.solver_id = "
                              "r.solver_id AND j.kind = 'find'", where),
             session_id);
  v.sampled_attempts = Scalar(
      db, absl::StrCat("SELECT COUNT(DISTINCT s.job_id, s.attempt) FROM eval_sample s JOIN job j "
                       "ON j.id = s.job_id", where),
      session_id);
  v.doubled = Scalar(db, absl::StrCat("SELECT COUNT(*) FROM (SELECT s.job_id FROM eval_sample s "
                                      "JOIN job j ON j.id = s.job_id", where,
                                      " GROUP BY s.job_id HAVING COUNT(DISTINCT s.attempt) > 1) x"),
                     session_id);
  v.forgiven = q("COUNT(*)", " AND j.error LIKE '%not counted as a retry%'");
  return v;
}

std::string Invariants::Summary() const {
  return absl::StrCat("jobs ", jobs, ", evaluated ", evaluated, ", failed ", failed,
                      ", retries charged ", retries, ", leases left ", leased, ", results ",
                      results, ", sampled attempts ", sampled_attempts, ", doubled ", doubled,
                      ", forgiven expiries ", forgiven);
}

void CheckNothingLost(const Invariants& v, int64_t jobs, int64_t retries) {
  CHECK(v.evaluated == jobs);
  CHECK(v.failed == 0);
  CHECK(v.retries == retries);
  CHECK(v.leased == 0);
  CHECK(v.results == jobs);
  CHECK(v.doubled == 0);
}

std::string MediumDriverLines(int n) { return ConvDriverLines(n, 4, 64, 20, 28); }

ChaosStage SetUpChaos(schema::Database& db, const schema::ConnectionInfo& connection, int configs,
                      const std::string& label, const std::string& driver_lines) {
  ChaosStage s;
  s.tuna = Runfile("cli/tuna");
  REQUIRE(!s.tuna.empty());
  auto session = LoadCpuWorkload(db, solver::SolverRegistry::Builtin(),
                                 driver_lines.empty() ? SmallDriverLines(configs) : driver_lines,
                                 label, {"TunaCpuGemmConv"}, {"perf", "find"});
  REQUIRE(session.ok());
  s.jobs = CountRows(db, "SELECT COUNT(*) FROM job");
  REQUIRE(s.jobs == 2 * configs);
  auto server = SharedMariadb();
  REQUIRE(server.ok());
  s.db_url = DbUrl(connection, (*server)->data_dir() + "/tuna-client.cnf");
  auto port = schema::PickFreeLoopbackPort();
  REQUIRE(port.ok());
  // A loopback address of its own (127.B.C.D, random): scenarios restart the coordinator on the
  // same address, and while it is down another test's "free port" on 127.0.0.1 may be the same
  // number (coordinator_restart_test failed with "cannot listen" once, fresh-clone CI of 7b32c11).
  std::random_device rd;
  std::uniform_int_distribution<int> byte(1, 254);
  s.addr = absl::StrCat("127.", byte(rd), ".", byte(rd), ".", byte(rd), ":", *port);
  s.out = TestOutputDir();
  return s;
}

pid_t StartCoordinator(const ChaosStage& stage, const std::vector<std::string>& flags,
                       const std::string& log, int ready) {
  std::vector<std::string> argv = {stage.tuna, "--db", stage.db_url, "coordinator", "--listen",
                                   stage.addr};
  argv.insert(argv.end(), flags.begin(), flags.end());
  const pid_t pid = Spawn(argv, log);
  REQUIRE(pid > 0);
  REQUIRE(WaitForLines(log, "coordinator ready", ready, 60));
  return pid;
}

std::vector<std::string> WorkerArgv(const ChaosStage& stage, const std::string& host,
                                    const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {stage.tuna, "worker", "--coordinator", stage.addr,
                                   "--backend", "cpu", "--host", host, "--budget", "2",
                                   "--repetitions", "2", "--compile-jobs", "1"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

std::string WorkerHealthAddress(const std::string& log, int seconds) {
  static const std::regex kPortLine(
      R"(health service listening on 127\.0\.0\.1:0 \(port (\d+)\))");
  std::string addr;
  WaitUntil(seconds, [&] {
    std::smatch m;
    const std::string text = ReadWholeFile(log);
    if (!std::regex_search(text, m, kPortLine)) return false;
    addr = "127.0.0.1:" + m[1].str();
    return true;
  });
  return addr;
}

bool WaitAllJobsDone(schema::Database& db, int seconds) {
  return WaitUntil(seconds, [&] {
    return CountRows(db, "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
}

std::vector<int> StopAll(const std::vector<pid_t>& pids, int seconds) {
  for (pid_t p : pids) kill(p, SIGTERM);
  std::vector<int> statuses;
  for (pid_t p : pids) statuses.push_back(WaitFor(p, seconds));
  return statuses;
}

int ExitCode(int wait_status) {
  return wait_status != -1 && WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : -1;
}

std::vector<pid_t> ChildPids(pid_t parent, const std::string& needle) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may hold spaces and parentheses.
    const std::string stat = ReadWholeFile(entry.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2 || ppid != parent) continue;
    std::string cmdline = ReadWholeFile(entry.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (cmdline.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

char ProcessState(pid_t pid) {
  const std::string stat = ReadWholeFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t close = stat.rfind(')');
  char state = 0;
  if (close == std::string::npos || sscanf(stat.c_str() + close + 1, " %c", &state) != 1) return 0;
  return state;
}

}  // namespace tuna::testing
