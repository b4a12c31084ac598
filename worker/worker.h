// The worker supervisor (DESIGN §2, §3): registers this host's devices with a coordinator, then
//   compile pool   `compile_jobs` threads, each leasing compile steps (`lease_batch` at a time),
//                  building every candidate's kernels (job_runner.h CompileJob), putting them to
//                  the coordinator (content-deduplicated there; unique by build key here) and
//                  reporting the links; the candidates build on `compile_jobs` shared threads,
//                  the oldest job's first (search::CompilePool), so jobs reach eval one by one
//                  from the first seconds on instead of all together at the end;
//   eval lanes     per device `executors_per_device` lanes (default 2 on GPU backends, 1 on
//                  the CPU backend), each a leasing thread that prefetches the next eval leases
//                  and their kernels (at most `lease_batch` jobs ahead) while a runner thread
//                  hands the current job to the lane's own executor child (executor.h) under a
//                  per-job deadline; the child's report is sent as is, by a reporting thread,
//                  so the lane starts its next job meanwhile (in order; all are sent before Run
//                  returns, a stop included); a hang or a crash kills and
//                  restarts the child and reports the job failed with the reason
//                  (executor_killed, which the coordinator counts towards quarantine).
//                  Several executors of one device take its device lock (device_lock.h, a file
//                  in `device_lock_dir`) around their device work only (loads, verified and timed
//                  runs, re-timing), so one child times while the others compile the next
//                  candidates or prepare the next job on the host; timings stay undisturbed;
//   heartbeat      Renew of every held lease each lease_seconds / 3; a lease the coordinator no
//                  longer confirms is dropped (an eval in progress on it is killed).
// Every RPC that fails with Unavailable / DeadlineExceeded is retried with exponential backoff
// (100 ms .. kMaxRetryBackoff) until it succeeds or the worker stops: a coordinator restart only
// delays work, and calls go through again within about a second of it listening again (the
// channel's own reconnect backoff is capped the same way, worker/coordinator_client.cc). After a
// failed renewal the heartbeat tries again within that second too, not a third of a lease later.
// Reports (docs/RELIABILITY.md): a finished step's report is retried with that backoff until the
// coordinator answers; it is given up only when the lease is really lost: the coordinator said so
// (FailedPrecondition, or a renewal without it before the report was sent: one that crosses the
// report only means the job is done), or the worker is stopping and the lease's
// renewed end (the last confirmed renewal + lease_seconds, measured on this host) has passed.
// Time in the prefetch queue and an unreachable coordinator cost nothing: a coordinator that
// comes back keeps the leases of workers that renew (coordinator.h, serving grace).
//
// Host faults (docs/RELIABILITY.md, "Hosts take the blame"): a device that cannot be opened or
// an executor that cannot be started fails its job with jobs::Blame::kHost (the coordinator hands
// the job back uncharged and counts the failure against this host). The lane (each lane of a
// device on its own) then backs off (device_backoff_first, doubling up to device_backoff_max, while the failures go on), hands
// back its prefetched jobs and leases nothing until the backoff ends; so does a lane whose
// executor was killed (crash or hang) twice in a row (a device that keeps losing its context).
// A job the lane runs to its end again clears the fault. A coordinator that benched this host
// refuses its eval leases (FailedPrecondition); the lane asks again every few seconds.
// A solver or arch this worker does not know fails the job with kUnsupported: it is handed back
// for another worker and not leased to this one again.
//
// Token refused (a rotated token, or an eval-role token asked to compile): the first call
// answered UNAUTHENTICATED or PERMISSION_DENIED logs one error line naming it, the worker turns
// NOT_SERVING and stops as on RequestStop (its leases run out at the coordinator, which requeues
// them uncharged after a rotation); Run returns that status.
//
// Stop (RequestStop, e.g. on SIGTERM): no new leases; jobs in progress finish and are reported;
// leased jobs not started are Released; Run then returns OK.
//
// Health (for `tuna worker --health`, worker/health_server.h): the worker is healthy while it
// is registered, not stopping, no device lane is faulty (above), the coordinator has not benched
// it, and the coordinator answered at least one of its last kUnhealthyAfterFailedCalls calls. Unreachable means Unavailable / DeadlineExceeded: every
// such call is retried with the backoff above, so a coordinator that is down turns a worker
// unhealthy after a few retries (about 1.5 s with one leasing thread, sooner with more), and
// the first call it answers again makes it healthy. The worker stays free of server code: it
// only reports changes through WorkerOptions::on_health_change.
//
// Threads: Run blocks the caller and owns every thread it starts; RequestStop, Healthy and
// stats() may be called from any thread. The client and registry must outlive the Worker.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "tuner_core/search/measure/compile_pool.h"
#include "tuner_core/solver/registry.h"
#include "worker/coordinator_client.h"
#include "tuner_core/backend/disk_kernel_cache.h"
#include "worker/fastest_by_config.h"
#include "worker/job_runner.h"

