#include "coordinator/coordinator.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/notification.h"
#include "coordinator/metrics.h"
#include "schema/store/session_store.h"
#include "schema/store/worker_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/solver/target.h"

namespace tuna::coordinator {
namespace {


constexpr size_t kMaxIdLength = 191;  // job.lease_owner
constexpr size_t kMaxError = 64 * 1024;
constexpr size_t kMaxParams = 1024;
constexpr size_t kMaxSamples = 100000;
constexpr size_t kMaxKernels = 100000;
constexpr size_t kMaxDevices = 64;

bool IsBackend(const std::string& b) { return b == "cpu" || b == "cuda" || b == "hip"; }

// A lease poll that ended while the database was unreachable: not an empty answer (a worker
// would read that as a coordinator that serves).
absl::Status NoDatabase() {
  return absl::UnavailableError(
      "the coordinator's database is unreachable: no job can be leased until it is back");
}

bool PrintableAscii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
}

absl::Status CheckText(const std::string& what, const std::string& s, size_t max,
                       bool allow_empty = false) {
  if (!allow_empty && s.empty()) return absl::InvalidArgumentError(what + " is empty");
  if (s.size() > max) {
    return absl::InvalidArgumentError(absl::StrCat(what, " is longer than ", max, " bytes"));
  }
  if (!PrintableAscii(s)) {
    return absl::InvalidArgumentError(what + " holds non-printable or non-ASCII bytes");
  }
  return absl::OkStatus();
}

std::string ArchBase(const std::string& arch) { return arch.substr(0, arch.find(':')); }

const std::vector<std::string>& DispositionNames() {
  static const auto* names = new std::vector<std::string>{
      "Passed", "CompileFailed", "LaunchFailed", "Incorrect", "Timeout", "NotApplicable",
      "Skipped"};
  return *names;
}

std::string FilterKey(const LeaseRequest& r) {
  if (r.step == JobStep::kCompile) {
    std::vector<std::string> b = r.compile_backends;
    std::sort(b.begin(), b.end());
    return absl::StrCat("compile|", absl::StrJoin(b, ","));
  }
  return absl::StrCat("eval|", r.device->backend, "|", r.device->arch, "|", r.device->num_cu);
}

std::string RandomHex(int n) {
  std::random_device rd;
  std::mt19937_64 gen((static_cast<uint64_t>(rd()) << 32) ^ rd());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < n; ++i) s.push_back(kHex[gen() & 15]);
  return s;
}

// Metrics are optional (null in benchmarks and most tests): these helpers make that one check.
void Count(Metrics* m, const char* name, const Labels& labels, double delta = 1) {
  if (m != nullptr) m->Add(name, labels, delta);
}
void DbError(Metrics* m, const char* operation) {
  Count(m, "tuna_db_errors_total", {{"operation", operation}});
}
void Seen(Metrics* m, const std::string& worker_id) {
  if (m != nullptr) m->WorkerSeen(worker_id);
}

// The worker's own measure of an applied step (the host names the series: a worker id changes
// with every restart).
void CountTimings(Metrics* m, const schema::StepReport& rep, const StepTimings& t) {
  if (t.wall_seconds <= 0) return;  // not reported
  m->Observe("tuna_worker_step_seconds", {{"step", jobs::ToString(rep.step)}}, t.wall_seconds);
  if (rep.step != JobStep::kEval) return;
  const Labels worker{{"worker", rep.owner.substr(0, rep.owner.find('/'))}};
  m->Add("tuna_worker_eval_seconds_total", worker, t.wall_seconds);
  m->Add("tuna_worker_device_seconds_total", worker, t.device_seconds);
  m->Add("tuna_worker_kernel_seconds_total", worker, t.kernel_seconds);
}

// The serving grace (coordinator.h): one lease unless set.
absl::Duration Grace(const CoordinatorOptions& o) {
  return o.restart_grace < absl::ZeroDuration() ? absl::Seconds(o.lease_seconds) : o.restart_grace;
}

}  // namespace

struct Coordinator::Waiter {
  LeaseRequest req;
  std::string key;
  std::map<int64_t, std::set<int64_t>> excluded;  // per session: solvers it reported unsupported
  absl::Time started;
  absl::Time deadline;
  bool taken = false;  // by a dispatcher, for its claim
  bool end_after_claim = false;  // EndPolls came while taken: answered when the claim ends
  absl::Status status;
  std::vector<LeasedJob> jobs;
  LeaseDone done;  // called once, never under mu_ (Answer)
};

struct Coordinator::PendingReport {
  schema::StepReport report;
  StepTimings timings;  // counted into the metrics once the report is applied
  std::function<void(absl::Status)> done;  // called once, never under mu_
};

