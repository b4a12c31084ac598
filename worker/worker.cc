#include "worker/worker.h"

#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/registry.h"
#include "worker/device_lock.h"
#include "worker/executor.h"
#include "worker/kernel_cache.h"

namespace tuna::worker {
namespace {

// The coordinator did not answer (down, unreachable, or too slow): counts against health.
bool Unreachable(const absl::Status& st) {
  return absl::IsUnavailable(st) || absl::IsDeadlineExceeded(st);
}

template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

std::string JobContext(const coordinator::LeasedJob& j) {
  return absl::StrCat("job ", j.job_id, " (", j.kind, ", config ", j.config_id, ", solver ",
                      j.solver_name, ", attempt ", j.attempt, ")");
}

// "0.41 ms [TB_M=128,...], 1.52x vs default (0.62 ms), 40 candidates, warm start from 212 points":
// the default config is a search's first candidate, so its sample is the first one; the points
// are what the solver's searches timed on other configs (LeasedJob::transfer).
std::string EvalSummary(const coordinator::LeasedJob& job, const coordinator::Report& r) {
  if (!r.has_result) return "no candidate passed";
  std::string out = absl::StrCat(r.kernel_time_ms, " ms [", r.params, "]");
  if (r.samples.size() > 1 && r.samples.front().status == "Passed" &&
      r.samples.front().time_ms.value_or(0) > 0 && r.kernel_time_ms > 0) {
    const double d = *r.samples.front().time_ms;
    absl::StrAppend(&out, ", ", absl::StrFormat("%.2fx vs default (%g ms)", d / r.kernel_time_ms, d));
  }
  absl::StrAppend(&out, ", ", r.samples.size(), " candidates");
  if (!job.transfer.empty()) absl::StrAppend(&out, ", warm start from ", job.transfer.size(), " configs");
  return out;
}

}  // namespace

struct Worker::EvalLane {
  coordinator::Device device;
  int slot = 0;   // which of its device's executors (0-based)
  int slots = 1;  // executors of the device
  // "device 0", or "device 0 (executor 2 of 2)" when the device has several.
  std::string Name() const {
    return slots > 1 ? absl::StrCat("device ", device.index, " (executor ", slot + 1, " of ", slots, ")")
                     : absl::StrCat("device ", device.index);
  }
  std::unique_ptr<ExecutorProcess> executor;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::pair<coordinator::LeasedJob, std::vector<coordinator::KernelBlob>>> queue;
  bool leasing_done = false;
  // Finished jobs whose reports are still to be sent: the runner hands the device its next job
  // at once instead of waiting for the coordinator's commit of the last one.
  std::deque<std::pair<coordinator::Report, coordinator::LeasedJob>> reports;
  bool running_done = false;
  // Host faults (worker.h): failures in a row, whether the lane counts as faulty, and when it
  // may lease and run again. Guarded by mu.
  int faults_in_a_row = 0;
  bool faulty = false;
  absl::Time resume_at = absl::InfinitePast();
};

Worker::Worker(coordinator::WorkerApi& client, WorkerOptions options)
    : client_(client),
      options_(std::move(options)),
      registry_(options_.registry ? *options_.registry : solver::SolverRegistry::Builtin()) {}

Worker::~Worker() { RequestStop(); }

void Worker::RequestStop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_at_ = std::min(stop_at_, absl::Now());
  }
  if (!stop_flag_.exchange(true)) stop_.Notify();
  UpdateHealth();
}

bool Worker::Healthy() const {
  return registered_ && !stop_flag_ && failed_calls_ < kUnhealthyAfterFailedCalls &&
         faulty_lanes_ == 0 && !benched_;
}

void Worker::NoteCall(const absl::Status& st) {
  if (absl::IsUnauthenticated(st) || absl::IsPermissionDenied(st)) {
    Refused(st);
    return;
  }
  if (Unreachable(st)) {
    {
      std::lock_guard<std::mutex> l(health_mu_);
      last_unreachable_ = st.ToString().substr(0, 240);
    }
    ++failed_calls_;
  } else {
    failed_calls_ = 0;  // any answer, an error included, means the coordinator is there
  }
  UpdateHealth();
}

void Worker::Refused(const absl::Status& st) {
  if (refused_.exchange(true)) return;
  spdlog::error("worker {}: the coordinator refuses this worker's token ({}): it was rotated, is "
                "wrong, or its role may not do this; stopping (NOT_SERVING). Give the worker the "
                "current token of its role and start it again", worker_id(), st.ToString());
  {
    std::lock_guard<std::mutex> l(mu_);
    refusal_ = st;
  }
  RequestStop();
}