namespace tuna::worker {

struct WorkerOptions {
  std::string host;              // empty: gethostname()
  std::string version = "tuna";  // reported at registration
  std::string backend;           // cpu | cuda | hip; empty: the first usable with a device
  std::vector<int> devices;      // device indices to evaluate on; empty: all
  bool compile = true;
  bool eval = true;
  int compile_jobs = 1;   // compile threads (each compiles one job at a time)
  int lease_batch = 1;    // jobs per Lease call / eval jobs prefetched per eval lane
  // Executor children (eval lanes) per device; 0: 2 on GPU backends, 1 on the CPU backend
  // (where compiling and timing share the cores). With more than one, their device work is
  // serialised by the device lock (one executor takes none); Run fails (FailedPrecondition)
  // when the lock's directory cannot be used.
  int executors_per_device = 0;
  // The compile pool's threads (and the compilers they start) run this much below the normal
  // priority (search::CompilePool; 0..19): on a host whose cores are all busy, the executors'
  // in-search compiles, which a device waits for, then go first. 0: not lowered. Default 10: on
  // the H100 acceptance run (docs/BENCHMARKS.md) it took both ResNet-50 files from 222.9 s to
  // 166.4 s and the GPU's busy share from 64.6 % to 75.4 %.
  int compile_nice = 10;
  // Where the device locks live (device_lock.h; must be local to this host); empty:
  // DefaultDeviceLockDir(). The lock is per host, so the executors of worker processes on one
  // host that share a device (`tune -f --workers 2`) exclude each other too (when they lock).
  std::string device_lock_dir;
  JobTuning tuning;
  absl::Duration eval_deadline = absl::Minutes(30);  // per eval job; then SIGKILL
  absl::Duration lease_wait = absl::Seconds(5);      // long-poll per Lease call
  // A faulty device's lane waits this long before trying again, doubling per failure in a row
  // up to device_backoff_max (see the file comment).
  absl::Duration device_backoff_first = absl::Seconds(1);
  absl::Duration device_backoff_max = absl::Seconds(60);
  // A benched host (the coordinator refuses its eval leases) asks again after this long.
  absl::Duration benched_retry = absl::Seconds(5);
  // Stopping: a report is retried at most this long after RequestStop (and never past the
  // lease's renewed end). A report given up leaves its job leased until the lease expires (or a
  // resumed `tune -f` hands it back); the job then runs again.
  absl::Duration stop_report_wait = absl::InfiniteDuration();
  // This host's on-disk kernel cache (tuner_core/backend/disk_kernel_cache.h), shared by the
  // compile threads and the executor children (passed as --kernel-cache DIR); empty: none.
  // Run fails (FailedPrecondition) when it cannot be opened.
  std::string kernel_cache_dir;
  // The executor command without device/tuning/fd arguments; empty: this binary's
  // `worker --executor` ({"/proc/self/exe", "worker", "--executor"}).
  std::vector<std::string> executor_argv;
  const solver::SolverRegistry* registry = nullptr;  // null: the builtin registry
  // Called with Healthy()'s new value each time it changes (first with true after
  // registering), in order, from the worker thread (or RequestStop's caller) that changed it.
  // Must be quick and must not call into the Worker except Healthy(). Null: not told.
  std::function<void(bool healthy)> on_health_change;
};

struct WorkerStats {
  int64_t compiled = 0;
  int64_t compile_failed = 0;
  int64_t evaluated = 0;
  int64_t eval_failed = 0;
  int64_t executor_kills = 0;
  int64_t released = 0;
  int64_t lost_leases = 0;
  int64_t host_faults = 0;       // eval steps failed by this host's device or executor
  int64_t device_backoffs = 0;   // times a lane backed off
  int64_t unsupported = 0;       // jobs handed back as unsupported
};

class Worker {
 public:
  Worker(coordinator::WorkerApi& client, WorkerOptions options);
  ~Worker();

  // Errors: Unavailable when no backend/device matches the options, FailedPrecondition when
  // the coordinator refuses the registration (protocol), Cancelled when stopped before
  // registering, Unauthenticated / PermissionDenied after the coordinator refused the token
  // (see the file comment). OK after a clean stop.
  absl::Status Run();
  void RequestStop();
  // Consecutive failed calls (coordinator unreachable) after which the worker is unhealthy.
  static constexpr int kUnhealthyAfterFailedCalls = 5;
  // The longest wait between retries of a call that found the coordinator unreachable.
  static constexpr absl::Duration kMaxRetryBackoff = absl::Milliseconds(500);
  // Registered, not stopping, coordinator reachable (see the file comment). Any thread.
  bool Healthy() const;
  WorkerStats stats() const;
  std::string worker_id() const;

 private:
  struct Held {
    int64_t attempt = 0;
    bool lost = false;
    std::function<void()> on_lost;
    absl::Time expires;  // this host's clock: the claim or last confirmed renewal + lease_seconds
    // Its report is being sent: a renewal that misses it may only have crossed the report (the
    // job is done), so the report's answer, not the renewal, says whether it was lost.
    bool reporting = false;
  };
  struct EvalLane;

