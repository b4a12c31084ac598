#include "worker/executor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "coordinator/wire.h"
#include "proto/tuna.pb.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/heuristics/search_predictor.h"
#include "worker/device_lock.h"
#include "worker/fastest_by_config.h"
#include "worker/kernel_cache.h"

namespace tuna::worker {
namespace {

bool WriteAll(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

absl::Status WriteFrame(int fd, const google::protobuf::Message& m) {
  std::string body;
  if (!m.SerializeToString(&body)) return absl::InternalError("cannot serialize a frame");
  unsigned char len[4];
  const uint32_t n = static_cast<uint32_t>(body.size());
  for (int i = 0; i < 4; ++i) len[i] = static_cast<unsigned char>(n >> (8 * i));
  if (!WriteAll(fd, reinterpret_cast<char*>(len), 4) || !WriteAll(fd, body.data(), body.size())) {
    return absl::AbortedError(absl::StrCat("write to executor socket: ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

// Aborted at EOF, DeadlineExceeded at the deadline.
absl::Status ReadAll(int fd, char* p, size_t n, absl::Time deadline) {
  while (n > 0) {
    int timeout_ms = -1;
    if (deadline != absl::InfiniteFuture()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return absl::DeadlineExceededError("deadline");
      timeout_ms = static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(left) + 1, 1 << 30));
    }
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, timeout_ms);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return absl::AbortedError(absl::StrCat("poll: ", std::strerror(errno)));
    if (r == 0) continue;  // re-check the deadline
    ssize_t got = read(fd, p, n);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) return absl::AbortedError("end of stream");
    p += got;
    n -= static_cast<size_t>(got);
  }
  return absl::OkStatus();
}

absl::Status ReadFrame(int fd, google::protobuf::Message* m, absl::Time deadline) {
  unsigned char len[4];
  if (auto st = ReadAll(fd, reinterpret_cast<char*>(len), 4, deadline); !st.ok()) return st;
  uint32_t n = 0;
  for (int i = 0; i < 4; ++i) n |= static_cast<uint32_t>(len[i]) << (8 * i);
  if (n > kMaxFrameBytes) return absl::DataLossError("executor frame too large");
  std::string body(n, '\0');
  if (auto st = ReadAll(fd, body.data(), n, deadline); !st.ok()) return st;
  if (!m->ParseFromString(body)) return absl::DataLossError("executor frame does not parse");
  return absl::OkStatus();
}

coordinator::Report FailureFor(const coordinator::LeasedJob& job, const std::string& error,
                               bool retryable) {
  coordinator::Report r;
  r.job_id = job.job_id;
  r.attempt = job.attempt;
  r.step = jobs::JobStep::kEval;
  r.error = error;
  r.retryable = retryable;
  return r;
}

// The executor's backend and device; the error when either cannot be opened (`be` may then
// be set and `device` not).
absl::Status OpenExecutorDevice(const std::string& backend_name, int device_index,
                                std::unique_ptr<backend::Backend>& be,
                                std::unique_ptr<backend::Device>& device) {
  auto kind = backend::ParseBackendKind(backend_name);
  if (!kind.ok()) return kind.status();
  auto b = backend::OpenBackend(*kind, backend::DetectOptions::FromEnv());
  if (!b.ok()) return b.status();
  be = *std::move(b);
  auto d = be->OpenDevice(device_index);
  if (!d.ok()) return d.status();
  device = *std::move(d);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExecutorArgs> ParseExecutorArgs(const std::vector<std::string>& args) {
  ExecutorArgs out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "worker" || a == "--executor") continue;
    if (a == "--no-specialize") {
      out.tuning.specialize = false;
      continue;
    }
    if (i + 1 >= args.size()) return absl::InvalidArgumentError(absl::StrCat("missing value of ", a));
    const std::string& v = args[++i];
    try {
      if (a == "--executor-fd") out.fd = std::stoi(v);
      else if (a == "--backend") out.backend = v;
      else if (a == "--devices") out.device = std::stoi(v);
      else if (a == "--strategy") {
        auto k = search::ParseStrategyKind(v);
        if (!k.ok()) return k.status();
        out.tuning.strategy = *k;
      } else if (a == "--budget") out.tuning.budget = std::stoull(v);
      else if (a == "--seed") out.tuning.seed = std::stoull(v);
      else if (a == "--compile-jobs") out.tuning.compile_threads = std::stoi(v);
      else if (a == "--repetitions") out.tuning.repetitions = std::stoi(v);
      else if (a == "--launch-timeout") out.tuning.launch_timeout = absl::Seconds(std::stoi(v));
      else if (a == "--patience") out.tuning.patience = std::stoull(v);
      else if (a == "--whole-space") out.tuning.whole_space = std::stoull(v);
      else if (a == "--time-limit-per-job") out.tuning.time_limit_s = std::stod(v);
      else if (a == "--outclassed") out.tuning.outclassed = std::stod(v);
      else if (a == "--heuristics-model") {
        auto p = heuristics::LoadSearchPredictor(v);
        if (!p.ok()) return p.status();
        out.tuning.heuristics_model = v;
        out.tuning.predictor = std::move(p->predictor);
      }
      else if (a == "--kernel-cache") out.kernel_cache_dir = v;
      else if (a == "--device-lock") out.sharing.lock_path = v;
      else if (a == "--executors-per-device") out.sharing.executors = std::max(1, std::stoi(v));
      else return absl::InvalidArgumentError(absl::StrCat("unknown executor flag ", a));
    } catch (const std::exception&) {
      return absl::InvalidArgumentError(absl::StrCat("bad value of ", a, ": ", v));
    }
  }
  if (out.fd < 0) return absl::InvalidArgumentError("--executor-fd is required");
  return out;
}

namespace {

// The disk kernel cache at `dir`; null when none is asked for or it cannot be opened (logged).
std::unique_ptr<backend::DiskKernelCache> OpenDiskCache(const std::string& dir) {
  if (dir.empty()) return nullptr;
  auto opened = backend::DiskKernelCache::Open(dir);
  if (opened.ok()) return *std::move(opened);
  spdlog::warn("executor: no disk kernel cache: {}", opened.status().ToString());
  return nullptr;
}

// The device lock as the search's device-work guard (device_guard.h).
class LockScope : public search::DeviceWorkScope {
 public:
  explicit LockScope(DeviceLock::Held held) : held_(std::move(held)) {}