Coordinator::Coordinator(schema::Database& db, CoordinatorOptions options)
    : db_(db),
      options_(options),
      store_(db, schema::LeaseStoreOptions{.lease_seconds = options.lease_seconds,
                                           .max_retries = options.max_retries,
                                           .quarantine_kills = options.quarantine_kills,
                                           .reuse_prior_results = options.reuse_prior_results}),
      host_faults_(options.max_host_faults, options.host_bench) {}

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Create(schema::Database& db,
                                                                  CoordinatorOptions options) {
  if (options.lease_seconds < 1 || options.max_retries < 1 || options.quarantine_kills < 1 ||
      options.dispatcher_threads < 1 || options.max_claim_batch < 1 ||
      options.max_report_batch < 1 || options.max_jobs_per_lease < 1 ||
      options.max_host_faults < 1 || options.host_bench < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("coordinator options must be positive");
  }
  std::unique_ptr<Coordinator> c(new Coordinator(db, options));
  if (absl::Status st = c->RefreshSessions(true); !st.ok()) return st;
  auto db_now = c->store_.DatabaseNow();
  if (!db_now.ok()) return db_now.status();
  c->BeginServing(*db_now);
  spdlog::info("coordinator: serving; for the first {} s no lease is reaped (workers reconnect and "
               "renew), and leases from before this start that expire are not counted as retries",
               absl::ToInt64Seconds(Grace(options)));
  for (int i = 0; i < options.dispatcher_threads; ++i) {
    c->threads_.emplace_back([p = c.get()] { p->DispatchLoop(); });
  }
  c->threads_.emplace_back([p = c.get()] { p->ExpireLoop(); });
  c->threads_.emplace_back([p = c.get()] { p->ReportLoop(); });
  if (options.reap_interval > absl::ZeroDuration()) {
    c->threads_.emplace_back([p = c.get()] { p->ReapLoop(); });
  }
  return c;
}

Coordinator::~Coordinator() { Shutdown(); }

std::vector<std::shared_ptr<Coordinator::Waiter>> Coordinator::TakeIdleWaiters() {
  std::vector<std::shared_ptr<Waiter>> idle;  // a dispatcher answers those it holds
  for (auto it = waiters_.begin(); it != waiters_.end();) {
    if ((*it)->taken) {
      ++it;
      continue;
    }
    idle.push_back(*it);
    it = waiters_.erase(it);
  }
  return idle;
}

void Coordinator::EndPolls() {
  std::vector<std::shared_ptr<Waiter>> ended;
  {
    absl::MutexLock l(&mu_);
    ended = TakeIdleWaiters();
    for (auto& w : waiters_) w->end_after_claim = true;  // the ones left are held by a claim
  }
  for (auto& w : ended) Answer(*w);
}

void Coordinator::Shutdown() {
  std::vector<std::shared_ptr<Waiter>> ended;
  {
    absl::MutexLock l(&mu_);
    if (shutdown_ && threads_.empty()) return;
    shutdown_ = true;
    ended = TakeIdleWaiters();
  }
  for (auto& w : ended) {
    w->status = absl::UnavailableError("coordinator shutting down");
    Answer(*w);
  }
  // The reporter commits what is queued before it ends (SubmitReport refuses new ones now).
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
  std::deque<std::shared_ptr<PendingReport>> left;  // none unless the reporter was never started
  {
    absl::MutexLock l(&mu_);
    left.swap(reports_);
  }
  for (auto& r : left) r->done(absl::UnavailableError("coordinator shutting down"));
}

