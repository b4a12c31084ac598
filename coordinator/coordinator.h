// The coordinator's domain (DESIGN §2, §3; STYLE §5): what workers call, in the plain C++ types of
// coordinator/api.h. coordinator/service.cc translates the gRPC messages to these calls; the
// in-process client (coordinator/in_process_client.h) calls them directly.
//
// Stateless: everything durable is in the database, so several coordinators may serve one
// database and a restarted one simply continues. In memory there are only caches (sessions, the
// jobs leased through this coordinator) and the waiting requests.
//
// Batching (the measured reason is in DESIGN §3): Lease calls do not touch the database
// themselves. They queue (LeaseJobs blocks, LeaseJobsAsync returns); `dispatcher_threads`
// threads take all waiting requests with the same (step, sessions) filter, claim for all of them
// in one transaction of up to `max_claim_batch` jobs, and hand the jobs out, answering each
// request; one expiry thread ends the requests whose wait is over unserved. When the queue is dry
// a filter is not polled again for `empty_poll_interval` (long-poll without hammering the
// database). Reports likewise
// queue; one reporter thread commits up to `max_report_batch` of them per transaction (group
// commit) and falls back to one transaction per report when a batch fails, so one bad report
// never fails the others.
//
// Validation: every request is checked before it queues (ids positive, sizes bounded, times
// finite and positive, params parsed by the solver's SearchSpace and accepted by IsValid for
// the job's problem). InvalidArgument names the field. A stale lease gives FailedPrecondition and
// changes nothing; a duplicate report is OK and changes nothing.
//
// Serving grace (docs/RELIABILITY.md): a coordinator that starts, or sees its database again
// after an outage, reaps nothing for `restart_grace` (at least one lease): the leases that ran
// out while nobody could renew them are kept for the workers that reconnect and renew. Leases
// last extended before that moment which still expire are requeued without a retry charged
// (schema::ReapOptions::forgive_extended_before): an expiry caused by the coordinator's or the
// database's absence is not the job's fault. Database reachability changes are logged once each.
//
// Host faults (coordinator/host_faults.h, docs/RELIABILITY.md): a failure report blamed on the
// worker's host or reported unsupported hands its job back without a retry charged; after
// `max_host_faults` host faults in a row a host gets no eval leases (FailedPrecondition) for
// `host_bench`; a job a worker reported unsupported is not claimed for that worker again.
//
// Threads: every method is thread-safe. Lease blocks up to its wait; everything else blocks for
// one batch commit at most (LeaseJobsAsync and SubmitReportAsync not at all: no thread waits for
// their answer, which the dispatcher, expiry or reporter thread gives). Shutdown answers all
// waiting leases (Unavailable) and commits the reports already queued before it returns; reports
// submitted after it began get Unavailable.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "coordinator/api.h"
#include "coordinator/host_faults.h"
#include "schema/store/database.h"
#include "schema/store/lease_store.h"
#include "tuner_core/solver/registry.h"

namespace tuna::coordinator {

class Metrics;  // coordinator/metrics.h

struct CoordinatorOptions {
  int lease_seconds = 60;
  int max_retries = 3;
  int quarantine_kills = 3;
  int max_host_faults = 3;                         // infrastructure failures in a row: benched
  absl::Duration host_bench = absl::Minutes(5);    // how long a benched host gets no eval leases
  int dispatcher_threads = 2;   // concurrent claim transactions (a few, never one per worker)
  int max_claim_batch = 64;     // jobs per claim transaction
  int max_report_batch = 64;    // reports per commit
  absl::Duration empty_poll_interval = absl::Milliseconds(500);
  absl::Duration max_wait = absl::Seconds(30);     // longest long-poll
  absl::Duration session_refresh = absl::Seconds(2);
  absl::Duration reap_interval = absl::Seconds(5);  // 0: no background reaper (tests call Reap)
  // After start and after a database outage: nothing is reaped for this long (see above).
  // Negative: one lease (lease_seconds).
  absl::Duration restart_grace = absl::Seconds(-1);
  int max_jobs_per_lease = 64;
  // Perf jobs reuse a verified result of the same config and solver from an earlier session on the
  // same arch and CU count instead of searching (schema::LeaseStoreOptions::reuse_prior_results).
  bool reuse_prior_results = true;
  // Non-empty: only jobs of these sessions are leased (`tune -f` runs its own coordinator on a
  // shared database and must not evaluate another run's jobs). Empty: every matching session.
  std::vector<int64_t> only_sessions;
  // Report validation needs the solvers; null skips the params checks (benchmarks).
  const solver::SolverRegistry* registry = nullptr;
  // Counters, histograms and workers seen (docs/OPERATIONS.md); null: none. Must outlive it.
  Metrics* metrics = nullptr;
};

class Coordinator {
 public:
  // Starts the dispatcher, expiry, reporter and reaper threads. The Database must outlive it.
  static absl::StatusOr<std::unique_ptr<Coordinator>> Create(schema::Database& db,
                                                             CoordinatorOptions options);
  ~Coordinator();  // Shutdown()

