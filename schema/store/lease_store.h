// The leasing SQL of the work queue (DESIGN §3): claim, renew, fenced report, reaper, quarantine,
// and the kernel blobs that travel between a job's compile and eval steps. The coordinator is the
// only caller; it batches many workers' requests into one call here, so that the database sees a
// few connections and a few transactions, never one per worker.
//
// Job steps and states (migration 001):
//   compile: ready 'new'      → claimed 'compile_start' → success 'compiled'
//   eval:    ready 'compiled' → claimed 'eval_start'    → success 'evaluated'
// A claim increments `attempt`, sets `lease_owner` and `lease_expires_at`. Every later write for
// that lease (renew, report) names (job_id, attempt, owner) and changes nothing when they no
// longer match (fencing). A failed step or an expired lease puts the job back into the step's
// ready state with retries + 1 and the error kept; at `max_retries` it becomes 'failed'. A
// failure blamed on the host or reported as unsupported (jobs::Blame) puts it back without
// retries + 1, with the error saying why (it is never failed for it).
//
// Quarantine (migration 005): a failure with executor_killed counts against the job's
// (session, config, solver) in config_quarantine, with the reason; at `quarantine_kills` the
// row is quarantined and that solver's waiting jobs of the config are failed. Every applied
// eval success of a (session, config, solver) not quarantined takes one count off (decay).
// 'errored' is not produced here (a retryable failure is simply ready again, with its error).
//
// Idempotency: a report whose (job, attempt) already reached the step's success state is a
// duplicate and a no-op (kDuplicate). Result rows use unique keys (perf_result/find_result per
// (session, config, solver); eval_sample per (job, attempt, params)).
//
// Threads: as thread-safe as the Database. Errors: the store's codes (errors.h);
// InvalidArgument for malformed input (unknown step, empty batch entries).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/statusor.h"
#include "jobs/job_state.h"
#include "schema/store/database.h"
#include "tuner_core/search/transfer.h"