 private:
  DeviceLock::Held held_;
};

// The guard over `sharing`'s lock, which `lock` keeps open; null (no guard) without a lock path
// or when the lock cannot be opened (logged: the executor then runs unguarded).
search::DeviceWorkGuard OpenDeviceGuard(const DeviceSharing& sharing,
                                        std::unique_ptr<DeviceLock>& lock) {
  if (sharing.lock_path.empty()) return nullptr;
  auto opened = DeviceLock::Open(sharing.lock_path);
  if (!opened.ok()) {
    spdlog::error("executor pid {}: {}; device work runs unguarded (timings may be disturbed by "
                  "the other executors of this device)", getpid(), opened.status().ToString());
    return nullptr;
  }
  lock = *std::move(opened);
  return [l = lock.get()]() -> std::unique_ptr<search::DeviceWorkScope> {
    auto held = l->Acquire();
    if (!held.ok()) {
      spdlog::error("executor pid {}: {}; this device work runs unguarded", getpid(),
                    held.status().ToString());
      return nullptr;
    }
    return std::make_unique<LockScope>(*std::move(held));
  };
}

// The three frames of one request (the protocol in executor.h).
absl::Status ReadRequest(int fd, v1::LeasedJob& job, v1::FetchKernelsReply& kernels, v1::LeaseReply& next) {
  absl::Status st = ReadFrame(fd, &job, absl::InfiniteFuture());
  if (st.ok()) st = ReadFrame(fd, &kernels, absl::InfiniteFuture());
  if (st.ok()) st = ReadFrame(fd, &next, absl::InfiniteFuture());
  return st;
}

// The supervisor closed its end: every job this process took is reported, nothing is left to
// keep. Exits now rather than unwinding: the destructors would wait for compiles still running
// for dropped or planned searches (NVRTC cannot be interrupted), and the supervisor waits for
// this process (up to 5 s, then SIGKILL) before a run can export: 7-8 s between a tune's last job
// and its export on the H100. Disk cache entries are written to a temporary name and renamed, so
// none is left half-written.
[[noreturn]] void ExitStopped() {
  spdlog::info("executor pid {}: the supervisor closed its end; exiting", getpid());
  spdlog::default_logger()->flush();
  std::_Exit(0);
}

std::string Outcome(const coordinator::Report& report) {
  return report.succeeded ? (report.has_result ? "result" : "no passing candidate") : report.error;
}

}  // namespace

int RunExecutor(int fd, const std::string& backend_name, int device_index,
                const solver::SolverRegistry& registry, const JobTuning& tuning,
                const std::string& kernel_cache_dir, const DeviceSharing& sharing) {
  std::unique_ptr<backend::Backend> be;
  std::unique_ptr<backend::Device> device;
  const absl::Status open_error = OpenExecutorDevice(backend_name, device_index, be, device);
  std::unique_ptr<backend::DiskKernelCache> disk = OpenDiskCache(kernel_cache_dir);
  std::unique_ptr<KernelCacheBackend> cache;
  if (be) cache = std::make_unique<KernelCacheBackend>(*be, disk.get());
  // Batches compiled ahead that stopped searches dropped end here, off the jobs' path; declared
  // after the backend it compiles with, so destroyed (waiting for them) before it.
  search::AbandonedCompiles abandoned;
  // Executors sharing the device share its memory too (the default fraction split between them).
  EvaluatorCache evaluators(64, 0.25 / std::max(1, sharing.executors));
  PlannedTuner planned;
  FastestByConfig fastest;  // this executor's own reports
  JobTuning job_tuning = tuning;
  job_tuning.fastest = &fastest;
  job_tuning.abandoned = &abandoned;
  std::unique_ptr<DeviceLock> lock;
  job_tuning.device_guard = OpenDeviceGuard(sharing, lock);
  spdlog::info("executor pid {}: {} device {} {}{}{}", getpid(), backend_name, device_index,
               open_error.ok() ? device->Info().name : open_error.ToString(),
               disk ? absl::StrCat(", disk kernel cache ", disk->dir()) : "",
               lock ? absl::StrCat(", device lock ", lock->path(), " (", sharing.executors,
                                   " executor(s) on the device)")
                    : "");
  if (open_error.ok()) evaluators.WarmUp(*cache, *device, registry);
  for (;;) {
    v1::LeasedJob wire_job;
    v1::FetchKernelsReply wire_kernels;
    v1::LeaseReply wire_next;  // the jobs after this one, as far as the supervisor has them
    if (absl::Status st = ReadRequest(fd, wire_job, wire_kernels, wire_next); !st.ok()) {
      if (absl::IsAborted(st)) ExitStopped();  // the supervisor closed its end
      spdlog::error("executor: {}", st.ToString());
      return 1;
    }
    auto job = coordinator::FromWire(wire_job);
    if (!job.ok()) {
      spdlog::error("executor: bad job: {}", job.status().ToString());
      return 1;
    }
    coordinator::Report report;
    bool wedged = false;
    if (!open_error.ok()) {
      report = FailureFor(*job, absl::StrCat("executor: cannot open the device: ", open_error.message()), true);
      report.blame = jobs::Blame::kHost;  // the host's fault, not the job's
    } else {
      std::vector<coordinator::KernelBlob> kernels;
      for (const v1::Kernel& k : wire_kernels.kernels()) kernels.push_back(coordinator::FromWire(k));
      cache->Clear();  // one job's kernels at a time bounds the child's memory
      cache->Prefetch(kernels);
      spdlog::info("executor: job {} (config {}, solver {}, {}): {} kernels prefetched", job->job_id,
                   job->config_id, job->solver_name, job->kind, kernels.size());
      for (int i = 0; i < wire_next.jobs_size(); ++i) {
        auto next = coordinator::FromWire(wire_next.jobs(i));
        if (!next.ok()) continue;
        PrefetchEvaluator(*next, *be, *device, job_tuning, evaluators);
        if (i == 0) planned.Start(*next, *cache, *device, registry, job_tuning);
      }
      report = EvalJob(*job, *cache, *device, registry, job_tuning, evaluators, &wedged, &planned);
      fastest.Note(job->config_id, report);
      spdlog::info("executor: job {} done: {} (kernel cache: {} hits, {} from disk, {} local builds); "
                   "batches compiled ahead and dropped: {}, {} still building", job->job_id, Outcome(report),
                   cache->hits(), cache->disk_hits(), cache->builds(), abandoned.added(), abandoned.running());
    }
    report.executor_killed = wedged;  // tells the supervisor this child is about to exit
    v1::ReportRequest out;
    coordinator::ToWire(report, &out);
    if (!WriteFrame(fd, out).ok()) return 1;
    if (wedged) {
      spdlog::error("executor: a launch timed out; the device is unusable, exiting");
      _exit(3);  // never run destructors of a device a kernel may still be using
    }
    if (!open_error.ok()) return 2;
  }
}

ExecutorProcess::~ExecutorProcess() {
  if (pid_ > 0) Reap(false);
}

void ExecutorProcess::Close() {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
}

absl::Status ExecutorProcess::Start() {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    return absl::UnavailableError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  std::vector<std::string> args = argv_;
  args.push_back("--executor-fd");
  args.push_back("3");
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return absl::UnavailableError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    // Only async-signal-safe calls here.
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a killed supervisor takes its executors along
    if (getppid() != parent) _exit(127);
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);  // the supervisor blocks SIGTERM for its sigwait
    if (sv[1] == 3) {
      fcntl(3, F_SETFD, 0);
    } else if (dup2(sv[1], 3) < 0) {
      _exit(127);
    }
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  close(sv[1]);
  fd_ = sv[0];
  pid_ = pid;
  ++starts_;
  spdlog::info("worker: started executor pid {} ({})", pid, argv_.size() > 4 ? argv_[4] : "");
  return absl::OkStatus();
}

std::string ExecutorProcess::Reap(bool kill_first) {
  if (fd_ >= 0) {
    close(fd_);
    fd_ = -1;
  }
  const pid_t pid = pid_;
  if (pid <= 0) return "not running";
  if (kill_first) kill(pid, SIGKILL);
  int status = 0;
  const absl::Time give_up = absl::Now() + absl::Seconds(5);
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      pid_ = -1;
      return "lost";
    }
    if (absl::Now() > give_up) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    usleep(10000);
  }
  pid_ = -1;
  if (WIFSIGNALED(status)) return absl::StrCat("signal ", WTERMSIG(status));
  if (WIFEXITED(status)) return absl::StrCat("status ", WEXITSTATUS(status));
  return "unknown status";
}