  template <typename Fn>
  auto Retry(const char* what, Fn fn) -> decltype(fn());
  void Hold(const coordinator::LeasedJob& j, std::function<void()> on_lost = nullptr);
  void Drop(const coordinator::LeasedJob& job);
  bool IsLost(const coordinator::LeasedJob& job);
  // Lost, or stopping with the renewed lease run out: a report is not worth sending any more.
  bool ReportHopeless(const coordinator::LeasedJob& job);
  bool RenewOnce(bool last_failed);  // one heartbeat; false when the renewal failed
  void ReleaseAll(const std::vector<coordinator::LeasedJob>& jobs);
  void SendReport(coordinator::Report report, const coordinator::LeasedJob& job);
  void HeartbeatLoop();
  // Run's stages: the backend and the devices to use (Unavailable when none fits the options),
  // registration with the coordinator, one eval lane (executor + lease/run/report threads).
  absl::StatusOr<std::vector<backend::DeviceInfo>> OpenBackendAndDevices();
  absl::Status Register(const std::vector<backend::DeviceInfo>& chosen);
  // The executors per device and the device lock dir (device_lock_dir_, empty: no locks).
  absl::Status ResolveDeviceSharing();
  std::unique_ptr<EvalLane> StartEvalLane(const backend::DeviceInfo& d, int slot,
                                          std::vector<std::thread>& threads);
  void CompileLoop(int index);
  void RunCompile(const coordinator::LeasedJob& job);
  void EvalLeaseLoop(EvalLane* lane);
  void EvalRunLoop(EvalLane* lane);
  void EvalReportLoop(EvalLane* lane);
  void LogEvalOutcome(const coordinator::LeasedJob& job, const coordinator::Report& report,
                      double seconds);
  // After each eval step: a host fault or a repeated executor kill backs the lane off (and hands
  // its queued jobs back); a step run to its end clears the lane's fault.
  void NoteDeviceOutcome(EvalLane* lane, const coordinator::Report& report, bool killed);
  // Waits out the lane's backoff; false when stopping.
  bool WaitDeviceBackoff(EvalLane* lane);
  void SetBenched(bool benched, const std::string& why);
  void Refused(const absl::Status& st);
  // Fetched kernels this host may load (kernel_cache.h TrustedKernels), logging what is left out.
  std::vector<coordinator::KernelBlob> TrustedKernels(const coordinator::LeasedJob& job,
                                                      std::vector<coordinator::KernelBlob> kernels);  // the token was refused: stop (see the file comment)
  // PutKernels in calls of at most kPutKernelsBytes of code (one kernel per call at least).
  absl::StatusOr<std::vector<int64_t>> PutKernelsInPieces(
      const coordinator::LeasedJob& job, const std::vector<coordinator::KernelBlob>& kernels);
  static constexpr size_t kPutKernelsBytes = 8u << 20;
  bool Sleep(absl::Duration d);  // false when stopping
  // After every coordinator call: counts unreachable-coordinator failures, resets on an answer.
  void NoteCall(const absl::Status& st);
  void UpdateHealth();  // tells on_health_change when Healthy() changed

  coordinator::WorkerApi& client_;
  WorkerOptions options_;
  const solver::SolverRegistry& registry_;
  std::unique_ptr<backend::Backend> backend_;
  std::string worker_id_;
  int lease_seconds_ = 60;
  absl::Notification stop_;
  std::atomic<bool> stop_flag_{false};
  absl::Time stop_at_ = absl::InfiniteFuture();  // guarded by mu_: when RequestStop was called
  std::atomic<bool> registered_{false};
  std::atomic<int> failed_calls_{0};  // consecutive, across threads
  std::atomic<int> faulty_lanes_{0};  // lanes backing off or probing after a host fault
  std::atomic<bool> benched_{false};  // the coordinator refuses our eval leases
  std::atomic<bool> refused_{false};  // the coordinator refused the token
  absl::Status refusal_;              // guarded by mu_: what Run returns after a refusal

  std::mutex health_mu_;         // orders on_health_change calls
  bool health_told_ = false;     // guarded by health_mu_: the last value passed on
  bool was_healthy_ = false;     // guarded by health_mu_
  std::string last_unreachable_;  // guarded by health_mu_: the latest Unavailable / deadline

  mutable std::mutex mu_;
  std::map<int64_t, Held> held_;  // guarded by mu_
  WorkerStats stats_;             // guarded by mu_
  // Every lane's verified results: a perf job goes to its executor with the lower of this
  // rival and its lease's (read at the claim, before the other lanes' reports were committed).
  FastestByConfig fastest_;
  std::unique_ptr<search::CompilePool> compile_pool_;  // made by Run before its compile threads
  std::unique_ptr<backend::DiskKernelCache> disk_cache_;      // opened by Run; null: none
  int executors_per_device_ = 1;  // resolved by Run before the lanes start
  std::string device_lock_dir_;   // resolved by Run; empty: executors take no device lock
};

}  // namespace tuna::worker