absl::Status Coordinator::RefreshSessions(bool force) {
  absl::MutexLock l(&sessions_mu_);
  if (!force && absl::Now() - sessions_loaded_ < options_.session_refresh) {
    return absl::OkStatus();
  }
  auto targets = schema::SessionStore(db_).Targets();
  if (!NoteDb(targets.status()).ok()) return targets.status();
  sessions_.clear();
  session_by_id_.clear();
  for (const schema::SessionTarget& t : *targets) {
    SessionRow s{t.id, t.arch, static_cast<int>(t.num_cu), absl::AsciiStrToLower(t.backend)};
    sessions_.push_back(s);
    session_by_id_[s.id] = s;
  }
  sessions_loaded_ = absl::Now();
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> Coordinator::MatchingSessions(const LeaseRequest& req) {
  if (absl::Status st = RefreshSessions(false); !st.ok()) return st;
  absl::MutexLock l(&sessions_mu_);
  std::vector<int64_t> out;
  for (const SessionRow& s : sessions_) {
    if (!options_.only_sessions.empty() &&
        std::find(options_.only_sessions.begin(), options_.only_sessions.end(), s.id) ==
            options_.only_sessions.end()) {
      continue;
    }
    if (req.step == JobStep::kCompile) {
      if (std::find(req.compile_backends.begin(), req.compile_backends.end(), s.backend) !=
          req.compile_backends.end()) {
        out.push_back(s.id);
      }
    } else if (s.backend == req.device->backend &&
               ArchBase(s.arch) == ArchBase(req.device->arch) &&
               (s.num_cu <= 0 || req.device->num_cu <= 0 || s.num_cu == req.device->num_cu)) {
      out.push_back(s.id);
    }
  }
  return out;
}

absl::StatusOr<Registered> Coordinator::Register(const WorkerRegistration& w) {
  if (w.protocol_version != kProtocolVersion) {
    return absl::FailedPreconditionError(absl::StrCat("protocol version ", w.protocol_version,
                                                      " is not supported (want ",
                                                      kProtocolVersion, ")"));
  }
  if (auto st = CheckText("host", w.host, 128); !st.ok()) return st;
  if (auto st = CheckText("version", w.version, 64, true); !st.ok()) return st;
  if (w.devices.size() > kMaxDevices) return absl::InvalidArgumentError("too many devices");
  for (const Device& d : w.devices) {
    if (!IsBackend(d.backend)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown backend '", d.backend, "'"));
    }
    if (auto st = CheckText("arch", d.arch, 64); !st.ok()) return st;
    if (d.num_cu < 0 || d.index < 0 || d.index > 4096) {
      return absl::InvalidArgumentError("device num_cu/index out of range");
    }
  }
  for (const Device& d : w.devices) {
    absl::Status st = NoteDb(schema::WorkerStore(db_).Upsert(
        {w.host, d.index, d.arch, d.num_cu, absl::AsciiStrToUpper(d.backend), w.version}));
    if (!st.ok()) {
      DbError(options_.metrics, "register");
      return st;
    }
  }
  Registered r;
  // Unique per registration: a restarted worker is a new lease owner, so leases of its
  // previous life cannot be reported by it by mistake.
  r.worker_id = absl::StrCat(w.host.substr(0, 100), "/", RandomHex(16));
  r.lease_seconds = options_.lease_seconds;
  Count(options_.metrics, "tuna_worker_registrations_total", {});
  Seen(options_.metrics, r.worker_id);
  spdlog::info("coordinator: registered worker {} ({} devices)", r.worker_id, w.devices.size());
  return r;
}

absl::StatusOr<std::vector<LeasedJob>> Coordinator::LeaseJobs(const LeaseRequest& req) {
  absl::Notification answered;
  absl::StatusOr<std::vector<LeasedJob>> out;
  LeaseJobsAsync(req, [&](absl::StatusOr<std::vector<LeasedJob>> jobs) {
    out = std::move(jobs);
    answered.Notify();
  });
  answered.WaitForNotification();
  return out;
}

// Checks the request and queues it for the dispatchers; past its deadline the expiry thread
// ends it unless a dispatcher holds it (its claim is short, and the jobs it gets must not be
// lost: HandOut answers it then).
void Coordinator::LeaseJobsAsync(const LeaseRequest& req, LeaseDone done) {
  if (absl::Status st = ValidateLease(req); !st.ok()) {
    done(st);
    return;
  }
  Metrics* const m = options_.metrics;
  Seen(m, req.worker_id);
  Count(m, "tuna_lease_requests_total", {{"step", jobs::ToString(req.step)}});
  if (req.step == JobStep::kEval) {
    if (absl::Status st = host_faults_.CheckEvalLease(req.worker_id, absl::Now()); !st.ok()) {
      done(st);
      return;
    }
  }
  auto w = std::make_shared<Waiter>();
  w->started = absl::Now();
  w->req = req;
  w->excluded = host_faults_.Unsupported(req.worker_id);
  w->key = FilterKey(req);
  // Waiters of one claim share their exclusions: a worker that excludes some gets its own batch.
  for (const auto& [session, solvers] : w->excluded) {
    absl::StrAppend(&w->key, "|x", session, ":", absl::StrJoin(solvers, ","));
  }
  w->deadline = absl::Now() + std::min(req.wait, options_.max_wait);
  w->done = std::move(done);
  {
    absl::MutexLock l(&mu_);
    if (!shutdown_) {
      waiters_.push_back(w);
      if (w->deadline < next_expiry_) {
        next_expiry_ = w->deadline;
        expiry_moved_ = true;
      }
      if (m != nullptr) m->Set("tuna_lease_waiters", {}, static_cast<double>(waiters_.size()));
      return;
    }
  }
  w->status = absl::UnavailableError("coordinator shutting down");
  Answer(*w);
}

absl::Status Coordinator::ValidateLease(const LeaseRequest& req) {
  if (auto st = CheckText("worker_id", req.worker_id, kMaxIdLength); !st.ok()) return st;
  if (req.max_jobs < 1 || req.max_jobs > options_.max_jobs_per_lease) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_jobs must be in 1..", options_.max_jobs_per_lease));
  }
  if (req.wait < absl::ZeroDuration()) return absl::InvalidArgumentError("negative wait");
  if (req.step == JobStep::kCompile) {
    if (req.compile_backends.empty() || req.compile_backends.size() > 3) {
      return absl::InvalidArgumentError("compile lease needs 1..3 compile backends");
    }
    for (const auto& b : req.compile_backends) {
      if (!IsBackend(b)) return absl::InvalidArgumentError(absl::StrCat("unknown backend '", b, "'"));
    }
    return absl::OkStatus();
  }
  if (!req.device) return absl::InvalidArgumentError("eval lease needs a device");
  if (!IsBackend(req.device->backend)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown backend '", req.device->backend, "'"));
  }
  return CheckText("device arch", req.device->arch, 64);
}

void Coordinator::Answer(Waiter& w) {
  Metrics* const m = options_.metrics;
  if (!w.status.ok()) {
    w.done(w.status);
    return;
  }
  if (m != nullptr && !w.jobs.empty()) {
    const Labels step_label{{"step", jobs::ToString(w.req.step)}};
    m->Add("tuna_leases_total", step_label, static_cast<double>(w.jobs.size()));
    m->Observe("tuna_lease_latency_seconds", step_label,
               absl::ToDoubleSeconds(absl::Now() - w.started));
  }
  w.done(std::move(w.jobs));
}

void Coordinator::ExpireLoop() {
  for (;;) {
    std::vector<std::shared_ptr<Waiter>> ended;
    {
      absl::MutexLock l(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return shutdown_ || expiry_moved_;
      };
      mu_.AwaitWithDeadline(absl::Condition(&woken), next_expiry_);
      if (shutdown_) return;  // Shutdown answers the waiters left
      expiry_moved_ = false;
      const absl::Time now = absl::Now();
      next_expiry_ = absl::InfiniteFuture();
      for (auto it = waiters_.begin(); it != waiters_.end();) {
        const Waiter& w = **it;
        if (w.deadline <= now && !w.taken) {
          ended.push_back(*it);
          it = waiters_.erase(it);
          continue;
        }
        // A held waiter past its deadline is answered by its dispatcher (HandOut).
        if (w.deadline > now) next_expiry_ = std::min(next_expiry_, w.deadline);
        ++it;
      }
    }
    if (ended.empty()) continue;
    // An empty poll while the database is away is no answer: the worker would read it as a
    // coordinator that serves (SERVING between its failed renewals, twice a line per cycle).
    const bool reachable = DatabaseReachable();
    for (auto& w : ended) {
      if (!reachable) w->status = NoDatabase();
      Answer(*w);
    }
  }
}

