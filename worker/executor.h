// The executor: eval work in a child process, one or more per device (DESIGN §2; worker.h
// executors_per_device), so that a hung kernel or a dead GPU context kills only the child.
// Children that share a device take its device lock (device_lock.h) around their device work
// (the search's device-work guard): one times while another compiles or prepares.
//
// Protocol over a socketpair (stream): length-prefixed frames (4-byte little-endian length, then
// a serialized tuna.v1 message, at most kMaxFrameBytes):
//   supervisor → child: LeasedJob, then FetchKernelsReply (the job's kernels; may be empty),
//                       then LeaseReply with the jobs that follow, as far as the supervisor
//                       has them (may be empty): the child prepares their evaluators on the
//                       host and plans the first one's search meanwhile
//   child → supervisor: ReportRequest (the eval Report, worker_id left empty)
// The child serves jobs one after another until the supervisor closes its end (then exits 0).
// After a launch timeout it answers and exits 3 (the device is wedged); the supervisor starts a
// new child for the next job.
//
// ExecutorProcess (supervisor side) owns one child: Run() sends a job and waits for the answer
// with a deadline. A deadline miss → SIGKILL, "timeout after N s"; a child that dies →
// "executor crashed: signal 11" / "executor exited with status N". Either way the child is
// reaped and the next Run starts a fresh one. Threads: one ExecutorProcess per thread.
#pragma once

#include <string>
#include <sys/types.h>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/api.h"
#include "tuner_core/solver/registry.h"
#include "worker/job_runner.h"

namespace tuna::worker {

inline constexpr size_t kMaxFrameBytes = 1u << 30;

// How an executor shares its device with the other executors of that device on this host.
struct DeviceSharing {
  // The device lock file (device_lock.h DeviceLockPath); empty: no lock (device work is not
  // guarded). A lock that cannot be opened is logged and the child runs unguarded.
  std::string lock_path;
  // Executors of this device on this host (worker.h executors_per_device): the child's share of
  // the device memory its evaluator cache may hold is divided by it.
  int executors = 1;
};

// Child side: serves jobs on `fd` with the device `device_index` of `backend_name` until EOF.
// Returns the process exit code (0 at EOF, 3 after a wedged device, 2 when the device cannot be
// opened: then the first request is answered with a failure blamed on the host (jobs::Blame)
// first, so the job is handed back uncharged instead of being lost silently).
// `kernel_cache_dir`: this host's disk kernel cache (tuner_core/backend/disk_kernel_cache.h)
// for the child's own builds and lookups; empty: none (also when it cannot be opened: logged).
int RunExecutor(int fd, const std::string& backend_name, int device_index,
                const solver::SolverRegistry& registry, const JobTuning& tuning,
                const std::string& kernel_cache_dir = "", const DeviceSharing& sharing = {});

// The executor's command line as the supervisor builds it (flags in any order; "worker" and
// "--executor" are ignored): --executor-fd N --backend B --devices I --strategy S --budget N
// --seed N --compile-jobs N --repetitions N --launch-timeout SECONDS [--patience N] [--whole-space N]
// [--time-limit-per-job S] [--heuristics-model DIR] (loaded here) [--kernel-cache DIR]
// [--device-lock FILE] [--executors-per-device N]. For binaries other than `tuna` that serve as
// executors (tests with their own solver registry).
struct ExecutorArgs {
  int fd = -1;
  std::string backend = "cpu";
  int device = 0;
  JobTuning tuning;
  std::string kernel_cache_dir;  // empty: no disk kernel cache
  DeviceSharing sharing;
};
absl::StatusOr<ExecutorArgs> ParseExecutorArgs(const std::vector<std::string>& args);

struct ExecutorOutcome {
  coordinator::Report report;  // the child's report (when !killed)
  bool killed = false;         // the child hung or died: report holds the failure
};

class ExecutorProcess {
 public:
  // `argv`: the full command of the child without the fd argument; Run appends
  // "--executor-fd N". Typically {"/proc/self/exe", "worker", "--executor", ...}.
  explicit ExecutorProcess(std::vector<std::string> argv) : argv_(std::move(argv)) {}
  ~ExecutorProcess();  // closes the socket (the child exits), reaps it (SIGKILL after 5 s)
  ExecutorProcess(const ExecutorProcess&) = delete;
  ExecutorProcess& operator=(const ExecutorProcess&) = delete;

  // Sends the job (and the jobs that will follow it, for preparation) and waits up to
  // `deadline` for the report. Errors: Unavailable when the child cannot be started
  // (fork/exec failed); a hang or crash is an ExecutorOutcome with killed.
  absl::StatusOr<ExecutorOutcome> Run(const coordinator::LeasedJob& job,
                                      const std::vector<coordinator::KernelBlob>& kernels,
                                      absl::Duration deadline,
                                      const std::vector<coordinator::LeasedJob>& upcoming = {});
  // Kills the child now (SIGKILL) if one runs (e.g. its lease was lost). Thread-safe against a
  // concurrent Run (it makes that Run return killed).
  void Kill();
  // Starts the child now (it opens its device and warms up while the first compile steps run)
  // rather than at the first Run; a failure here is retried by that Run.
  absl::Status StartEarly() { return pid_ > 0 ? absl::OkStatus() : Start(); }
  // Closes the socket now (the child exits) without waiting; the destructor reaps it. Not with a
  // Run in progress: a stopping worker closes all its executors first, so they exit together
  // rather than one after another.
  void Close();
  pid_t pid() const { return pid_; }
  int restarts() const { return starts_ > 0 ? starts_ - 1 : 0; }

 private:
  absl::Status Start();
  std::string Reap(bool kill);  // waits for the child; returns how it ended

  std::vector<std::string> argv_;
  volatile pid_t pid_ = -1;
  int fd_ = -1;
  int starts_ = 0;
};

}  // namespace tuna::worker