void ExecutorProcess::Kill() {
  const pid_t pid = pid_;
  if (pid > 0) kill(pid, SIGKILL);
}

absl::StatusOr<ExecutorOutcome> ExecutorProcess::Run(
    const coordinator::LeasedJob& job, const std::vector<coordinator::KernelBlob>& kernels,
    absl::Duration deadline, const std::vector<coordinator::LeasedJob>& upcoming) {
  if (pid_ > 0) {  // a child that died while idle is replaced, not blamed on this job
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      spdlog::warn("worker: executor pid {} ended while idle", pid_);
      pid_ = -1;
      close(fd_);
      fd_ = -1;
    }
  }
  if (pid_ <= 0) {
    if (auto st = Start(); !st.ok()) return st;
  }
  v1::LeasedJob wire_job;
  coordinator::ToWire(job, &wire_job);
  v1::FetchKernelsReply wire_kernels;
  for (const coordinator::KernelBlob& k : kernels) {
    coordinator::ToWire(k, wire_kernels.add_kernels());
  }
  ExecutorOutcome out;
  v1::LeaseReply wire_next;
  for (const coordinator::LeasedJob& j : upcoming) coordinator::ToWire(j, wire_next.add_jobs());
  absl::Status st = WriteFrame(fd_, wire_job);
  if (st.ok()) st = WriteFrame(fd_, wire_kernels);
  if (st.ok()) st = WriteFrame(fd_, wire_next);
  v1::ReportRequest wire_report;
  if (st.ok()) st = ReadFrame(fd_, &wire_report, absl::Now() + deadline);
  if (st.ok()) {
    auto rep = coordinator::FromWire(wire_report);
    if (rep.ok()) {
      out.report = *std::move(rep);
      if (out.report.executor_killed) {  // the child exits after a launch timeout
        const std::string how = Reap(false);
        spdlog::warn("worker: executor of job {} wedged its device and ended ({})", job.job_id, how);
      } else if (out.report.blame == jobs::Blame::kHost) {  // it could not open its device: exits
        Reap(false);
      }
      return out;
    }
    st = rep.status();
  }
  out.killed = true;
  std::string reason;
  if (absl::IsDeadlineExceeded(st)) {
    const std::string how = Reap(true);
    reason = absl::StrCat("timeout after ", absl::ToInt64Seconds(deadline), " s (executor killed)");
    spdlog::error("worker: job {}: {} ({})", job.job_id, reason, how);
  } else {
    const std::string how = Reap(!absl::IsAborted(st));
    reason = absl::StrCat("executor crashed: ", how);
    if (!absl::IsAborted(st)) absl::StrAppend(&reason, " (", st.message(), ")");
    spdlog::error("worker: job {}: {}", job.job_id, reason);
  }
  out.report = FailureFor(job, reason, true);
  out.report.executor_killed = true;
  return out;
}

}  // namespace tuna::worker