namespace tuna::schema {

using jobs::JobStep;  // the store's code names steps unqualified

struct LeaseStoreOptions {
  int lease_seconds = 60;     // lease length set by claims and renewals
  int max_retries = 3;        // failures / expiries before a job is 'failed'
  int quarantine_kills = 3;   // executor kills of one (session, config, solver) before quarantine
  // Claims reuse a warm-start read of the same (session, solver, config class, transfer horizon)
  // made less than this long ago (0, the default: read every claim). The read groups the samples
  // of the solver's newest evaluated perf jobs on the arch (at most kTransferJobs jobs). Every
  // compile claim fixes a new horizon, so it reads; the eval claims of the jobs one compile claim
  // took share its horizon, and reuse its read.
  double warm_params_ttl_s = 0;
  // Perf jobs of a config and solver that an earlier session on the same arch and CU count tuned
  // (a verified result) get that result's params as prior_params, and workers time only those
  // instead of searching again (`tune -f --retune` turns this off).
  bool reuse_prior_results = true;
};

// One claimant of a batched claim: `owner` wants up to `count` jobs.
struct ClaimWant {
  std::string owner;
  int count = 0;
};

struct ClaimedJob {
  std::string owner;
  int64_t job_id = 0;
  int64_t session_id = 0;
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::string kind;         // perf | find
  int64_t attempt = 0;      // the fencing token of this lease
  int64_t retries = 0;
  std::string driver;       // conv_config.driver (canonical MIOpenDriver line)
  std::string solver_name;  // solver.name
  std::string config_class;  // "FP16/F/NHWC": data type, direction, layout (the warm start's class)
  // Perf jobs: results that finished after this time are not in `transfer` ("" = no bound). Set
  // by the compile step's claim and kept for the eval step's, so that both learn the same
  // score and the eval step tries the configs the compile step built.
  std::string transfer_horizon;
  std::string tuned_params;  // perf_result.params of the same session, config and solver, or ""
  // Perf jobs: the warm start (transfer of tuning results across configs and sessions): what this
  // solver's searches timed on the other configs of the same data type, direction and layout, in
  // any session of the same arch, one run per config, newest first (search/transfer.h; the
  // fastest time of each params, at most kTransferJobs configs).
  std::vector<search::TransferRun> transfer;
  // Perf jobs: the params of the newest verified result of this config and solver in another
  // session of the same arch and CU count ("" when none or LeaseStoreOptions::reuse_prior_results
  // is off): the job reuses it instead of searching.
  std::string prior_params;
  // Perf jobs: a find job of the same session, config and solver exists; it runs the finishing
  // step (tuner_core/search/finishing.h) after this job, so this job's search does not.
  bool find_follows = false;
  // Perf jobs: the fastest verified time of this config among the session's perf results when
  // the job was claimed (0 = none): the search's outclassed stop (search::TuneOptions::rival_ms).
  // A config's generic solvers' jobs have its last ids (admin/job_loader.h), so they more often
  // see one.
  double rival_ms = 0;
};

// The job as the coordinator needs it to validate a report (solver, problem, session).
struct JobInfo {
  int64_t job_id = 0;
  int64_t session_id = 0;
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::string kind;
  jobs::JobState state = jobs::JobState::kNew;
  int64_t attempt = 0;
  std::string lease_owner;
  std::string driver;
  std::string solver_name;
};

struct EvalSampleRow {
  std::string params;
  std::optional<double> time_ms;  // null when the candidate did not run
  std::string status;             // Disposition name
  std::string error;
};

struct KernelLink {
  int64_t kernel_id = 0;
  std::string build_key;  // 64 hex
};

// A report of one leased step. `succeeded` selects which fields matter.
struct StepReport {
  int64_t job_id = 0;
  int64_t attempt = 0;
  std::string owner;
  JobStep step = JobStep::kCompile;
  bool succeeded = false;
  // Failure:
  std::string error;
  bool retryable = true;      // false: straight to 'failed' (deterministic failure)
  bool executor_killed = false;  // the step crashed or hung its executor (counts to quarantine)
  jobs::Blame blame = jobs::Blame::kJob;  // kHost / kUnsupported: back to ready, not charged
  // Compile success:
  std::vector<KernelLink> kernels;
  // Eval success (perf: winner params; find: the solver's time at its best/default params):
  bool has_result = false;  // false: evaluated without a passing candidate (no result row)
  std::string params;
  double kernel_time_ms = 0;
  int64_t workspace_bytes = 0;
  int64_t candidates_tried = 0;
  bool verified = false;
  // Find success: `params` are the session's perf result's, built for this problem alone (the
  // finishing step), verified and faster: the perf result takes these params and this time.
  bool finished = false;
  std::vector<EvalSampleRow> samples;
};

enum class ReportOutcome {
  kApplied,    // state changed, results written
  kDuplicate,  // this (job, attempt) already reached the step's done state: nothing written
  kStale,      // not (or no longer) the holder of this lease: nothing written
  kNotFound,   // no such job
};
const char* ReportOutcomeName(ReportOutcome o);

struct RenewedLease {
  int64_t job_id = 0;
  int64_t attempt = 0;
};

struct StoredKernel {
  std::string build_key;
  std::string arch;
  std::string compiler;
  std::string kernel_name;
  std::string options;
  std::string entries;      // comma-separated
  std::string code_object;  // uncompressed
  std::string built_by;     // the worker that sent it first (JobKernels; "" before migration 6)
};

struct ReapCounts {
  int64_t requeued = 0;
  int64_t failed = 0;
  int64_t forgiven = 0;  // requeued without retries + 1 (see ReapOptions::forgive_extended_before)
};

struct ReapOptions {
  int limit = 1000;  // at most this many jobs per call
  // Database time (DatabaseNow()); empty: none. A lease last extended (claimed or renewed)
  // before it, i.e. one whose lease_expires_at < forgive_extended_before + lease_seconds, is
  // requeued without retries + 1 and never failed: its holder may have been unable to renew
  // because no coordinator or no database served it (the coordinator passes the time it began
  // serving, after a start or a database outage). Later expiries are charged as usual.
  std::string forgive_extended_before;
};

class LeaseStore {
 public:
  LeaseStore(Database& db, LeaseStoreOptions options);

  // One transaction: for each session in order, SELECT ready jobs ORDER BY priority DESC,
  // retries, id LIMIT (what is still wanted) FOR UPDATE SKIP LOCKED (with their problem and
  // solver name, read without locking), then a single UPDATE that leases them, handing them out
  // to `wants` in order. Returns the claimed jobs (fewer when the queue runs dry; a job never
  // goes to two owners). Quarantined jobs are already 'failed' (Report does that when the
  // threshold is reached), so they are never claimed. `excluded_solvers`: per session, solver
  // ids not to claim (the claimants reported them unsupported).
  // Unacknowledged commits: every claim tags its jobs with a token (job.lease_claim). When the
  // transaction had to be retried (a lost connection, e.g. at COMMIT), an earlier attempt may
  // have committed too: its jobs, which nobody is given, are handed back before returning. When
  // the claim fails, its token is kept and its jobs, if it committed after all, are handed back
  // at the start of the next Claim that reaches the database. Either way no retry is counted.
  absl::StatusOr<std::vector<ClaimedJob>> Claim(
      JobStep step, const std::vector<int64_t>& session_ids, const std::vector<ClaimWant>& wants,
      const std::map<int64_t, std::set<int64_t>>& excluded_solvers = {});

  // Extends the owner's leases that are still held with the same attempt; returns those.
  absl::StatusOr<std::vector<RenewedLease>> Renew(const std::string& owner,
                                                  const std::vector<RenewedLease>& leases);

  // Group commit: all reports in one transaction (one outcome per report, in order). Successes
  // of distinct jobs share one locking SELECT, one UPDATE per step and multi-row inserts; a batch
  // with a failure or a repeated job is applied report by report. A report that cannot be written
  // (bad data) fails the whole batch; the caller retries them one by one.
  absl::StatusOr<std::vector<ReportOutcome>> Report(const std::vector<StepReport>& reports);