  absl::StatusOr<Registered> Register(const WorkerRegistration& w);
  // Blocks until jobs are leased or the wait ends (then an empty vector: not an error; but
  // Unavailable while the database is unreachable, so workers do not read it as served).
  // FailedPrecondition for an eval lease of a benched host (see the file comment).
  absl::StatusOr<std::vector<LeasedJob>> LeaseJobs(const LeaseRequest& req);
  // What LeaseJobs returns, handed to the caller of LeaseJobsAsync.
  using LeaseDone = std::function<void(absl::StatusOr<std::vector<LeasedJob>>)>;
  // LeaseJobs without blocking: `done` gets what LeaseJobs would return, exactly once: on the
  // dispatcher thread that hands the jobs out (or ends a poll its claim left empty), on the
  // expiry thread when the wait ends unserved, on the thread of Shutdown, or on the calling
  // thread when the request is refused before it queues. `done` must not block or call into this
  // Coordinator (it runs between two claims).
  void LeaseJobsAsync(const LeaseRequest& req, LeaseDone done);
  // The leases still held (a lease missing from the answer is lost: stop working on it).
  absl::StatusOr<std::vector<Lease>> Renew(const std::string& worker_id,
                                           const std::vector<Lease>& leases);
  // OK when applied or a duplicate; FailedPrecondition when stale; NotFound for no such job.
  absl::Status SubmitReport(const Report& report);
  // SubmitReport without blocking: `done` gets what SubmitReport would return, exactly once:
  // on the reporter thread after the report's batch is committed, or on the calling thread when
  // the report is refused before it queues (invalid, or shutting down). `done` must not block or
  // call into this Coordinator (it runs between two batches).
  void SubmitReportAsync(const Report& report, std::function<void(absl::Status)> done);
  // Graceful hand-back (no retry counted).
  absl::StatusOr<int64_t> Release(const std::string& worker_id, const std::vector<Lease>& leases);
  // Stores compiled code objects; returns their kernel ids (for Report.kernels). The caller must
  // hold a compile lease on `job_id` with `attempt` (otherwise FailedPrecondition).
  absl::StatusOr<std::vector<int64_t>> PutKernels(const std::string& worker_id, int64_t job_id,
                                                  int64_t attempt,
                                                  const std::vector<KernelBlob>& k);
  // The kernels the job's compile step produced; the caller must hold its eval lease.
  absl::StatusOr<std::vector<KernelBlob>> FetchKernels(const std::string& worker_id,
                                                       int64_t job_id, int64_t attempt);
  // Reaps expired leases now (the reaper thread calls it after the grace period); leases last
  // extended before this coordinator began serving are forgiven (see the file comment).
  absl::StatusOr<schema::ReapCounts> Reap();
  // False while the database is known to be unreachable (the last call to it failed so).
  bool DatabaseReachable();
  // A grace period from now, as after a start (see the file comment): leases last extended
  // before now that expire are requeued without a retry charged. The server calls it when a
  // token is rotated (their holders can no longer renew: not the jobs' fault).
  void BeginGrace();

  // Answers every Lease waiting now, empty, instead of when its wait ends (one a dispatcher holds
  // for a claim: when that claim ends, with the jobs it got or empty): a local run whose workers
  // were told to stop need not wait out their long-polls (up to lease_wait each, before it can
  // export). Later Leases wait as before. Thread-safe.
  void EndPolls();