void Coordinator::DispatchLoop() {
  while (true) {
    std::vector<std::shared_ptr<Waiter>> batch;
    if (!TakeBatch(&batch)) return;  // shutting down
    if (batch.empty()) continue;
    std::vector<schema::ClaimedJob> claimed;
    const absl::Status status = ClaimFor(batch, &claimed);
    HandOut(batch, claimed, status);
  }
}

// Waits for waiters whose filter is not dry and takes those of one filter, up to
// max_claim_batch jobs. False when shutting down.
bool Coordinator::TakeBatch(std::vector<std::shared_ptr<Waiter>>* out) {
  std::vector<std::shared_ptr<Waiter>>& batch = *out;
  absl::MutexLock l(&mu_);
  auto eligible = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (shutdown_) return true;
    const absl::Time now = absl::Now();
    for (const auto& w : waiters_) {
      if (w->taken) continue;
      auto it = dry_until_.find(w->key);
      if (it == dry_until_.end() || it->second <= now) return true;
    }
    return false;
  };
  // Dry filters become eligible again by time alone: wake periodically to re-check.
  mu_.AwaitWithTimeout(absl::Condition(&eligible), absl::Milliseconds(50));
  if (shutdown_) return false;
  const absl::Time now = absl::Now();
  std::string key;
  int wanted = 0;
  for (const auto& w : waiters_) {
    if (w->taken) continue;
    if (key.empty()) {
      auto it = dry_until_.find(w->key);
      if (it != dry_until_.end() && it->second > now) continue;
      key = w->key;
    }
    if (w->key != key) continue;
    if (wanted > 0 && wanted + w->req.max_jobs > options_.max_claim_batch) break;
    w->taken = true;
    wanted += w->req.max_jobs;
    batch.push_back(w);
  }
  return true;
}

// One claim transaction for the batch (jobs in the order of its waiters).
absl::Status Coordinator::ClaimFor(const std::vector<std::shared_ptr<Waiter>>& batch,
                                   std::vector<schema::ClaimedJob>* out) {
  std::vector<schema::ClaimedJob>& claimed = *out;
  absl::Status status;
  auto sessions = MatchingSessions(batch[0]->req);
  if (!sessions.ok()) {
    status = sessions.status();
    DbError(options_.metrics, "claim");
  } else if (!sessions->empty()) {
    std::vector<schema::ClaimWant> wants;
    for (const auto& w : batch) wants.push_back({w->req.worker_id, w->req.max_jobs});
    const absl::Time claim_start = absl::Now();
    auto c = store_.Claim(batch[0]->req.step, *sessions, wants, batch[0]->excluded);
    NoteDb(c.status());
    if (options_.metrics != nullptr) {
      options_.metrics->Observe("tuna_claim_duration_seconds",
                                {{"step", jobs::ToString(batch[0]->req.step)}},
                                absl::ToDoubleSeconds(absl::Now() - claim_start));
    }
    if (c.ok()) {
      claimed = std::move(*c);
    } else {
      status = c.status();
      DbError(options_.metrics, "claim");
      // An unreachable database is logged once, by NoteDb; the waiters wait on.
      if (!absl::IsUnavailable(status)) spdlog::warn("coordinator: claim failed: {}", status.ToString());
    }
  }
  return status;
}

// Hands the claimed jobs out by position; waiters that got none wait on (or end their poll).
void Coordinator::HandOut(const std::vector<std::shared_ptr<Waiter>>& batch,
                          const std::vector<schema::ClaimedJob>& claimed,
                          const absl::Status& status) {
  std::map<int64_t, SessionRow> sessions_by_id;
  {
    absl::MutexLock l(&sessions_mu_);
    sessions_by_id = session_by_id_;
  }
  std::vector<std::shared_ptr<Waiter>> ended;  // answered once mu_ is released
  absl::ReleasableMutexLock l(&mu_);
  // Jobs come back in the order of `wants`: hand them out by position.
  size_t next = 0;
  int got_total = 0, wanted_total = 0;
  for (const auto& w : batch) {
    wanted_total += w->req.max_jobs;
    for (int k = 0; k < w->req.max_jobs && next < claimed.size(); ++k, ++next) {
      const schema::ClaimedJob& c = claimed[next];
      LeasedJob j;
      j.job_id = c.job_id;
      j.attempt = c.attempt;
      j.step = w->req.step;
      j.kind = c.kind;
      j.session_id = c.session_id;
      auto s = sessions_by_id.find(c.session_id);
      if (s != sessions_by_id.end()) {
        j.arch = s->second.arch;
        j.num_cu = s->second.num_cu;
        j.backend = s->second.backend;
      }
      j.config_id = c.config_id;
      j.driver = c.driver;
      j.solver_id = c.solver_id;
      j.solver_name = c.solver_name;
      j.tuned_params = c.tuned_params;
      j.prior_params = c.prior_params;
      j.find_follows = c.find_follows;
      j.rival_ms = c.rival_ms;
      j.transfer = c.transfer;
      j.lease_expires = absl::Now() + absl::Seconds(options_.lease_seconds);
      w->jobs.push_back(std::move(j));
    }
    got_total += static_cast<int>(w->jobs.size());
    if (!w->jobs.empty()) {
      ended.push_back(w);
      waiters_.erase(std::find(waiters_.begin(), waiters_.end(), w));
    } else if (absl::Now() >= w->deadline || shutdown_ || w->end_after_claim) {
      ended.push_back(w);  // the long-poll ended: empty, or why nothing could be claimed
      if (shutdown_) w->status = absl::UnavailableError("coordinator shutting down");
      else if (absl::IsUnavailable(status)) w->status = NoDatabase();
      waiters_.erase(std::find(waiters_.begin(), waiters_.end(), w));
    } else {
      w->taken = false;  // wait on
    }
  }
  if (got_total < wanted_total || !status.ok()) {
    dry_until_[batch[0]->key] = absl::Now() + options_.empty_poll_interval;
  }
  if (options_.metrics != nullptr) {
    options_.metrics->Set("tuna_lease_waiters", {}, static_cast<double>(waiters_.size()));
  }
  l.Release();
  for (auto& w : ended) Answer(*w);
}