void Worker::UpdateHealth() {
  // Evaluated and passed on under one lock, so concurrent changes reach the callback in order
  // and the last call always carries the current value.
  std::lock_guard<std::mutex> l(health_mu_);
  const bool healthy = Healthy();
  if (healthy == health_told_) return;
  health_told_ = healthy;
  if (healthy && was_healthy_) {  // the first time, the registration line says it
    spdlog::info("worker {}: healthy again", worker_id());
  } else if (!healthy && !stop_flag_ && registered_) {
    const std::string why =
        faulty_lanes_ > 0 ? absl::StrCat(faulty_lanes_.load(), " eval lane(s) faulty (backing off)")
        : benched_        ? std::string("benched by the coordinator (no eval leases)")
                          : absl::StrCat("coordinator unreachable or unable to serve for ",
                                         failed_calls_.load(), " calls in a row (last: ",
                                         last_unreachable_, ")");
    spdlog::warn("worker {}: unhealthy: {} (NOT_SERVING)", worker_id(), why);
  }
  was_healthy_ = was_healthy_ || healthy;
  if (options_.on_health_change) options_.on_health_change(healthy);
}

bool Worker::Sleep(absl::Duration d) { return !stop_.WaitForNotificationWithTimeout(d); }

WorkerStats Worker::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  return stats_;
}

std::string Worker::worker_id() const {
  std::lock_guard<std::mutex> l(mu_);
  return worker_id_;
}

template <typename Fn>
auto Worker::Retry(const char* what, Fn fn) -> decltype(fn()) {
  absl::Duration backoff = absl::Milliseconds(100);
  for (int k = 0;; ++k) {
    auto r = fn();
    const absl::Status st = StatusOf(r);
    NoteCall(st);
    if (st.ok() || !IsTransient(st) || stop_flag_) return r;
    // An unreachable coordinator is logged once per change, by UpdateHealth; other transient
    // errors (a busy or restarting coordinator) once per call and then every 100 retries.
    if ((k == 0 && !Unreachable(st)) || (k > 0 && k % 100 == 0)) {
      spdlog::warn("worker {}: {}: {} (retrying with backoff)", worker_id_, what, st.ToString());
    }
    if (!Sleep(backoff)) return r;
    backoff = std::min(backoff * 2, kMaxRetryBackoff);
  }
}

void Worker::Hold(const coordinator::LeasedJob& j, std::function<void()> on_lost) {
  std::lock_guard<std::mutex> l(mu_);
  held_[j.job_id] = Held{j.attempt, false, std::move(on_lost),
                         absl::Now() + absl::Seconds(lease_seconds_)};
}

// Holds are per (job, attempt): the same worker may report a job's compile step (attempt n) and
// lease its eval step (attempt n+1) before the compile side has dropped its hold, and the late
// drop must not erase the newer hold (the eval would then look lost and be dropped unreported,
// stuck until its lease expired).
void Worker::Drop(const coordinator::LeasedJob& job) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = held_.find(job.job_id);
  if (it != held_.end() && it->second.attempt == job.attempt) held_.erase(it);
}

bool Worker::IsLost(const coordinator::LeasedJob& job) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = held_.find(job.job_id);
  return it == held_.end() || it->second.attempt != job.attempt || it->second.lost;
}

bool Worker::ReportHopeless(const coordinator::LeasedJob& job) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = held_.find(job.job_id);
  if (it == held_.end() || it->second.attempt != job.attempt || it->second.lost) return true;
  const absl::Time now = absl::Now();
  return stop_flag_ && (now > it->second.expires || now > stop_at_ + options_.stop_report_wait);
}

void Worker::ReleaseAll(const std::vector<coordinator::LeasedJob>& jobs) {
  if (jobs.empty()) return;
  std::vector<coordinator::Lease> leases;
  for (const auto& j : jobs) leases.push_back({j.job_id, j.attempt});
  // Not Retry: Retry gives up at once when stopping, and a release matters most then.
  absl::StatusOr<int64_t> n;
  for (int k = 0; k < 5; ++k) {
    n = client_.Release(worker_id_, leases);
    if (n.ok() || !IsTransient(n.status())) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 << k));
  }
  if (n.ok()) {
    spdlog::info("worker {}: released {} lease(s)", worker_id_, *n);
  } else {
    spdlog::warn("worker {}: release failed ({}); the leases expire instead", worker_id_,
                 n.status().ToString());
  }
  std::lock_guard<std::mutex> l(mu_);
  for (const auto& j : jobs) {
    auto it = held_.find(j.job_id);
    if (it != held_.end() && it->second.attempt == j.attempt) held_.erase(it);
  }
  if (n.ok()) stats_.released += *n;
}