  void Shutdown();

  const CoordinatorOptions& options() const { return options_; }

  // For tests: reports queued and not yet taken by the reporter.
  size_t TEST_QueuedReports();

 private:
  struct Waiter;
  struct PendingReport;
  struct SessionRow {
    int64_t id = 0;
    std::string arch;
    int num_cu = 0;
    std::string backend;  // lower case
  };

  Coordinator(schema::Database& db, CoordinatorOptions options);
  void DispatchLoop();
  bool TakeBatch(std::vector<std::shared_ptr<Waiter>>* batch);
  // Ends the long-polls whose wait is over unserved (no thread waits on each).
  void ExpireLoop();
  // Removes the waiters no dispatcher holds from the queue and returns them, to be answered
  // once mu_ is released.
  std::vector<std::shared_ptr<Waiter>> TakeIdleWaiters() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A waiter's answer (its metrics, then its done), never under mu_.
  void Answer(Waiter& w);
  absl::Status ClaimFor(const std::vector<std::shared_ptr<Waiter>>& batch,
                        std::vector<schema::ClaimedJob>* claimed);
  void HandOut(const std::vector<std::shared_ptr<Waiter>>& batch,
               const std::vector<schema::ClaimedJob>& claimed, const absl::Status& status);
  void ReportLoop();
  void ReapLoop();
  absl::StatusOr<std::vector<int64_t>> MatchingSessions(const LeaseRequest& req);
  absl::Status RefreshSessions(bool force);
  absl::Status ValidateLease(const LeaseRequest& req);
  absl::Status ValidateReport(const Report& r);
  absl::Status ValidateParams(const Report& r);  // eval success: params against the solver
  absl::Status CheckHolder(const std::string& worker_id, int64_t job_id, int64_t attempt,
                           schema::JobStep step);
  // Every database call's outcome: logs and handles the reachable ⇄ unreachable changes (a
  // return starts a grace period). Returns `st`.
  absl::Status NoteDb(const absl::Status& st);
  void BeginServing(const std::string& db_now);  // a grace period from now
  bool InGrace();
  void ReportBatch(std::vector<std::shared_ptr<PendingReport>> batch);
  // After a batch: who is to blame for what, and the metrics of each report.
  void NoteOutcomes(const std::vector<std::shared_ptr<PendingReport>>& batch,
                    const std::vector<absl::StatusOr<schema::ReportOutcome>>& outcomes);

  schema::Database& db_;
  const CoordinatorOptions options_;
  schema::LeaseStore store_;
  HostFaults host_faults_;

  absl::Mutex mu_;
  bool shutdown_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<std::shared_ptr<Waiter>> waiters_ ABSL_GUARDED_BY(mu_);
  // No waiter's deadline is before next_expiry_, when ExpireLoop wakes next; a waiter that
  // would be moves it earlier and sets expiry_moved_ (which wakes ExpireLoop).
  absl::Time next_expiry_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  bool expiry_moved_ ABSL_GUARDED_BY(mu_) = false;
  // Filters known to be dry until this time (key: step + session list).
  std::map<std::string, absl::Time> dry_until_ ABSL_GUARDED_BY(mu_);
  std::deque<std::shared_ptr<PendingReport>> reports_ ABSL_GUARDED_BY(mu_);

  absl::Mutex sessions_mu_;
  std::vector<SessionRow> sessions_ ABSL_GUARDED_BY(sessions_mu_);
  absl::Time sessions_loaded_ ABSL_GUARDED_BY(sessions_mu_) = absl::InfinitePast();
  std::map<int64_t, SessionRow> session_by_id_ ABSL_GUARDED_BY(sessions_mu_);

  // Serving state: guarded by serve_mu_ (never held across a database call).
  absl::Mutex serve_mu_;
  bool db_down_ ABSL_GUARDED_BY(serve_mu_) = false;
  absl::Time db_down_since_ ABSL_GUARDED_BY(serve_mu_);
  std::string serving_since_db_ ABSL_GUARDED_BY(serve_mu_);  // database time; "" before start
  absl::Time reap_after_ ABSL_GUARDED_BY(serve_mu_) = absl::InfinitePast();

  std::vector<std::thread> threads_;
};

}  // namespace tuna::coordinator