absl::Status Coordinator::CheckHolder(const std::string& worker_id, int64_t job_id,
                                      int64_t attempt, JobStep step) {
  auto job = store_.GetJob(job_id);
  if (!NoteDb(job.status()).ok()) return job.status();
  if (!job->has_value()) return absl::NotFoundError(absl::StrCat("no job ", job_id));
  const schema::JobInfo& j = **job;
  if (j.lease_owner != worker_id || j.attempt != attempt || j.state != jobs::LeasedState(step)) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", job_id, " attempt ", attempt, " is not leased to this worker"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Lease>> Coordinator::Renew(const std::string& worker_id,
                                                      const std::vector<Lease>& leases) {
  if (auto st = CheckText("worker_id", worker_id, kMaxIdLength); !st.ok()) return st;
  if (leases.size() > 4096) return absl::InvalidArgumentError("too many leases");
  std::vector<schema::RenewedLease> in;
  for (const Lease& l : leases) {
    if (l.job_id < 1 || l.attempt < 1) return absl::InvalidArgumentError("bad job id/attempt");
    in.push_back({l.job_id, l.attempt});
  }
  Seen(options_.metrics, worker_id);
  auto held = store_.Renew(worker_id, in);
  if (!NoteDb(held.status()).ok()) {
    DbError(options_.metrics, "renew");
    return held.status();
  }
  std::vector<Lease> out;
  for (const auto& h : *held) out.push_back({h.job_id, h.attempt});
  Count(options_.metrics, "tuna_renewals_total", {{"outcome", "held"}},
        static_cast<double>(out.size()));
  Count(options_.metrics, "tuna_renewals_total", {{"outcome", "lost"}},
        static_cast<double>(leases.size() - out.size()));
  return out;
}

absl::StatusOr<int64_t> Coordinator::Release(const std::string& worker_id,
                                             const std::vector<Lease>& leases) {
  if (auto st = CheckText("worker_id", worker_id, kMaxIdLength); !st.ok()) return st;
  std::vector<schema::RenewedLease> in;
  for (const Lease& l : leases) {
    if (l.job_id < 1 || l.attempt < 1) return absl::InvalidArgumentError("bad job id/attempt");
    in.push_back({l.job_id, l.attempt});
  }
  Seen(options_.metrics, worker_id);
  auto n = store_.Release(worker_id, in);
  if (!NoteDb(n.status()).ok()) {
    DbError(options_.metrics, "release");
  } else {
    Count(options_.metrics, "tuna_released_jobs_total", {}, static_cast<double>(*n));
  }
  return n;
}

absl::Status Coordinator::ValidateReport(const Report& r) {
  if (auto st = CheckText("worker_id", r.worker_id, kMaxIdLength); !st.ok()) return st;
  if (r.job_id < 1) return absl::InvalidArgumentError("job_id must be positive");
  if (r.attempt < 1) return absl::InvalidArgumentError("attempt must be positive");
  if (r.error.size() > kMaxError) return absl::InvalidArgumentError("error text too long");
  if (r.samples.size() > kMaxSamples) return absl::InvalidArgumentError("too many samples");
  if (r.kernels.size() > kMaxKernels) return absl::InvalidArgumentError("too many kernels");
  for (double v : {r.timings.wall_seconds, r.timings.device_seconds, r.timings.kernel_seconds}) {
    if (!std::isfinite(v) || v < 0) {
      return absl::InvalidArgumentError("timings must be finite and >= 0 seconds");
    }
  }
  if (!r.succeeded) {
    if (r.error.empty()) return absl::InvalidArgumentError("a failure report needs an error");
    return absl::OkStatus();
  }
  if (r.step == JobStep::kCompile) {
    for (const auto& k : r.kernels) {
      if (k.kernel_id < 1) return absl::InvalidArgumentError("kernel id must be positive");
      if (k.build_key.size() != 64 || !PrintableAscii(k.build_key)) {
        return absl::InvalidArgumentError("build key must be 64 hex characters");
      }
    }
    return absl::OkStatus();
  }
  if (r.has_result) {
    if (!std::isfinite(r.kernel_time_ms) || r.kernel_time_ms <= 0) {
      return absl::InvalidArgumentError("kernel_time_ms must be finite and positive");
    }
    if (r.workspace_bytes < 0) return absl::InvalidArgumentError("workspace_bytes is negative");
    if (r.candidates_tried < 0) return absl::InvalidArgumentError("candidates_tried is negative");
  }
  if (auto st = CheckText("params", r.params, kMaxParams, true); !st.ok()) return st;
  for (const Sample& s : r.samples) {
    if (auto st = CheckText("sample params", s.params, kMaxParams, true); !st.ok()) return st;
    if (s.time_ms && (!std::isfinite(*s.time_ms) || *s.time_ms <= 0)) {
      return absl::InvalidArgumentError("sample time must be finite and positive");
    }
    const auto& names = DispositionNames();
    if (std::find(names.begin(), names.end(), s.status) == names.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown sample status '", s.status, "'"));
    }
    if (s.error.size() > kMaxError) return absl::InvalidArgumentError("sample error too long");
  }
  return ValidateParams(r);
}