  // Hands leases back without counting a retry (graceful worker shutdown): fenced like Report.
  absl::StatusOr<int64_t> Release(const std::string& owner,
                                  const std::vector<RenewedLease>& leases);

  // Expired leases back to ready (retries + 1) or to failed at the limit; forgiven ones (see
  // ReapOptions) back to ready with retries unchanged and the error saying why.
  absl::StatusOr<ReapCounts> Reap(const ReapOptions& options = {});

  // Every lease of `session_id` held by `owner` back to its ready state without counting a retry
  // (a `tuna tune -f` run resuming its session hands back the leases of its dead predecessor's
  // local workers). Returns how many.
  absl::StatusOr<int64_t> ReleaseOwner(int64_t session_id, const std::string& owner);
  // The distinct owners of the session's leased jobs.
  absl::StatusOr<std::vector<std::string>> LeaseOwners(int64_t session_id);

  // The database server's clock as DATETIME(6) text ("YYYY-MM-DD hh:mm:ss.ffffff"): comparable
  // with lease_expires_at whatever this host's clock says.
  absl::StatusOr<std::string> DatabaseNow();

  absl::StatusOr<std::optional<JobInfo>> GetJob(int64_t job_id);

  // Stores code objects (zstd, deduplicated by SHA-256 of the content); ids in input order. A new
  // blob records `built_by` (an already stored one keeps its first builder).
  absl::StatusOr<std::vector<int64_t>> PutKernels(const std::vector<StoredKernel>& kernels,
                                                  const std::string& built_by = "");
  // The kernels a job's compile step linked (decompressed; DataLoss on a corrupt blob).
  absl::StatusOr<std::vector<StoredKernel>> JobKernels(int64_t job_id);

  const LeaseStoreOptions& options() const { return options_; }

 private:
  // Sets transfer of the perf jobs (one read per session and solver, reused for
  // options_.warm_params_ttl_s); none for the (session, solver) pairs in `none`, which the claim
  // found without any result to read.
  absl::Status FillWarmParams(std::vector<ClaimedJob>& jobs,
                              const std::set<std::pair<int64_t, int64_t>>& none);
  // Sets prior_params of the perf jobs (one read per session of the claim, while
  // EarlierResultsExist).
  absl::Status FillPriorParams(std::vector<ClaimedJob>& jobs);
  // Whether another session on `session_id`'s target has verified results (prior_known_).
  absl::StatusOr<bool> EarlierResultsExist(int64_t session_id);
  // Successes of distinct jobs, written together; one outcome per report appended to `out`.
  absl::Status ReportSuccesses(Connection& c, const std::vector<const StepReport*>& reports,
                               std::vector<ReportOutcome>& out);
  absl::StatusOr<ReportOutcome> ReportFailure(Connection& c, const StepReport& r);
  absl::Status RecordFailure(Connection& c, const StepReport& r, const JobInfo& job);
  // Counts an executor kill against the job's (config, solver); true when it is now quarantined.
  // A failure blamed on the host or unsupported: back to ready, no retry charged.
  absl::Status HandBack(Connection& c, const StepReport& r);
  absl::StatusOr<bool> CountKill(Connection& c, const JobInfo& job, const std::string& error,
                                 int64_t* kills);

  // Hands back the jobs claimed under `token` that are still leased and not in `keep`; returns
  // how many (see Claim).
  absl::StatusOr<int64_t> HandBackClaim(int64_t token, const std::vector<int64_t>& keep);
  // Hands back the jobs of claims that failed (unsettled_); keeps the tokens it could not settle.
  void SettleFailedClaims();

  Database& db_;
  LeaseStoreOptions options_;
  std::atomic<int64_t> next_claim_token_;  // random start: tokens differ across coordinators
  std::mutex unsettled_mu_;
  std::vector<int64_t> unsettled_;  // tokens of failed claims; guarded by unsettled_mu_
  struct WarmEntry {
    std::vector<search::TransferRun> runs;
    std::chrono::steady_clock::time_point read_at;
  };
  // Per session: whether another session on its target has verified results at all, and when
  // that was read (FillPriorParams skips its per-claim read while there are none; re-read every
  // kPriorRecheck, for sessions tuning alongside). Guarded by warm_mu_.
  struct PriorKnown {
    bool any = false;
    std::chrono::steady_clock::time_point read_at;
  };
  std::map<int64_t, PriorKnown> prior_known_;
  static constexpr std::chrono::seconds kPriorRecheck{30};
  std::mutex warm_mu_;
  // (session, solver, config class): a warm start serves the configs of one class.
  using WarmKey = std::tuple<int64_t, int64_t, std::string, std::string>;  // + class, horizon
  std::map<WarmKey, WarmEntry> warm_cache_;  // guarded by warm_mu_
};

}  // namespace tuna::schema
