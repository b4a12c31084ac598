// Helpers of the chaos tests (tests/chaos/): the common stage (a workload on the test database,
// a coordinator and workers as `tuna` processes), their logs, and the invariants every scenario
// checks. Each test keeps only its scenario. Test-only; the calls block, one thread at a time.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "schema/store/connection_info.h"
#include "schema/store/database.h"

namespace tuna::testing {

// A `--db` URL for `connection` whose password is read from `option_file` (a [client] file).
std::string DbUrl(const schema::ConnectionInfo& connection, const std::string& option_file);

// The whole file ("" when missing).
std::string ReadWholeFile(const std::string& path);
// Lines of `path` containing `needle`.
int CountLines(const std::string& path, const std::string& needle);
// Waits up to `seconds` until `path` holds at least `n` lines containing `needle`.
bool WaitForLines(const std::string& path, const std::string& needle, int n, int seconds);
// The spdlog timestamps ("[YYYY-MM-DD hh:mm:ss.mmm]", this host's clock) of the lines of `path`
// containing `needle`, as seconds since the epoch.
std::vector<double> LineTimes(const std::string& path, const std::string& needle);

// The invariants of issue 15 over one session's jobs (all of them when session_id is 0).
struct Invariants {
  int64_t jobs = 0;
  int64_t evaluated = 0;
  int64_t failed = 0;                // healthy jobs: must be 0
  int64_t retries = 0;               // charged retries: must be 0 without a worker fault
  int64_t leased = 0;                // leases left behind: must be 0 at the end
  int64_t results = 0;               // perf_result + find_result rows
  int64_t sampled_attempts = 0;      // distinct (job, attempt) with eval samples
  int64_t doubled = 0;               // jobs with samples from two attempts: must be 0
  int64_t forgiven = 0;              // jobs whose last error says a lease expiry was forgiven
  std::string Summary() const;
};
Invariants CheckInvariants(schema::Database& db, int64_t session_id = 0);
// CHECKs (Catch2) the invariants every scenario promises for its `jobs` jobs: all evaluated, none
// failed, `retries` retries charged (0: none; a scenario that kills a worker or an executor
// expects exactly one per step it interrupted), no lease left, one result each, nothing doubled.
void CheckNothingLost(const Invariants& v, int64_t jobs, int64_t retries = 0);

// The stage the scenarios on the shared test MariaDB (tests/fixtures) have in common: a CPU
// workload of `configs` configs x (perf, find) of TunaCpuGemmConv loaded under `label` (the
// configs are SmallDriverLines(configs) unless `driver_lines` names `configs` lines of its own),
// the `tuna` binary, the database's URL, a free loopback address for a coordinator, and the
// directory for the processes' logs. Each step is REQUIREd.
struct ChaosStage {
  std::string tuna;    // path of the `tuna` binary (runfile cli/tuna)
  std::string db_url;  // --db of the shared test database
  std::string addr;    // 127.B.C.D:<free port> (a random loopback address), for the coordinator
  std::string out;     // TestOutputDir(): logs and files
  int64_t jobs = 0;    // 2 * configs
};
ChaosStage SetUpChaos(schema::Database& db, const schema::ConnectionInfo& connection, int configs,
                      const std::string& label, const std::string& driver_lines = "");
// `n` forward fp32 problems (distinct H) whose eval step takes tens to hundreds of ms on the CPU
// backend (a fastbuild tuna on two cores, --budget 2 --repetitions 2: find 30-70 ms, perf
// 0.1-0.5 s), for scenarios that must act while a worker is evaluating: SmallDriverLines' jobs
// evaluate in a few ms, a window a poll can miss.
std::string MediumDriverLines(int n);

// Spawns `tuna --db <url> coordinator --listen <addr> <flags>` appending to `log` and REQUIREs its
// `ready`-th "coordinator ready" line in that log within 60 s (1 for the first start of a log).
pid_t StartCoordinator(const ChaosStage& stage, const std::vector<std::string>& flags,
                       const std::string& log, int ready = 1);
// `tuna worker --coordinator <addr> --backend cpu --host <host> --budget 2 --repetitions 2
// --compile-jobs 1 <flags>`: the worker every scenario runs, for Spawn.
std::vector<std::string> WorkerArgv(const ChaosStage& stage, const std::string& host,
                                    const std::vector<std::string>& flags);
// The address of a worker's health service started with `--health 127.0.0.1:0`, from its log
// line "health service listening on 127.0.0.1:0 (port N)"; "" when absent after `seconds`.
std::string WorkerHealthAddress(const std::string& log, int seconds);
// Waits up to `seconds` until every job is evaluated or failed.
bool WaitAllJobsDone(schema::Database& db, int seconds);
// SIGTERM to each, then each reaped within `seconds`: their raw wait statuses (-1: still running).
std::vector<int> StopAll(const std::vector<pid_t>& pids, int seconds);
// The exit status of a reaped process, -1 when it did not exit normally.
int ExitCode(int wait_status);

// The pids of `parent`'s children whose command line contains `needle` (from /proc).
std::vector<pid_t> ChildPids(pid_t parent, const std::string& needle);
// A process's state letter from /proc/<pid>/stat ('R' running, 'S' sleeping, ...); 0 when gone.
char ProcessState(pid_t pid);

}  // namespace tuna::testing