// The params must be a point of the solver's space, valid for the job's problem and target.
absl::Status Coordinator::ValidateParams(const Report& r) {
  if (options_.registry == nullptr) return absl::OkStatus();
  auto job = store_.GetJob(r.job_id);
  if (!NoteDb(job.status()).ok()) return job.status();
  if (!job->has_value()) return absl::NotFoundError(absl::StrCat("no job ", r.job_id));
  const schema::JobInfo& j = **job;
  const solver::RegisteredSolver* rs = options_.registry->ByName(j.solver_name);
  // A solver this build does not know (a newer worker, rolling upgrade): cannot check, and
  // refusing would throw a good result away.
  if (rs == nullptr) return absl::OkStatus();
  auto problems = ParseDriverLine(j.driver);
  if (!problems.ok() || problems->size() != 1) {
    return absl::FailedPreconditionError(
        absl::StrCat("job ", r.job_id, ": its config does not parse to one problem"));
  }
  std::string arch;
  int num_cu = 0;
  {
    absl::MutexLock l(&sessions_mu_);
    auto it = session_by_id_.find(j.session_id);
    if (it != session_by_id_.end()) arch = it->second.arch, num_cu = it->second.num_cu;
  }
  if (arch.empty()) {
    if (auto st = RefreshSessions(true); !st.ok()) return st;
    absl::MutexLock l(&sessions_mu_);
    auto it = session_by_id_.find(j.session_id);
    if (it == session_by_id_.end()) return absl::NotFoundError("job's session is gone");
    arch = it->second.arch, num_cu = it->second.num_cu;
  }
  auto target = solver::TargetForArch(ArchBase(arch), num_cu);
  if (!target.ok()) return absl::OkStatus();  // an arch this build does not know: cannot check
  const solver::SearchSpace space = rs->solver->Space(*target, (*problems)[0]);
  auto check = [&](const std::string& params, bool full) -> absl::Status {
    auto cfg = space.Parse(params);
    if (!cfg.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("params '", params, "' for ", j.solver_name,
                                                     ": ", cfg.status().message()));
    }
    if (!full) return absl::OkStatus();
    absl::Status v = rs->solver->IsValid(*target, (*problems)[0], *cfg);
    if (!v.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("params '", params, "' are not valid for ",
                                                     j.solver_name, ": ", v.message()));
    }
    return absl::OkStatus();
  };
  if (r.has_result) {
    if (auto st = check(r.params, true); !st.ok()) return st;
  }
  for (const Sample& s : r.samples) {
    if (auto st = check(s.params, false); !st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::Status Coordinator::SubmitReport(const Report& r) {
  absl::Notification committed;
  absl::Status out;
  SubmitReportAsync(r, [&](absl::Status st) {
    out = std::move(st);
    committed.Notify();
  });
  committed.WaitForNotification();
  return out;
}

void Coordinator::SubmitReportAsync(const Report& r, std::function<void(absl::Status)> done) {
  Seen(options_.metrics, r.worker_id);
  if (absl::Status st = ValidateReport(r); !st.ok()) {
    Count(options_.metrics, "tuna_reports_total",
          {{"step", jobs::ToString(r.step)},
           {"result", r.succeeded ? "success" : "failure"},
           {"outcome", st.code() == absl::StatusCode::kInvalidArgument ? "invalid" : "error"}});
    done(st);
    return;
  }
  auto p = std::make_shared<PendingReport>();
  schema::StepReport& s = p->report;
  s.job_id = r.job_id;
  s.attempt = r.attempt;
  s.owner = r.worker_id;
  s.step = r.step;
  s.succeeded = r.succeeded;
  s.error = r.error;
  s.retryable = r.retryable;
  s.executor_killed = r.executor_killed;
  s.blame = r.blame;
  for (const KernelLink& k : r.kernels) s.kernels.push_back({k.kernel_id, k.build_key});
  s.has_result = r.has_result;
  s.params = r.params;
  s.kernel_time_ms = r.kernel_time_ms;
  s.workspace_bytes = r.workspace_bytes;
  s.candidates_tried = r.candidates_tried;
  s.verified = r.verified;
  s.finished = r.finished;
  for (const Sample& x : r.samples) s.samples.push_back({x.params, x.time_ms, x.status, x.error});
  p->timings = r.timings;
  p->done = std::move(done);
  {
    absl::MutexLock l(&mu_);
    if (!shutdown_) {
      reports_.push_back(std::move(p));
      return;
    }
  }
  p->done(absl::UnavailableError("coordinator shutting down"));
}

void Coordinator::ReportLoop() {
  while (true) {
    std::vector<std::shared_ptr<PendingReport>> batch;
    {
      absl::MutexLock l(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return shutdown_ || !reports_.empty();
      };
      mu_.Await(absl::Condition(&ready));
      if (reports_.empty()) return;  // shutting down, and every queued report is committed
      while (!reports_.empty() && static_cast<int>(batch.size()) < options_.max_report_batch) {
        batch.push_back(reports_.front());
        reports_.pop_front();
      }
    }
    ReportBatch(std::move(batch));
  }
}

void Coordinator::ReportBatch(std::vector<std::shared_ptr<PendingReport>> batch) {
  std::vector<schema::StepReport> in;
  for (const auto& p : batch) in.push_back(p->report);
  std::vector<absl::StatusOr<schema::ReportOutcome>> outcomes;
  auto all = store_.Report(in);
  NoteDb(all.status());
  if (all.ok()) {
    for (auto o : *all) outcomes.emplace_back(o);
  } else if (absl::IsUnavailable(all.status())) {
    // The database is unreachable: one by one would fail the same way, each after its own
    // retries. Every report gets Unavailable; the workers send them again with backoff.
    for (size_t k = 0; k < in.size(); ++k) outcomes.emplace_back(all.status());
  } else {
    // One bad report must not fail the others: commit them one by one.
    for (const auto& one : in) {
      auto o = store_.Report({one});
      if (o.ok()) {
        outcomes.emplace_back((*o)[0]);
      } else {
        outcomes.emplace_back(o.status());
      }
    }
  }
  if (!all.ok()) DbError(options_.metrics, "report");
  NoteOutcomes(batch, outcomes);
  for (size_t k = 0; k < batch.size(); ++k) {
    auto& p = batch[k];
    const auto& o = outcomes[k];
    if (!o.ok()) {
      p->done(o.status());
    } else if (*o == schema::ReportOutcome::kStale) {
      p->done(absl::FailedPreconditionError(
          absl::StrCat("job ", p->report.job_id, " attempt ", p->report.attempt,
                       ": the lease is no longer held by this worker (stale report ignored)")));
    } else if (*o == schema::ReportOutcome::kNotFound) {
      p->done(absl::NotFoundError(absl::StrCat("no job ", p->report.job_id)));
    } else {
      if (*o == schema::ReportOutcome::kDuplicate) {
        spdlog::info("coordinator: duplicate report for job {} attempt {} ignored",
                     p->report.job_id, p->report.attempt);
      }
      p->done(absl::OkStatus());
    }
  }
}

void Coordinator::NoteOutcomes(const std::vector<std::shared_ptr<PendingReport>>& batch,
                               const std::vector<absl::StatusOr<schema::ReportOutcome>>& outcomes) {
  Metrics* const m = options_.metrics;
  for (size_t k = 0; k < batch.size(); ++k) {
    const schema::StepReport& rep = batch[k]->report;
    const auto& o = outcomes[k];
    const bool applied = o.ok() && *o == schema::ReportOutcome::kApplied;
    if (applied && rep.succeeded && rep.step == JobStep::kEval) host_faults_.NoteSuccess(rep.owner);
    if (applied && !rep.succeeded && rep.blame == jobs::Blame::kHost) {
      host_faults_.NoteFault(rep.owner, rep.error, absl::Now());
      if (m != nullptr) m->Set("tuna_benched_hosts", {}, host_faults_.Benched(absl::Now()));
    }
    if (applied && !rep.succeeded && rep.blame == jobs::Blame::kUnsupported) {
      auto job = store_.GetJob(rep.job_id);
      if (job.ok() && job->has_value()) {
        host_faults_.NoteUnsupported(rep.owner, (*job)->session_id, (*job)->solver_id);
        spdlog::info("coordinator: worker {} cannot run job {} ({}): {}; handed back for another "
                     "worker", rep.owner, rep.job_id, (*job)->solver_name, rep.error);
      }
    }
    if (m == nullptr) continue;
    const char* outcome = o.ok() ? schema::ReportOutcomeName(*o) : "error";
    m->Add("tuna_reports_total", {{"step", jobs::ToString(rep.step)},
                                  {"result", rep.succeeded ? "success" : "failure"},
                                  {"outcome", outcome}});
    if (applied && !rep.succeeded) {
      const char* reason = rep.blame != jobs::Blame::kJob ? jobs::ToString(rep.blame)
                           : rep.executor_killed          ? "executor_killed"
                           : rep.retryable                ? "retryable"
                                                          : "permanent";
      m->Add("tuna_job_failures_total", {{"step", jobs::ToString(rep.step)}, {"reason", reason}});
    }
    if (applied) CountTimings(m, rep, batch[k]->timings);
  }
}

absl::StatusOr<std::vector<int64_t>> Coordinator::PutKernels(
    const std::string& worker_id, int64_t job_id, int64_t attempt,
    const std::vector<KernelBlob>& kernels) {
  if (kernels.size() > 4096) return absl::InvalidArgumentError("too many kernels in one call");
  for (const auto& k : kernels) {
    if (k.code_object.empty()) return absl::InvalidArgumentError("empty code object");
    if (k.build_key.size() != 64) return absl::InvalidArgumentError("bad build key");
    if (auto st = CheckText("kernel arch", k.arch, 64); !st.ok()) return st;
    if (auto st = CheckText("kernel name", k.kernel_name, 255); !st.ok()) return st;
    if (auto st = CheckText("kernel options", k.options, 16384, true); !st.ok()) return st;
    if (auto st = CheckText("kernel entries", k.entries, 1024, true); !st.ok()) return st;
    if (auto st = CheckText("compiler", k.compiler, 191, true); !st.ok()) return st;
  }
  Seen(options_.metrics, worker_id);
  if (auto st = CheckHolder(worker_id, job_id, attempt, JobStep::kCompile); !st.ok()) return st;
  std::vector<schema::StoredKernel> stored;
  for (const KernelBlob& k : kernels) {
    stored.push_back({k.build_key, k.arch, k.compiler, k.kernel_name, k.options, k.entries,
                      k.code_object});
  }
  auto ids = store_.PutKernels(stored, worker_id);
  if (!NoteDb(ids.status()).ok()) {
    DbError(options_.metrics, "kernels");
  } else {
    Count(options_.metrics, "tuna_kernels_stored_total", {}, static_cast<double>(ids->size()));
  }
  return ids;
}

absl::StatusOr<std::vector<KernelBlob>> Coordinator::FetchKernels(
    const std::string& worker_id, int64_t job_id, int64_t attempt) {
  Seen(options_.metrics, worker_id);
  if (auto st = CheckHolder(worker_id, job_id, attempt, JobStep::kEval); !st.ok()) return st;
  auto stored = store_.JobKernels(job_id);
  if (!NoteDb(stored.status()).ok()) return stored.status();
  std::vector<KernelBlob> out;
  for (schema::StoredKernel& k : *stored) {
    out.push_back({std::move(k.build_key), std::move(k.arch), std::move(k.compiler),
                   std::move(k.kernel_name), std::move(k.options), std::move(k.entries),
                   std::move(k.code_object), std::move(k.built_by)});
  }
  return out;
}

absl::StatusOr<schema::ReapCounts> Coordinator::Reap() {
  schema::ReapOptions ro;
  {
    absl::MutexLock l(&serve_mu_);
    ro.forgive_extended_before = serving_since_db_;
  }
  auto c = store_.Reap(ro);
  if (!NoteDb(c.status()).ok()) {
    DbError(options_.metrics, "reap");
  } else {
    Count(options_.metrics, "tuna_reaped_jobs_total", {{"outcome", "requeued"}},
          static_cast<double>(c->requeued));
    Count(options_.metrics, "tuna_reaped_jobs_total", {{"outcome", "failed"}},
          static_cast<double>(c->failed));
    Count(options_.metrics, "tuna_reaped_jobs_total", {{"outcome", "forgiven"}},
          static_cast<double>(c->forgiven));
  }
  if (c.ok() && (c->requeued || c->failed || c->forgiven)) {
    spdlog::info("coordinator: reaped expired leases: {} requeued, {} failed, {} requeued "
                 "without a retry counted (expired while no coordinator or database served them)",
                 c->requeued, c->failed, c->forgiven);
  }
  return c;
}

void Coordinator::BeginServing(const std::string& db_now) {
  absl::MutexLock l(&serve_mu_);
  serving_since_db_ = db_now;
  reap_after_ = absl::Now() + Grace(options_);
}

void Coordinator::BeginGrace() {
  auto now = store_.DatabaseNow();
  if (!NoteDb(now.status()).ok()) return;  // unreachable: its return begins one anyway
  BeginServing(*now);
}

bool Coordinator::InGrace() {
  absl::MutexLock l(&serve_mu_);
  return db_down_ || absl::Now() < reap_after_;
}

size_t Coordinator::TEST_QueuedReports() {
  absl::MutexLock l(&mu_);
  return reports_.size();
}

bool Coordinator::DatabaseReachable() {
  absl::MutexLock l(&serve_mu_);
  return !db_down_;
}

absl::Status Coordinator::NoteDb(const absl::Status& st) {
  const bool down = absl::IsUnavailable(st);
  absl::Duration outage;
  {
    absl::MutexLock l(&serve_mu_);
    if (down == db_down_) return st;
    db_down_ = down;  // this thread handles the change; the others see it made
    if (down) {
      db_down_since_ = absl::Now();
      spdlog::warn("coordinator: database unreachable: {}; waiting for it (claims and reports wait, "
                   "no lease is reaped meanwhile)", std::string(st.message()));
      return st;
    }
    outage = absl::Now() - db_down_since_;
    // No reap until the grace below has begun: another thread's reaper that sees the database
    // up meanwhile would otherwise reap (and charge) the leases the outage let expire.
    reap_after_ = absl::InfiniteFuture();
  }
  auto now = store_.DatabaseNow();
  if (!now.ok()) {  // gone again before the grace could begin: still down, said already
    absl::MutexLock l(&serve_mu_);
    db_down_ = true;
    return st;
  }
  BeginServing(*now);
  spdlog::info("coordinator: database reachable again after {:.1f} s; leases are kept for {} s "
               "for the workers to renew, and expiries from the outage are not counted as retries",
               absl::ToDoubleSeconds(outage), absl::ToInt64Seconds(Grace(options_)));
  if (Metrics* m = options_.metrics; m != nullptr) m->Add("tuna_db_outages_total", {});
  return st;
}

void Coordinator::ReapLoop() {
  while (true) {
    {
      absl::MutexLock l(&mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return shutdown_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&stop), options_.reap_interval)) return;
    }
    // A probe first: a database that just came back begins a grace period instead of a reap.
    if (!NoteDb(store_.DatabaseNow().status()).ok() || InGrace()) continue;
    auto c = Reap();
    if (!c.ok() && !absl::IsUnavailable(c.status())) {
      spdlog::warn("coordinator: reaper: {}", c.status().ToString());
    }
  }
}

}  // namespace tuna::coordinator