void Worker::SendReport(coordinator::Report report, const coordinator::LeasedJob& job) {
  report.worker_id = worker_id_;
  report.job_id = job.job_id;
  report.attempt = job.attempt;
  report.step = job.step;
  if (!report.succeeded && report.error.empty()) report.error = "failed (no reason given)";
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!report.succeeded && report.blame == jobs::Blame::kUnsupported) ++stats_.unsupported;
    auto it = held_.find(job.job_id);
    if (it != held_.end() && it->second.attempt == job.attempt) it->second.reporting = true;
  }
  absl::Status st;
  absl::Duration backoff = absl::Milliseconds(100);
  int tries = 0;
  // Until the lease is really lost (see the file comment); past a stop request too, since the
  // result is worth the wait. The job stays held meanwhile, so the heartbeat keeps renewing it.
  for (;; ++tries) {
    st = client_.Report(report);
    NoteCall(st);
    if (st.ok() || !IsTransient(st) || ReportHopeless(job)) break;
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(backoff));
    backoff = std::min(backoff * 2, kMaxRetryBackoff);
  }
  if (tries > 0 && st.ok()) {
    spdlog::info("worker {}: {}: report accepted after {} retries", worker_id_, JobContext(job), tries);
  }
  if (absl::IsInvalidArgument(st) && report.succeeded) {
    // The coordinator refused the result (validation): record the job as failed with why.
    spdlog::error("worker {}: {}: report rejected: {}", worker_id_, JobContext(job), st.ToString());
    coordinator::Report f;
    f.worker_id = worker_id_;
    f.job_id = job.job_id;
    f.attempt = job.attempt;
    f.step = job.step;
    f.error = absl::StrCat("report rejected: ", st.message());
    f.retryable = false;
    st = client_.Report(f);
  }
  if (!st.ok()) {
    spdlog::warn("worker {}: {}: report not accepted: {}", worker_id_, JobContext(job), st.ToString());
  }
  Drop(job);
}

void Worker::HeartbeatLoop() {
  const absl::Duration every = absl::Seconds(std::max(1, lease_seconds_)) / 3;
  bool last_failed = false;
  for (;;) {
    // After a failed renewal, try again soon: a coordinator that is back keeps the leases of the
    // workers that renew within its grace period, and the sooner the better.
    const absl::Duration wait = last_failed ? std::min(every, kMaxRetryBackoff) : every;
    if (!stop_flag_) {
      Sleep(wait);
    } else {  // stopping: keep renewing what still runs, notice quickly when all is done
      const absl::Time until = absl::Now() + wait;
      while (absl::Now() < until) {
        {
          std::lock_guard<std::mutex> l(mu_);
          if (held_.empty()) return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    last_failed = !RenewOnce(last_failed);
  }
}

bool Worker::RenewOnce(bool last_failed) {
  std::vector<coordinator::Lease> leases;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& [id, h] : held_) {
      if (!h.lost) leases.push_back({id, h.attempt});
    }
  }
  if (leases.empty()) return true;
  const absl::Time sent = absl::Now();
  auto held = client_.Renew(worker_id_, leases);
  NoteCall(held.status());
  if (!held.ok()) {
    // Once per run of failures (an unreachable coordinator is also logged by UpdateHealth).
    if (!last_failed) {
      spdlog::warn("worker {}: renew failed: {} (retrying; the leases are kept while the "
                   "coordinator is away)", worker_id_, held.status().ToString());
    }
    return false;
  }
  if (last_failed) spdlog::info("worker {}: leases renewed again", worker_id_);
  std::map<int64_t, int64_t> ok;
  for (const auto& h : *held) ok[h.job_id] = h.attempt;
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> l(mu_);
    for (const auto& lease : leases) {
      auto it = held_.find(lease.job_id);
      if (it == held_.end() || it->second.attempt != lease.attempt) continue;  // done meanwhile
      auto confirmed = ok.find(lease.job_id);
      if (confirmed != ok.end() && confirmed->second == lease.attempt) {
        it->second.expires = sent + absl::Seconds(lease_seconds_);
        continue;
      }
      if (it->second.reporting) continue;  // the report's answer decides (see Held)
      it->second.lost = true;
      ++stats_.lost_leases;
      spdlog::warn("worker {}: lease of job {} (attempt {}) lost", worker_id_, lease.job_id,
                   lease.attempt);
      if (it->second.on_lost) callbacks.push_back(it->second.on_lost);
    }
  }
  for (auto& cb : callbacks) cb();
  return true;
}

void Worker::RunCompile(const coordinator::LeasedJob& job) {
  spdlog::info("worker {}: compiling {}", worker_id_, JobContext(job));
  const auto t0 = std::chrono::steady_clock::now();
  KernelCacheBackend cache(*backend_, disk_cache_.get());
  coordinator::Report report;
  report.succeeded = false;
  auto outcome = CompileJob(job, cache, registry_, options_.tuning, compile_pool_.get());
  if (!outcome.ok()) {
    report.error = absl::StrCat("compile: ", outcome.status().message());
    report.retryable = !absl::IsFailedPrecondition(outcome.status());
    if (absl::IsUnimplemented(outcome.status())) report.blame = jobs::Blame::kUnsupported;
  } else if (outcome->compiled == 0 && outcome->failed > 0) {
    report.error = absl::StrCat("compile: no candidate compiled: ", outcome->first_error);
    report.retryable = false;
  } else {
    std::vector<coordinator::KernelBlob> kernels = cache.TakeBuilt();
    absl::StatusOr<std::vector<int64_t>> ids = PutKernelsInPieces(job, kernels);
    if (!ids.ok()) {
      spdlog::warn("worker {}: {}: put kernels: {}", worker_id_, JobContext(job), ids.status().ToString());
      report.error = absl::StrCat("put kernels: ", ids.status().message());
    } else {
      report.succeeded = true;
      for (size_t i = 0; i < kernels.size() && i < ids->size(); ++i) {
        report.kernels.push_back({(*ids)[i], kernels[i].build_key});
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("worker {}: compiled {}: {} candidates, {} kernels ({} built, {} from the disk "
                 "cache), {} failed, {:.1f} s", worker_id_, JobContext(job), outcome->candidates,
                 kernels.size(), cache.builds(), cache.disk_hits(), outcome->failed, s);
  }
  if (IsLost(job)) {
    spdlog::warn("worker {}: {}: lease lost during compile; result dropped", worker_id_, JobContext(job));
    Drop(job);
    return;
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    ++(report.succeeded ? stats_.compiled : stats_.compile_failed);
  }
  if (!report.succeeded) spdlog::warn("worker {}: {}: {}", worker_id_, JobContext(job), report.error);
  report.timings.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  SendReport(std::move(report), job);
}

absl::StatusOr<std::vector<int64_t>> Worker::PutKernelsInPieces(
    const coordinator::LeasedJob& job, const std::vector<coordinator::KernelBlob>& kernels) {
  std::vector<int64_t> ids;
  for (size_t begin = 0; begin < kernels.size();) {
    size_t end = begin, bytes = 0;
    while (end < kernels.size() && (end == begin || bytes + kernels[end].code_object.size() <= kPutKernelsBytes)) {
      bytes += kernels[end++].code_object.size();
    }
    const std::vector<coordinator::KernelBlob> piece(kernels.begin() + begin, kernels.begin() + end);
    auto got = Retry("put kernels", [&] { return client_.PutKernels(worker_id_, job.job_id, job.attempt, piece); });
    if (!got.ok()) return got.status();
    ids.insert(ids.end(), got->begin(), got->end());
    begin = end;
  }
  return ids;
}

void Worker::CompileLoop(int index) {
  while (!stop_flag_) {
    coordinator::LeaseRequest req;
    req.worker_id = worker_id_;
    req.step = jobs::JobStep::kCompile;
    req.compile_backends = {backend_->Name()};
    req.max_jobs = std::max(1, options_.lease_batch);
    req.wait = options_.lease_wait;
    auto jobs = Retry("lease compile jobs", [&] { return client_.Lease(req); });
    if (!jobs.ok()) {
      if (!stop_flag_) spdlog::warn("worker {}: compile lease: {}", worker_id_, jobs.status().ToString());
      Sleep(absl::Seconds(1));
      continue;
    }
    for (const auto& j : *jobs) Hold(j);
    for (size_t k = 0; k < jobs->size(); ++k) {
      if (stop_flag_) {
        ReleaseAll(std::vector<coordinator::LeasedJob>(jobs->begin() + k, jobs->end()));
        break;
      }
      RunCompile((*jobs)[k]);
    }
  }
  spdlog::debug("worker {}: compile thread {} stopped", worker_id_, index);
}

void Worker::SetBenched(bool benched, const std::string& why) {
  if (benched_.exchange(benched) == benched) return;
  if (benched) {
    spdlog::warn("worker {}: the coordinator refuses eval leases: {}; asking again every {} s",
                 worker_id_, why, absl::ToDoubleSeconds(options_.benched_retry));
  } else {
    spdlog::info("worker {}: the coordinator leases eval jobs to this host again", worker_id_);
  }
  UpdateHealth();
}

void Worker::NoteDeviceOutcome(EvalLane* lane, const coordinator::Report& report, bool killed) {
  const bool host = !report.succeeded && report.blame == jobs::Blame::kHost;
  std::vector<coordinator::LeasedJob> handback;
  absl::Duration backoff;
  int in_a_row = 0;
  {
    std::lock_guard<std::mutex> l(lane->mu);
    if (!host && !killed) {  // the device ran the step to its end
      lane->faults_in_a_row = 0;
      if (!lane->faulty) return;
      lane->faulty = false;
      --faulty_lanes_;
      spdlog::info("worker {}: {} works again", worker_id_, lane->Name());
    } else {
      in_a_row = ++lane->faults_in_a_row;
      if (!host && in_a_row < 2) return;  // one crash is the job's business (quarantine)
      backoff = options_.device_backoff_first;
      for (int k = host ? 1 : 2; k < in_a_row && backoff < options_.device_backoff_max; ++k) {
        backoff *= 2;
      }
      backoff = std::min(backoff, options_.device_backoff_max);
      lane->resume_at = absl::Now() + backoff;
      if (!lane->faulty) ++faulty_lanes_;
      lane->faulty = true;
      for (auto& q : lane->queue) handback.push_back(q.first);
      lane->queue.clear();
      lane->cv.notify_all();
    }
  }
  if (in_a_row > 0) {
    {
      std::lock_guard<std::mutex> l(mu_);
      ++stats_.device_backoffs;
      if (host) ++stats_.host_faults;
    }
    spdlog::warn("worker {}: {} {}: backing off {:.1f} s ({} failure(s) in a row: {}); "
                 "{} queued job(s) handed back; NOT_SERVING until it works again",
                 worker_id_, lane->Name(), host ? "unusable" : "keeps losing its executor",
                 absl::ToDoubleSeconds(backoff), in_a_row, report.error, handback.size());
    ReleaseAll(handback);
  }
  UpdateHealth();
}

bool Worker::WaitDeviceBackoff(EvalLane* lane) {
  std::unique_lock<std::mutex> l(lane->mu);
  while (!stop_flag_) {
    const absl::Duration left = lane->resume_at - absl::Now();
    if (left <= absl::ZeroDuration()) return true;
    lane->cv.wait_for(l, absl::ToChronoMilliseconds(std::min(left, absl::Milliseconds(200))));
  }
  return false;
}

std::vector<coordinator::KernelBlob> Worker::TrustedKernels(
    const coordinator::LeasedJob& job, std::vector<coordinator::KernelBlob> kernels) {
  size_t dropped = 0;
  kernels = worker::TrustedKernels(backend_->Kind(), std::move(kernels), &dropped);
  if (dropped > 0) {
    spdlog::warn("worker {}: {}: {} shared object(s) without a compile-role builder are not "
                 "loaded; they are built here instead", worker_id_, JobContext(job), dropped);
  }
  return kernels;
}

void Worker::EvalLeaseLoop(EvalLane* lane) {
  const size_t ahead = static_cast<size_t>(std::max(1, options_.lease_batch));
  while (!stop_flag_) {
    if (!WaitDeviceBackoff(lane)) break;
    {  // prefetch at most `ahead` jobs beyond the running one
      std::unique_lock<std::mutex> l(lane->mu);
      lane->cv.wait_for(l, std::chrono::milliseconds(200), [&] { return lane->queue.size() < ahead || stop_flag_; });
      if (lane->queue.size() >= ahead) continue;
    }
    if (stop_flag_) break;
    coordinator::LeaseRequest req;
    req.worker_id = worker_id_;
    req.step = jobs::JobStep::kEval;
    req.device = lane->device;
    req.max_jobs = static_cast<int>(ahead);
    req.wait = options_.lease_wait;
    auto jobs = Retry("lease eval jobs", [&] { return client_.Lease(req); });
    if (absl::IsFailedPrecondition(jobs.status())) {  // this host is benched (coordinator.h)
      SetBenched(true, std::string(jobs.status().message()));
      Sleep(options_.benched_retry);
      continue;
    }
    if (!jobs.ok()) {
      if (!stop_flag_) spdlog::warn("worker {}: eval lease: {}", worker_id_, jobs.status().ToString());
      Sleep(absl::Seconds(1));
      continue;
    }
    SetBenched(false, "");
    for (const auto& j : *jobs) {
      Hold(j, [lane, id = j.job_id] {
        // The runner kills the executor only if it is running this job (checked there).
        (void)id;
        lane->cv.notify_all();
      });
    }
    for (size_t k = 0; k < jobs->size(); ++k) {
      const auto& j = (*jobs)[k];
      auto kernels = Retry("fetch kernels", [&] { return client_.FetchKernels(worker_id_, j.job_id, j.attempt); });
      std::vector<coordinator::KernelBlob> ks;
      if (kernels.ok()) {
        ks = TrustedKernels(j, *std::move(kernels));
      } else {  // not fatal: the executor compiles what is missing
        spdlog::warn("worker {}: {}: fetch kernels: {}", worker_id_, JobContext(j), kernels.status().ToString());
      }
      std::lock_guard<std::mutex> l(lane->mu);
      lane->queue.emplace_back(j, std::move(ks));
      lane->cv.notify_all();
    }
  }
  std::lock_guard<std::mutex> l(lane->mu);
  lane->leasing_done = true;
  lane->cv.notify_all();
}

void Worker::EvalRunLoop(EvalLane* lane) {
  for (;;) {
    std::pair<coordinator::LeasedJob, std::vector<coordinator::KernelBlob>> item;
    std::vector<coordinator::LeasedJob> upcoming;  // prefetched: their evaluators are prepared early
    {
      std::unique_lock<std::mutex> l(lane->mu);
      lane->cv.wait(l, [&] { return !lane->queue.empty() || lane->leasing_done || stop_flag_; });
      if (stop_flag_) {
        // Stopping: what is queued was never started; hand it back.
        std::vector<coordinator::LeasedJob> rest;
        for (auto& q : lane->queue) rest.push_back(q.first);
        lane->queue.clear();
        l.unlock();
        ReleaseAll(rest);
        l.lock();
        if (lane->leasing_done && lane->queue.empty()) return;
        lane->cv.wait_for(l, std::chrono::milliseconds(100));
        continue;
      }
      if (lane->queue.empty()) return;
      item = std::move(lane->queue.front());
      lane->queue.pop_front();
      for (const auto& q : lane->queue) upcoming.push_back(q.first);
      lane->cv.notify_all();
    }
    coordinator::LeasedJob& job = item.first;
    if (IsLost(job)) {
      Drop(job);
      continue;
    }
    if (!WaitDeviceBackoff(lane)) {  // leased while the device was failing, and now stopping
      ReleaseAll({job});
      continue;
    }
    if (job.kind == "perf") job.rival_ms = fastest_.Rival(job.config_id, job.rival_ms);
    spdlog::info("worker {}: evaluating {} on {} {}", worker_id_, JobContext(job),
                 lane->device.arch, lane->Name());
    const auto t0 = std::chrono::steady_clock::now();
    // Kill the executor if the lease is lost mid-run (someone else owns the job now).
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = held_.find(job.job_id);
      if (it != held_.end()) {
        ExecutorProcess* ex = lane->executor.get();
        it->second.on_lost = [ex] { ex->Kill(); };
      }
    }
    auto out = lane->executor->Run(job, item.second, options_.eval_deadline, upcoming);
    {
      std::lock_guard<std::mutex> l(mu_);
      auto it = held_.find(job.job_id);
      if (it != held_.end()) it->second.on_lost = nullptr;
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    coordinator::Report report;
    if (!out.ok()) {  // the executor could not be started: the host's fault
      report.error = absl::StrCat("executor: ", out.status().message());
      report.retryable = true;
      report.blame = jobs::Blame::kHost;
    } else {
      report = std::move(out->report);
    }
    if (IsLost(job)) {
      spdlog::warn("worker {}: {}: lease lost during eval; result dropped", worker_id_, JobContext(job));
      Drop(job);
      continue;
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      ++(report.succeeded ? stats_.evaluated : stats_.eval_failed);
      if (out.ok() && out->killed) ++stats_.executor_kills;
    }
    NoteDeviceOutcome(lane, report, out.ok() && out->killed);
    fastest_.Note(job.config_id, report);
    LogEvalOutcome(job, report, s);
    std::lock_guard<std::mutex> l(lane->mu);
    lane->reports.emplace_back(std::move(report), job);
    lane->cv.notify_all();
  }
}

void Worker::LogEvalOutcome(const coordinator::LeasedJob& job, const coordinator::Report& report,
                            double seconds) {
  if (report.succeeded) {
    spdlog::info("worker {}: evaluated {} in {:.1f} s: {}", worker_id_, JobContext(job), seconds,
                 EvalSummary(job, report));
  } else {
    spdlog::warn("worker {}: {} failed after {:.1f} s: {}", worker_id_, JobContext(job), seconds,
                 report.error);
  }
}

void Worker::EvalReportLoop(EvalLane* lane) {
  for (;;) {
    std::pair<coordinator::Report, coordinator::LeasedJob> item;
    {
      std::unique_lock<std::mutex> l(lane->mu);
      lane->cv.wait(l, [&] { return !lane->reports.empty() || lane->running_done; });
      if (lane->reports.empty()) return;  // the runner has ended and every report is sent
      item = std::move(lane->reports.front());
      lane->reports.pop_front();
    }
    SendReport(std::move(item.first), item.second);
  }
}

absl::StatusOr<std::vector<backend::DeviceInfo>> Worker::OpenBackendAndDevices() {
  auto detected = backend::DetectBackends(backend::DetectOptions::FromEnv());
  std::vector<backend::DeviceInfo> devices;
  for (auto& d : detected) {
    if (!options_.backend.empty() && options_.backend != d.backend->Name()) continue;
    if (!d.usable) continue;
    auto list = d.backend->ListDevices();
    const bool has_devices = list.ok() && !list->empty();
    if (options_.backend.empty() && !has_devices) continue;
    if (has_devices) devices = *list;
    backend_ = std::move(d.backend);
    break;
  }
  if (!backend_) {
    return absl::UnavailableError(options_.backend.empty()
                                      ? "no usable backend with a device on this host"
                                      : absl::StrCat("backend ", options_.backend, " is not usable here"));
  }
  std::vector<backend::DeviceInfo> chosen;
  for (const auto& d : devices) {
    if (options_.devices.empty() ||
        std::find(options_.devices.begin(), options_.devices.end(), d.index) != options_.devices.end()) {
      chosen.push_back(d);
    }
  }
  if (options_.eval && chosen.empty()) {
    return absl::UnavailableError(absl::StrCat("no ", backend_->Name(), " device matches --devices"));
  }
  if (options_.compile && !backend_->CompilerStatus().ok()) {
    return absl::UnavailableError(absl::StrCat(backend_->Name(), " compiler: ",
                                               backend_->CompilerStatus().message()));
  }
  return chosen;
}

absl::Status Worker::Register(const std::vector<backend::DeviceInfo>& chosen) {
  coordinator::WorkerRegistration reg;
  if (options_.host.empty()) {
    char host[256] = {0};
    gethostname(host, sizeof(host) - 1);
    reg.host = host;
  } else {
    reg.host = options_.host;
  }
  reg.version = options_.version;
  for (const auto& d : chosen) {
    reg.devices.push_back({backend_->Name(), d.arch, d.compute_units, d.index, d.global_memory_bytes});
  }
  auto registered = Retry("register", [&] { return client_.Register(reg); });
  if (!registered.ok()) {
    if (stop_flag_) return absl::CancelledError("stopped before registering");
    return registered.status();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    worker_id_ = registered->worker_id;
  }
  lease_seconds_ = registered->lease_seconds;
  spdlog::info("worker {}: registered ({} backend, {} device(s), steps {}{}, {} compile thread(s), "
               "{} executor(s) per device{}, lease {} s)",
               worker_id_, backend_->Name(), chosen.size(), options_.compile ? "compile " : "",
               options_.eval ? "eval" : "", options_.compile ? options_.compile_jobs : 0,
               executors_per_device_,
               device_lock_dir_.empty() ? "" : absl::StrCat(", device locks in ", device_lock_dir_),
               lease_seconds_);
  registered_ = true;
  UpdateHealth();
  return absl::OkStatus();
}

std::unique_ptr<Worker::EvalLane> Worker::StartEvalLane(const backend::DeviceInfo& d, int slot,
                                                        std::vector<std::thread>& threads) {
  auto lane = std::make_unique<EvalLane>();
  lane->device = {backend_->Name(), d.arch, d.compute_units, d.index, d.global_memory_bytes};
  lane->slot = slot;
  lane->slots = executors_per_device_;
  std::vector<std::string> argv = options_.executor_argv;
  if (argv.empty()) argv = {"/proc/self/exe", "worker", "--executor"};
  for (const std::string& a : {std::string("--backend"), backend_->Name(), std::string("--devices"),
                               std::to_string(d.index)}) {
    argv.push_back(a);
  }
  for (const std::string& a : JobTuningArgs(options_.tuning)) argv.push_back(a);
  if (disk_cache_) {
    argv.push_back("--kernel-cache");
    argv.push_back(disk_cache_->dir());
  }
  if (!device_lock_dir_.empty()) {
    for (const std::string& a : {std::string("--device-lock"),
                                 DeviceLockPath(device_lock_dir_, backend_->Name(), d.index),
                                 std::string("--executors-per-device"),
                                 std::to_string(executors_per_device_)}) {
      argv.push_back(a);
    }
  }
  lane->executor = std::make_unique<ExecutorProcess>(argv);
  if (absl::Status st = lane->executor->StartEarly(); !st.ok()) {
    spdlog::warn("worker {}: executor for {} not started yet: {}", worker_id_, lane->Name(),
                 st.ToString());
  }
  EvalLane* p = lane.get();
  threads.emplace_back([this, p] { EvalLeaseLoop(p); });
  threads.emplace_back([this, p] {
    EvalRunLoop(p);
    std::lock_guard<std::mutex> l(p->mu);
    p->running_done = true;
    p->cv.notify_all();
  });
  threads.emplace_back([this, p] { EvalReportLoop(p); });
  return lane;
}

absl::Status Worker::ResolveDeviceSharing() {
  executors_per_device_ = options_.executors_per_device > 0
                              ? options_.executors_per_device
                              : (backend_->Kind() == backend::BackendKind::kCpu ? 1 : 2);
  // A lone executor per device runs as before, without a lock.
  if (!options_.eval || executors_per_device_ == 1) return absl::OkStatus();
  const std::string dir =
      options_.device_lock_dir.empty() ? DefaultDeviceLockDir() : options_.device_lock_dir;
  if (absl::Status st = PrepareDeviceLockDir(dir); !st.ok()) return st;
  device_lock_dir_ = dir;
  return absl::OkStatus();
}

absl::Status Worker::Run() {
  auto chosen = OpenBackendAndDevices();
  if (!chosen.ok()) return chosen.status();
  if (absl::Status st = ResolveDeviceSharing(); !st.ok()) return st;
  if (!options_.kernel_cache_dir.empty()) {
    auto disk = backend::DiskKernelCache::Open(options_.kernel_cache_dir);
    if (!disk.ok()) return disk.status();
    disk_cache_ = *std::move(disk);
  }
  if (absl::Status st = Register(*chosen); !st.ok()) return st;

  std::vector<std::thread> threads;
  std::vector<std::unique_ptr<EvalLane>> lanes;
  if (options_.compile) {
    compile_pool_ = std::make_unique<search::CompilePool>(std::max(1, options_.compile_jobs),
                                                          options_.compile_nice);
    for (int i = 0; i < std::max(1, options_.compile_jobs); ++i) threads.emplace_back([this, i] { CompileLoop(i); });
  }
  if (options_.eval) {
    for (const auto& d : *chosen) {
      for (int slot = 0; slot < executors_per_device_; ++slot) {
        lanes.push_back(StartEvalLane(d, slot, threads));
      }
    }
  }
  std::thread heartbeat([this] { HeartbeatLoop(); });
  stop_.WaitForNotification();
  spdlog::info("worker {}: stopping: no new leases; finishing jobs in progress", worker_id_);
  for (auto& lane : lanes) lane->cv.notify_all();
  for (auto& t : threads) t.join();
  heartbeat.join();
  for (auto& lane : lanes) {
    if (lane->executor) lane->executor->Close();  // all exit at once; clear() reaps them
  }
  lanes.clear();
  const WorkerStats s = stats();
  spdlog::info("worker {}: stopped: {} compiled, {} compile failures, {} evaluated, {} eval failures, "
               "{} executor kills, {} released, {} host faults, {} device backoffs, {} unsupported",
               worker_id_, s.compiled, s.compile_failed, s.evaluated, s.eval_failed,
               s.executor_kills, s.released, s.host_faults, s.device_backoffs, s.unsupported);
  std::lock_guard<std::mutex> l(mu_);
  return refusal_;
}

}  // namespace tuna::worker
