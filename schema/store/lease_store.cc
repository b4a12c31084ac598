#include "schema/store/lease_store.h"

#include <zstd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "spdlog/spdlog.h"
#include "schema/store/result_store.h"
#include "tuner_core/hash/sha256.h"
#include "schema/store/sql_batch.h"
#include "tuner_core/search/transfer.h"

namespace tuna::schema {
namespace {

constexpr char kLeasedStates[] = "('compile_start', 'eval_start')";
// A leased job's ready state (hand-backs, releases and expiries; compile_start -> new,
// eval_start -> compiled), then the columns a lease sets cleared.
constexpr char kBackToReady[] =
    "state = IF(state = 'compile_start', 'new', 'compiled'), lease_owner = NULL, "
    "lease_expires_at = NULL";
// The verified perf results (pr) of the other sessions on the target of session `me.id = ?`
// (same arch and CU count): what an earlier session's reuse reads.
constexpr char kEarlierResults[] =
    "FROM perf_result pr JOIN session s ON s.id = pr.session_id JOIN session me ON me.id = ? "
    "WHERE pr.verified = TRUE AND pr.session_id <> me.id AND s.arch = me.arch AND "
    "s.num_cu = me.num_cu";

// The verified perf results (pr) of solver `solver` in any session on the arch of session
// `session` (SQL expressions: a placeholder or a column): what the warm-start read groups.
std::string WarmResults(const char* solver, const char* session) {
  return absl::StrCat("FROM perf_result pr JOIN session s ON s.id = pr.session_id WHERE pr.solver_id = ",
                      solver, " AND pr.verified = TRUE AND s.arch = (SELECT arch FROM session WHERE id = ",
                      session, ")");
}

// A config's class for the warm start (of conv_config c): configs of one data type, direction and
// layout share tiles; FP16 times say little about FP32 ones.
#define TUNA_CONFIG_CLASS "CONCAT_WS('/', c.data_type, c.direction, c.in_layout)"

// What the warm start learns from (search/transfer.h): the fastest passing time of each params
// string in each of the solver's newest kTransferJobs evaluated perf jobs on configs of one class
// on the arch of session `?` (any session, so other configs of this one and other sessions'
// results both count) that finished by the job's transfer horizon, with each config's driver
// line; one run per config, in descending config id.
// The job rows come from idx_job_solver newest first, so the read is bounded however large the
// database grows.
constexpr char kTransferSamples[] =
    "SELECT t.config_id, t.driver, e.params, MIN(e.time) AS ms FROM (SELECT j.id, j.config_id, c.driver "
    "FROM job j JOIN session s ON s.id = j.session_id JOIN conv_config c ON c.id = j.config_id "
    "WHERE j.solver_id = ? AND j.kind = 'perf' AND j.state = 'evaluated' AND "
    "s.arch = (SELECT arch FROM session WHERE id = ?) AND " TUNA_CONFIG_CLASS " = ? AND "
    "j.finished_at <= ? ORDER BY j.id DESC LIMIT ?) t JOIN eval_sample e ON e.job_id = t.id "
    "WHERE e.status = 'Passed' AND e.time > 0 GROUP BY t.config_id, t.driver, e.params "
    "ORDER BY t.config_id DESC, e.params";
// ~50 times per config from a default search: ~3,000 rows, ~100 kB on the wire, ~0.1 s to learn.
constexpr int64_t kTransferJobs = 64;

std::string Truncated(std::string s, size_t n = 4000) {
  if (s.size() > n) s.resize(n);
  return s;
}

JobInfo JobFromRow(const Row& r) {
  JobInfo j;
  j.job_id = r.Int("id");
  j.session_id = r.Int("session_id");
  j.config_id = r.Int("config_id");
  j.solver_id = r.Int("solver_id");
  j.kind = r.String("kind");
  // The column is an ENUM of exactly these names; anything else reads as errored (never claimed).
  j.state = jobs::ParseJobState(r.String("state")).value_or(jobs::JobState::kErrored);
  j.attempt = r.Int("attempt");
  j.lease_owner = r.String("lease_owner");
  j.driver = r.String("driver");
  j.solver_name = r.String("solver_name");
  return j;
}

// The fencing decision for one report against its locked job row: kApplied when the report
// names the current lease (write it), kDuplicate when this very (job, attempt) already reached
// the state the report leads to (an earlier copy was applied; the lease is released), else kStale.
ReportOutcome Fence(const JobInfo& job, const StepReport& r) {
  if (job.state == jobs::LeasedState(r.step) && job.attempt == r.attempt &&
      job.lease_owner == r.owner) {
    return ReportOutcome::kApplied;
  }
  const bool released = job.lease_owner.empty() && job.attempt == r.attempt;
  if (released && r.succeeded && job.state == jobs::DoneState(r.step)) {
    return ReportOutcome::kDuplicate;
  }
  if (released && !r.succeeded &&
      (job.state == jobs::ReadyState(r.step) || job.state == jobs::JobState::kFailed)) {
    return ReportOutcome::kDuplicate;
  }
  return ReportOutcome::kStale;
}

constexpr char kJobSelect[] =
    "SELECT j.id, j.session_id, j.config_id, j.solver_id, j.kind, j.state, j.attempt, "
    "j.retries, j.lease_owner, c.driver, s.name AS solver_name FROM job j "
    "JOIN conv_config c ON c.id = j.config_id JOIN solver s ON s.id = j.solver_id ";

}  // namespace

const char* ReportOutcomeName(ReportOutcome o) {
  switch (o) {
    case ReportOutcome::kApplied: return "applied";
    case ReportOutcome::kDuplicate: return "duplicate";
    case ReportOutcome::kStale: return "stale";
    case ReportOutcome::kNotFound: return "not_found";
  }
  return "?";
}

absl::StatusOr<std::vector<ClaimedJob>> LeaseStore::Claim(
    JobStep step, const std::vector<int64_t>& session_ids, const std::vector<ClaimWant>& wants,
    const std::map<int64_t, std::set<int64_t>>& excluded_solvers) {
  int64_t total = 0;
  for (const ClaimWant& w : wants) {
    if (w.owner.empty() || w.count < 0) {
      return absl::InvalidArgumentError("claim: empty owner or negative count");
    }
    total += w.count;
  }
  std::vector<ClaimedJob> out;
  if (total == 0 || session_ids.empty()) return out;
  SettleFailedClaims();
  const int64_t token = next_claim_token_.fetch_add(1);
  int attempts = 0;
  std::set<std::pair<int64_t, int64_t>> no_warm;  // (session, solver) without warm-start params
  std::string db_now;  // the database's NOW(6) at the latest claim statement
  // The locking SELECT returns everything the claimants need, so a claim of one session is four
  // round trips whatever its size (START TRANSACTION, SELECT, UPDATE, COMMIT).
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    out.clear();
    no_warm.clear();
    db_now.clear();
    ++attempts;
    for (int64_t sid : session_ids) {
      const int64_t remaining = total - static_cast<int64_t>(out.size());
      if (remaining <= 0) break;
      // One session at a time: `state = ? AND session_id = ?` walks idx_job_claim in order and
      // stops after `remaining` unlocked rows; an IN list over sessions would sort.
      // The problem and solver name come from subqueries, which read without locking: FOR UPDATE
      // locks only the job rows (on a join it would also lock the config and solver rows, and
      // concurrent claims would then skip every job of a solver one of them had claimed).
      Params q{std::string(jobs::ToString(jobs::ReadyState(step))), sid};
      std::string exclude;
      if (auto ex = excluded_solvers.find(sid); ex != excluded_solvers.end() && !ex->second.empty()) {
        exclude = absl::StrCat("AND j.solver_id NOT IN (", ListPlaceholders(ex->second.size()), ") ");
        q.insert(q.end(), ex->second.begin(), ex->second.end());
      }
      q.push_back(remaining);
      auto rows = c.Query(
          "SELECT j.id, j.session_id, j.config_id, j.solver_id, j.kind, j.attempt, j.retries, "
          "(SELECT c.driver FROM conv_config c WHERE c.id = j.config_id) AS driver, "
          "(SELECT s.name FROM solver s WHERE s.id = j.solver_id) AS solver_name, "
          "(SELECT " TUNA_CONFIG_CLASS " FROM conv_config c WHERE c.id = j.config_id) AS config_class, "
          "j.transfer_horizon, "
          "(SELECT pr.params FROM perf_result pr WHERE pr.session_id = j.session_id AND "
          "pr.config_id = j.config_id AND pr.solver_id = j.solver_id) AS tuned_params, "
          // Whether the warm-start read can find anything (FillWarmParams): on a target without
          // verified results of the solver it is skipped (MariaDB's subquery cache evaluates this
          // once per solver and session of the claim).
          "EXISTS (SELECT 1 " + WarmResults("j.solver_id", "j.session_id") + ") AS warm_any, "
          // Whether a find job follows this perf job (it then runs the finishing step).
          "(j.kind = 'perf' AND EXISTS (SELECT 1 FROM job f WHERE f.session_id = j.session_id AND "
          "f.config_id = j.config_id AND f.solver_id = j.solver_id AND f.kind = 'find')) AS find_follows, "
          // The fastest verified time of the config in this session so far (perf jobs: the
          // search's outclassed stop), NULL when none.
          "(CASE WHEN j.kind = 'perf' THEN (SELECT MIN(r.kernel_time) FROM perf_result r WHERE "
          "r.session_id = j.session_id AND r.config_id = j.config_id AND r.verified = TRUE AND "
          "r.kernel_time > 0) END) AS rival_ms, "
          // The database's clock, for the transfer horizon below (no statement of its own).
          "CAST(NOW(6) AS CHAR) AS db_now "
          "FROM job j WHERE j.state = ? AND j.session_id = ? " + exclude +
          // A find job waits for the perf job of its config and solver to end, so that it
          // times the tuned params (MITuna runs find after perf the same way).
          "AND (j.kind <> 'find' OR NOT EXISTS (SELECT 1 FROM job p WHERE "
          "p.session_id = j.session_id AND p.config_id = j.config_id AND "
          "p.solver_id = j.solver_id AND p.kind = 'perf' AND p.state NOT IN ('evaluated', 'failed', 'not_applicable', 'cancelled'))) "
          // Eval claims: fillers after the other ready jobs of their priority (idx_job_claim_eval).
          + (step == JobStep::kEval ? "ORDER BY j.priority DESC, j.filler, j.retries, j.id "
                                  : "ORDER BY j.priority DESC, j.retries, j.id ") +
          "LIMIT ? FOR UPDATE SKIP LOCKED",
          q);
      if (!rows.ok()) return rows.status();
      for (const Row& r : *rows) {
        ClaimedJob j;
        j.job_id = r.Int("id");
        j.session_id = r.Int("session_id");
        j.config_id = r.Int("config_id");
        j.solver_id = r.Int("solver_id");
        j.kind = r.String("kind");
        // The row is locked until COMMIT and the UPDATE below adds exactly one.
        j.attempt = r.Int("attempt") + 1;
        j.retries = r.Int("retries");
        j.driver = r.String("driver");
        j.solver_name = r.String("solver_name");
        j.config_class = r.String("config_class");
        j.tuned_params = r.String("tuned_params");  // NULL (no perf result) reads as ""
        j.transfer_horizon = r.String("transfer_horizon");
        j.find_follows = r.Int("find_follows") != 0;
        j.rival_ms = r.Double("rival_ms");  // NULL (no result yet) reads as 0
        if (r.Int("warm_any") == 0) no_warm.insert({j.session_id, j.solver_id});
        db_now = std::max(db_now, r.String("db_now"));
        out.push_back(std::move(j));
      }
    }
    if (out.empty()) return absl::OkStatus();
    // A compile step fixes the transfer horizon of its perf jobs (its warm-start read and the
    // eval step's see the same results: FillWarmParams); claims of find jobs alone need none.
    std::string horizon;
    const bool any_perf = std::any_of(out.begin(), out.end(), [](const ClaimedJob& j) { return j.kind == "perf"; });
    if (step == JobStep::kCompile && any_perf) {
      horizon = db_now;  // the latest claim statement's NOW(6) (same format: text order is time order)
      for (ClaimedJob& j : out) j.transfer_horizon = horizon;
    }
    // Hand out in order: wants[0] gets the first count jobs, and so on.
    size_t next = 0;
    for (const ClaimWant& w : wants) {
      for (int k = 0; k < w.count && next < out.size(); ++k) out[next++].owner = w.owner;
    }
    Params p;
    for (const ClaimedJob& j : out) {
      p.push_back(j.job_id);
      p.push_back(j.owner);
    }
    const size_t padded = PadRows(p, out.size(), 2);
    std::string cases;
    for (size_t k = 0; k < padded; ++k) cases += " WHEN ? THEN ?";
    p.push_back(std::string(jobs::ToString(jobs::LeasedState(step))));
    p.push_back(static_cast<int64_t>(options_.lease_seconds));
    p.push_back(token);
    p.push_back(horizon);
    for (const ClaimedJob& j : out) p.push_back(j.job_id);
    PadRows(p, out.size(), 1);
    p.push_back(std::string(jobs::ToString(jobs::ReadyState(step))));
    auto n = c.Execute(
        absl::StrCat("UPDATE job SET lease_owner = CASE id", cases,
                     " END, state = ?, attempt = attempt + 1, "
                     "lease_expires_at = NOW(6) + INTERVAL ? SECOND, lease_claim = ?, "
                     "transfer_horizon = COALESCE(NULLIF(?, ''), transfer_horizon), "
                     "started_at = COALESCE(started_at, NOW(6)) WHERE id IN (",
                     ListPlaceholders(padded), ") AND state = ?"),
        p);
    if (!n.ok()) return n.status();
    if (*n != static_cast<int64_t>(out.size())) {
      // Rows were locked by our SELECT ... FOR UPDATE: nobody else can have moved them.
      return absl::InternalError(
          absl::StrCat("claim: updated ", *n, " of ", out.size(), " jobs"));
    }
    return absl::OkStatus();
  });
  if (!st.ok()) {
    std::lock_guard<std::mutex> lock(unsettled_mu_);
    unsettled_.push_back(token);
    return st;
  }
  if (attempts > 1) {
    std::vector<int64_t> keep;
    for (const ClaimedJob& j : out) keep.push_back(j.job_id);
    if (auto n = HandBackClaim(token, keep); !n.ok()) {
      std::lock_guard<std::mutex> lock(unsettled_mu_);
      unsettled_.push_back(token);  // settled later; `keep` is leased to its owners by then
    }
  }
  if (absl::Status warm = FillWarmParams(out, no_warm); !warm.ok()) {
    // Only a hint for the search: a failed read costs the jobs their warm start, not their lease.
    spdlog::warn("claim: reading warm-start params: {}", warm.ToString());
  }
  if (absl::Status prior = FillPriorParams(out); !prior.ok()) {
    // Likewise: a failed read makes the jobs search instead of reusing an earlier result.
    spdlog::warn("claim: reading earlier sessions' results: {}", prior.ToString());
  }
  return out;
}

LeaseStore::LeaseStore(Database& db, LeaseStoreOptions options)
    : db_(db), options_(options),
      next_claim_token_(static_cast<int64_t>(std::random_device{}() >> 1) << 30 | 1) {}

absl::StatusOr<int64_t> LeaseStore::HandBackClaim(int64_t token, const std::vector<int64_t>& keep) {
  Params p{token};
  std::string except;
  if (!keep.empty()) {
    except = absl::StrCat(" AND id NOT IN (", ListPlaceholders(keep.size()), ")");
    p.insert(p.end(), keep.begin(), keep.end());
  }
  auto n = db_.Execute(absl::StrCat("UPDATE job SET ", kBackToReady, ", lease_claim = NULL "
                                    "WHERE state IN ", kLeasedStates, " AND lease_claim = ?",
                                    except),
                       p);
  if (n.ok() && *n > 0) {
    spdlog::warn("claim: {} job(s) of a claim whose commit was not acknowledged (the database "
                 "or the connection failed at that moment) handed back; no retry counted", *n);
  }
  return n;
}

void LeaseStore::SettleFailedClaims() {
  std::vector<int64_t> tokens;
  {
    std::lock_guard<std::mutex> lock(unsettled_mu_);
    tokens.swap(unsettled_);
  }
  std::vector<int64_t> left;
  for (int64_t token : tokens) {
    if (!HandBackClaim(token, {}).ok()) left.push_back(token);
  }
  if (left.empty()) return;
  std::lock_guard<std::mutex> lock(unsettled_mu_);
  unsettled_.insert(unsettled_.end(), left.begin(), left.end());
}

absl::Status LeaseStore::FillWarmParams(std::vector<ClaimedJob>& jobs,
                                        const std::set<std::pair<int64_t, int64_t>>& none) {
  const auto now = std::chrono::steady_clock::now();
  const auto ttl = std::chrono::duration<double>(options_.warm_params_ttl_s);
  std::map<WarmKey, std::vector<search::TransferRun>> by_session_solver;
  for (ClaimedJob& j : jobs) {
    if (j.kind != "perf") continue;
    const WarmKey key{j.session_id, j.solver_id, j.config_class, j.transfer_horizon};
    auto [it, fresh] = by_session_solver.try_emplace(key);
    if (fresh) {
      std::lock_guard<std::mutex> lock(warm_mu_);
      auto cached = warm_cache_.find(key);
      if (cached != warm_cache_.end() && now - cached->second.read_at < ttl) {
        it->second = cached->second.runs;
        fresh = false;
      }
    }
    if (fresh && !none.count({j.session_id, j.solver_id})) {  // else the read would find nothing
      // No horizon (compiled before it was recorded): every result so far.
      const std::string horizon = j.transfer_horizon.empty() ? "9999-12-31 23:59:59" : j.transfer_horizon;
      auto rows = db_.Query(kTransferSamples, {j.solver_id, j.session_id, j.config_class, horizon, kTransferJobs});
      if (!rows.ok()) return rows.status();
      int64_t config = -1;
      for (const Row& r : *rows) {
        if (r.Int(0) != config) {
          config = r.Int(0);
          it->second.push_back({r.String(1), {}});
        }
        it->second.back().times.push_back({r.String(2), r.Double(3)});
      }
    }
    if (fresh && options_.warm_params_ttl_s > 0) {
      std::lock_guard<std::mutex> lock(warm_mu_);
      warm_cache_[key] = {it->second, now};
    }
    j.transfer = it->second;
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> LeaseStore::EarlierResultsExist(int64_t session_id) {
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(warm_mu_);
    auto it = prior_known_.find(session_id);
    if (it != prior_known_.end() && now - it->second.read_at < kPriorRecheck) return it->second.any;
  }
  auto exists = db_.Query(absl::StrCat("SELECT EXISTS (SELECT 1 ", kEarlierResults, ")"), {session_id});
  if (!exists.ok()) return exists.status();
  const bool any = (*exists)[0].Int(0) != 0;
  std::lock_guard<std::mutex> lock(warm_mu_);
  prior_known_[session_id] = {any, now};
  return any;
}

absl::Status LeaseStore::FillPriorParams(std::vector<ClaimedJob>& jobs) {
  if (!options_.reuse_prior_results) return absl::OkStatus();
  std::map<int64_t, std::vector<ClaimedJob*>> by_session;
  for (ClaimedJob& j : jobs) {
    if (j.kind == "perf") by_session[j.session_id].push_back(&j);
  }
  for (auto& [sid, perf] : by_session) {
    absl::StatusOr<bool> any = EarlierResultsExist(sid);
    if (!any.ok()) return any.status();
    if (!*any) continue;  // the usual first session on a target: nothing to reuse
    Params p{sid};
    std::string pairs;
    for (const ClaimedJob* j : perf) {
      absl::StrAppend(&pairs, pairs.empty() ? "" : ", ", "(?, ?)");
      p.push_back(j->config_id);
      p.push_back(j->solver_id);
    }
    // Newest first: the first row per (config, solver) wins.
    auto rows = db_.Query(absl::StrCat("SELECT pr.config_id, pr.solver_id, pr.params ", kEarlierResults,
                                       " AND (pr.config_id, pr.solver_id) IN (", pairs, ") ORDER BY pr.id DESC"),
                          p);
    if (!rows.ok()) return rows.status();
    std::map<std::pair<int64_t, int64_t>, std::string> newest;
    for (const Row& r : *rows) newest.try_emplace({r.Int("config_id"), r.Int("solver_id")}, r.String("params"));
    for (ClaimedJob* j : perf) {
      if (auto it = newest.find({j->config_id, j->solver_id}); it != newest.end()) j->prior_params = it->second;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RenewedLease>> LeaseStore::Renew(
    const std::string& owner, const std::vector<RenewedLease>& leases) {
  std::vector<RenewedLease> out;
  if (leases.empty()) return out;
  std::vector<int64_t> ids;
  for (const auto& l : leases) ids.push_back(l.job_id);
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    out.clear();
    Params p{static_cast<int64_t>(options_.lease_seconds), owner};
    for (int64_t id : ids) p.push_back(id);
    auto n = c.Execute(absl::StrCat("UPDATE job SET lease_expires_at = NOW(6) + INTERVAL ? SECOND "
                                    "WHERE lease_owner = ? AND state IN ",
                                    kLeasedStates, " AND id IN (", ListPlaceholders(ids.size()),
                                    ")"),
                       p);
    if (!n.ok()) return n.status();
    Params q{owner};
    for (int64_t id : ids) q.push_back(id);
    auto rows = c.Query(absl::StrCat("SELECT id, attempt FROM job WHERE lease_owner = ? AND "
                                     "state IN ",
                                     kLeasedStates, " AND id IN (", ListPlaceholders(ids.size()),
                                     ")"),
                        q);
    if (!rows.ok()) return rows.status();
    std::map<int64_t, int64_t> held;
    for (const Row& r : *rows) held[r.Int(0)] = r.Int(1);
    for (const auto& l : leases) {
      auto it = held.find(l.job_id);
      if (it != held.end() && it->second == l.attempt) out.push_back(l);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<std::vector<ReportOutcome>> LeaseStore::Report(
    const std::vector<StepReport>& reports) {
  std::vector<ReportOutcome> out;
  if (reports.empty()) return out;
  // Successes of distinct jobs (the steady state) are written together, in a few statements
  // whatever their number. A batch holding a failure or two reports of one job goes report by
  // report, in order, because there a report must see what the ones before it wrote (retries,
  // quarantine of a config, a duplicate of an applied report).
  std::vector<const StepReport*> all;
  std::set<int64_t> jobs;
  bool together = true;
  for (const StepReport& r : reports) {
    all.push_back(&r);
    if (!r.succeeded || !jobs.insert(r.job_id).second) together = false;
  }
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    out.clear();
    if (together) return ReportSuccesses(c, all, out);
    for (const StepReport& r : reports) {
      if (r.succeeded) {
        if (absl::Status s = ReportSuccesses(c, {&r}, out); !s.ok()) return s;
        continue;
      }
      auto o = ReportFailure(c, r);
      if (!o.ok()) return o.status();
      out.push_back(*o);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

namespace {

// What a batch of applied success reports writes, gathered per statement.
struct SuccessWrites {
  std::vector<int64_t> compiled, evaluated;
  // Compiled jobs past their first attempt: only they can hold links of an earlier compile (one
  // before a `jobs reset`); a first attempt has none, so the usual batch deletes nothing.
  std::vector<int64_t> relinked;
  Params decay;  // (session, config, solver) of each applied eval success
  Params links, samples;
  size_t link_rows = 0, sample_rows = 0;
  std::vector<NewPerfResult> perf;
  std::vector<NewFindResult> find;
  std::vector<Params> finished;  // (params, time, session, config, solver) of finished find results

  // One applied report of `job`.
  void Add(const JobInfo& job, const StepReport& r) {
    if (r.step == JobStep::kCompile) {
      compiled.push_back(r.job_id);
      if (job.attempt > 1) relinked.push_back(r.job_id);
      for (const KernelLink& k : r.kernels) {
        links.insert(links.end(), {r.job_id, k.kernel_id, k.build_key});
        ++link_rows;
      }
      return;
    }
    evaluated.push_back(r.job_id);
    decay.insert(decay.end(), {job.session_id, job.config_id, job.solver_id});
    if (r.has_result && job.kind == "perf") {
      perf.push_back({job.session_id, job.config_id, job.solver_id, r.job_id, r.params,
                      r.kernel_time_ms, r.workspace_bytes, r.candidates_tried, r.verified});
    } else if (r.has_result) {
      find.push_back({job.session_id, job.config_id, job.solver_id, r.job_id, r.kernel_time_ms,
                      r.workspace_bytes, r.params, r.verified});
      if (r.finished && r.verified) {
        finished.push_back({r.params, r.kernel_time_ms, job.session_id, job.config_id, job.solver_id});
      }
    }
    for (const EvalSampleRow& x : r.samples) {
      samples.insert(samples.end(),
                     {r.job_id, r.attempt, x.params,
                      x.time_ms ? Value(*x.time_ms) : Value(nullptr), x.status,
                      x.error.empty() ? Value(nullptr) : Value(Truncated(x.error))});
      ++sample_rows;
    }
  }
};

// The reports' job rows, locked. Locks the job rows only (a join would also lock their config
// and solver rows, serializing every report of one solver across coordinators).
absl::StatusOr<std::map<int64_t, JobInfo>> LockJobs(Connection& c,
                                                    const std::vector<const StepReport*>& reports) {
  Params ids;
  for (const StepReport* r : reports) ids.push_back(r->job_id);
  const size_t id_count = PadRows(ids, reports.size(), 1);
  auto rows = c.Query(absl::StrCat("SELECT id, session_id, config_id, solver_id, kind, state, "
                                   "attempt, retries, lease_owner, '' AS driver, "
                                   "'' AS solver_name FROM job WHERE id IN (",
                                   ListPlaceholders(id_count), ") FOR UPDATE"),
                      ids);
  if (!rows.ok()) return rows.status();
  std::map<int64_t, JobInfo> locked;
  for (const Row& row : *rows) {
    JobInfo j = JobFromRow(row);
    locked.emplace(j.job_id, std::move(j));
  }
  return locked;
}

// The owner becomes the step's worker: `x_worker = lease_owner` reads the owner before the
// next assignment clears it (MariaDB assigns left to right, and the standard's simultaneous
// assignment reads old values too). The rows are locked and were fenced to the leased state,
// which the WHERE repeats: a mismatch fails the batch instead of writing.
absl::Status FinishJobs(Connection& c, const std::vector<int64_t>& done, JobStep step,
                        const char* sql) {
  if (done.empty()) return absl::OkStatus();
  Params p{std::string(jobs::ToString(jobs::LeasedState(step)))};
  for (int64_t id : done) p.push_back(id);
  const size_t count = PadRows(p, done.size(), 1);
  auto n = c.Execute(
      absl::StrCat(sql, " WHERE state = ? AND id IN (", ListPlaceholders(count), ")"), p);
  if (!n.ok()) return n.status();
  if (*n != static_cast<int64_t>(done.size())) {
    return absl::InternalError(
        absl::StrCat("report: updated ", *n, " of ", done.size(), " locked jobs"));
  }
  return absl::OkStatus();
}

absl::Status WriteSuccesses(Connection& c, const SuccessWrites& w) {
  if (absl::Status st = FinishJobs(c, w.compiled, JobStep::kCompile,
                                   "UPDATE job SET state = 'compiled', compile_worker = lease_owner, "
                                   "lease_owner = NULL, lease_expires_at = NULL, error = NULL");
      !st.ok()) {
    return st;
  }
  if (!w.relinked.empty()) {
    // A re-compile (after `jobs reset`) replaces the links of the previous one.
    Params p(w.relinked.begin(), w.relinked.end());
    const size_t count = PadRows(p, w.relinked.size(), 1);
    auto d = c.Execute(
        absl::StrCat("DELETE FROM job_kernel WHERE job_id IN (", ListPlaceholders(count), ")"), p);
    if (!d.ok()) return d.status();
  }
  if (absl::Status st = FinishJobs(c, w.evaluated, JobStep::kEval,
                                   "UPDATE job SET state = 'evaluated', eval_worker = lease_owner, "
                                   "lease_owner = NULL, lease_expires_at = NULL, error = NULL, "
                                   "finished_at = NOW(6)");
      !st.ok()) {
    return st;
  }
  if (absl::Status st = InsertRows(
          c, "INSERT IGNORE INTO job_kernel (job_id, kernel_id, build_key) VALUES ", "", w.links,
          w.link_rows, 3);
      !st.ok()) {
    return st;
  }
  if (!w.evaluated.empty()) {
    // Quarantine decays: a batch's successes take one executor kill off each (config, solver). The
    // table is empty unless executors were killed, so this costs one indexed lookup per row.
    Params p = w.decay;
    const size_t count = PadRows(p, w.evaluated.size(), 3);
    auto d = c.Execute(absl::StrCat("UPDATE config_quarantine SET kills = kills - 1 WHERE kills > 0 "
                                    "AND NOT quarantined AND (session_id, config_id, solver_id) "
                                    "IN (", RowPlaceholders(count, 3), ")"),
                       p);
    if (!d.ok()) return d.status();
  }
  if (absl::Status st = InsertPerfResults(c, w.perf); !st.ok()) return st;
  if (absl::Status st = InsertFindResults(c, w.find); !st.ok()) return st;
  // The finishing step of a find job: the perf result (the perf db's entry) takes the params
  // built for this problem alone and their time.
  for (const Params& p : w.finished) {
    auto n = c.Execute("UPDATE perf_result SET params = ?, kernel_time = ? WHERE session_id = ? AND "
                       "config_id = ? AND solver_id = ? AND verified = TRUE",
                       p);
    if (!n.ok()) return n.status();
  }
  return InsertRows(c,
                    "INSERT IGNORE INTO eval_sample (job_id, attempt, params, time, status, error) "
                    "VALUES ",
                    "", w.samples, w.sample_rows, 6);
}

}  // namespace

absl::Status LeaseStore::ReportSuccesses(Connection& c,
                                         const std::vector<const StepReport*>& reports,
                                         std::vector<ReportOutcome>& out) {
  auto locked = LockJobs(c, reports);
  if (!locked.ok()) return locked.status();
  SuccessWrites writes;
  for (const StepReport* r : reports) {
    auto it = locked->find(r->job_id);
    if (it == locked->end()) {
      out.push_back(ReportOutcome::kNotFound);
      continue;
    }
    const ReportOutcome o = Fence(it->second, *r);
    out.push_back(o);
    if (o == ReportOutcome::kApplied) writes.Add(it->second, *r);
  }
  return WriteSuccesses(c, writes);
}

absl::StatusOr<ReportOutcome> LeaseStore::ReportFailure(Connection& c, const StepReport& r) {
  // Locks the job row only (see ReportSuccesses).
  auto rows = c.Query(
      "SELECT id, session_id, config_id, solver_id, kind, state, attempt, retries, lease_owner, "
      "'' AS driver, '' AS solver_name FROM job WHERE id = ? FOR UPDATE",
      {r.job_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return ReportOutcome::kNotFound;
  const JobInfo job = JobFromRow((*rows)[0]);
  const ReportOutcome o = Fence(job, r);
  if (o != ReportOutcome::kApplied) return o;
  absl::Status st = r.blame == jobs::Blame::kJob ? RecordFailure(c, r, job) : HandBack(c, r);
  if (!st.ok()) return st;
  return ReportOutcome::kApplied;
}

absl::StatusOr<bool> LeaseStore::CountKill(Connection& c, const JobInfo& job,
                                           const std::string& error, int64_t* kills) {
  const Params key{job.session_id, job.config_id, job.solver_id};
  auto u = c.Execute(
      "INSERT INTO config_quarantine (session_id, config_id, solver_id, kills, reason, last_error) "
      "VALUES (?, ?, ?, 1, 'executor_killed', ?) ON DUPLICATE KEY UPDATE kills = kills + 1, "
      "reason = VALUES(reason), last_error = VALUES(last_error)",
      {job.session_id, job.config_id, job.solver_id, error});
  if (!u.ok()) return u.status();
  auto k = c.Query("SELECT kills FROM config_quarantine WHERE session_id = ? AND config_id = ? "
                   "AND solver_id = ?",
                   key);
  if (!k.ok()) return k.status();
  *kills = (*k)[0].Int(0);
  if (*kills < options_.quarantine_kills) return false;
  auto q = c.Execute("UPDATE config_quarantine SET quarantined = TRUE WHERE session_id = ? AND "
                     "config_id = ? AND solver_id = ?",
                     key);
  if (!q.ok()) return q.status();
  return true;
}

absl::Status LeaseStore::HandBack(Connection& c, const StepReport& r) {
  const std::string why = r.blame == jobs::Blame::kHost
                              ? "host fault on "
                              : "released as unsupported by ";
  auto n = c.Execute(
      "UPDATE job SET state = ?, lease_owner = NULL, lease_expires_at = NULL, error = ? "
      "WHERE id = ?",
      {std::string(jobs::ToString(jobs::ReadyState(r.step))),
       Truncated(absl::StrCat(why, r.owner, ": ", r.error, "; not counted as a retry")), r.job_id});
  return n.status();
}

absl::Status LeaseStore::RecordFailure(Connection& c, const StepReport& r, const JobInfo& job) {
  auto cur = c.Query("SELECT retries FROM job WHERE id = ?", {r.job_id});
  if (!cur.ok()) return cur.status();
  const int64_t retries = (*cur)[0].Int(0) + 1;
  const std::string error = Truncated(r.error.empty() ? "failed (no reason given)" : r.error);
  bool quarantined = false;
  int64_t kills = 0;
  if (r.executor_killed) {
    auto q = CountKill(c, job, error, &kills);
    if (!q.ok()) return q.status();
    quarantined = *q;
  }
  const bool give_up = !r.retryable || retries >= options_.max_retries || quarantined;
  std::string final_error = error;
  if (quarantined) {
    final_error = absl::StrCat("quarantined: config and solver killed executors ", kills,
                               " times; last: ", error);
  } else if (give_up && r.retryable) {
    final_error = absl::StrCat("gave up after ", retries, " tries; last: ", error);
  }
  auto n = c.Execute(
      "UPDATE job SET state = ?, retries = retries + 1, executor_kills = executor_kills + ?, "
      "lease_owner = NULL, lease_expires_at = NULL, error = ?, "
      "finished_at = IF(? = 'failed', NOW(6), finished_at) WHERE id = ?",
      {std::string(give_up ? "failed" : jobs::ToString(jobs::ReadyState(r.step))),
       static_cast<int64_t>(r.executor_killed ? 1 : 0), final_error,
       std::string(give_up ? "failed" : jobs::ToString(jobs::ReadyState(r.step))), r.job_id});
  if (!n.ok()) return n.status();
  if (quarantined) {
    // The solver's other waiting jobs of the config would only kill more executors.
    auto q = c.Execute(
        "UPDATE job SET state = 'failed', error = ?, finished_at = NOW(6) WHERE session_id = ? "
        "AND config_id = ? AND solver_id = ? AND state IN ('new', 'compiled')",
        {final_error, job.session_id, job.config_id, job.solver_id});
    if (!q.ok()) return q.status();
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> LeaseStore::Release(const std::string& owner,
                                            const std::vector<RenewedLease>& leases) {
  int64_t released = 0;
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    released = 0;
    for (const RenewedLease& l : leases) {
      auto n = c.Execute(
          absl::StrCat("UPDATE job SET ", kBackToReady,
                       " WHERE id = ? AND attempt = ? AND lease_owner = ? AND state IN ",
                       kLeasedStates),
          {l.job_id, l.attempt, owner});
      if (!n.ok()) return n.status();
      released += *n;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return released;
}

absl::StatusOr<ReapCounts> LeaseStore::Reap(const ReapOptions& options) {
  ReapCounts counts;
  const bool forgive = !options.forgive_extended_before.empty();
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    counts = {};
    // `forgiven`: last extended before the given database time (see ReapOptions).
    Params q;
    if (forgive) {
      q = {options.forgive_extended_before, static_cast<int64_t>(options_.lease_seconds)};
    }
    q.push_back(static_cast<int64_t>(options.limit));
    auto rows = c.Query(absl::StrCat("SELECT id, retries, ",
                                     forgive ? "lease_expires_at < CAST(? AS DATETIME(6)) + "
                                               "INTERVAL ? SECOND"
                                             : "0",
                                     " AS forgiven FROM job WHERE state IN ", kLeasedStates,
                                     " AND lease_expires_at < NOW(6) LIMIT ? "
                                     "FOR UPDATE SKIP LOCKED"),
                        q);
    if (!rows.ok()) return rows.status();
    std::vector<int64_t> charged, forgiven;
    for (const Row& r : *rows) {
      if (r.Int(2) != 0) {
        forgiven.push_back(r.Int(0));
        ++counts.forgiven;
      } else {
        charged.push_back(r.Int(0));
        ++(r.Int(1) + 1 >= options_.max_retries ? counts.failed : counts.requeued);
      }
    }
    if (!forgiven.empty()) {
      auto n = c.Execute(
          absl::StrCat("UPDATE job SET error = CONCAT('lease expired while no coordinator or "
                       "database served it (owner ', IFNULL(lease_owner, '?'), ', attempt ', "
                       "attempt, ', step ', state, '); not counted as a retry'), ",
                       kBackToReady, " WHERE id IN (",
                       ListPlaceholders(forgiven.size()), ")"),
          Params(forgiven.begin(), forgiven.end()));
      if (!n.ok()) return n.status();
    }
    if (charged.empty()) return absl::OkStatus();
    // MariaDB applies SET assignments left to right, each seeing the previous ones: the error
    // and the new state are computed from the old owner, attempt and retries first.
    Params p{static_cast<int64_t>(options_.max_retries)};
    for (int64_t id : charged) p.push_back(id);
    auto n = c.Execute(
        absl::StrCat(
            "UPDATE job SET error = CONCAT('lease expired (owner ', IFNULL(lease_owner, '?'), "
            "', attempt ', attempt, ', step ', state, ')'), "
            "state = IF(retries + 1 >= ?, 'failed', "
            "IF(state = 'compile_start', 'new', 'compiled')), "
            "finished_at = IF(state = 'failed', NOW(6), finished_at), "
            "retries = retries + 1, lease_owner = NULL, lease_expires_at = NULL "
            "WHERE id IN (",
            ListPlaceholders(charged.size()), ")"),
        p);
    return n.status();
  });
  if (!st.ok()) return st;
  return counts;
}

absl::StatusOr<int64_t> LeaseStore::ReleaseOwner(int64_t session_id, const std::string& owner) {
  return db_.Execute(absl::StrCat("UPDATE job SET ", kBackToReady,
                                  " WHERE session_id = ? AND lease_owner = ? AND state IN ",
                                  kLeasedStates),
                     {session_id, owner});
}

absl::StatusOr<std::vector<std::string>> LeaseStore::LeaseOwners(int64_t session_id) {
  auto rows = db_.Query(absl::StrCat("SELECT DISTINCT lease_owner FROM job WHERE session_id = ? "
                                     "AND lease_owner IS NOT NULL AND state IN ",
                                     kLeasedStates),
                        {session_id});
  if (!rows.ok()) return rows.status();
  std::vector<std::string> out;
  for (const Row& r : *rows) out.push_back(r.String(0));
  return out;
}

absl::StatusOr<std::string> LeaseStore::DatabaseNow() {
  auto rows = db_.Query("SELECT CAST(NOW(6) AS CHAR)");
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::InternalError("SELECT NOW(6) returned no row");
  return (*rows)[0].String(0);
}

absl::StatusOr<std::optional<JobInfo>> LeaseStore::GetJob(int64_t job_id) {
  auto rows = db_.Query(absl::StrCat(kJobSelect, "WHERE j.id = ?"), {job_id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<JobInfo>();
  return std::optional<JobInfo>(JobFromRow((*rows)[0]));
}

absl::StatusOr<std::vector<int64_t>> LeaseStore::PutKernels(
    const std::vector<StoredKernel>& kernels, const std::string& built_by) {
  std::vector<int64_t> ids;
  absl::Status st = db_.WithConnection([&](Connection& c) -> absl::Status {
    ids.clear();
    for (const StoredKernel& k : kernels) {
      const std::string content_hash = hash::Sha256Hex(k.code_object);
      // Already stored? Skip compressing and shipping the blob again.
      auto have = c.Query("SELECT id FROM kernel WHERE hash = ?", {content_hash});
      if (!have.ok()) return have.status();
      if (!have->empty()) {
        ids.push_back((*have)[0].Int(0));
        continue;
      }
      std::string blob(ZSTD_compressBound(k.code_object.size()), '\0');
      const size_t size =
          ZSTD_compress(blob.data(), blob.size(), k.code_object.data(), k.code_object.size(), 3);
      if (ZSTD_isError(size)) {
        return absl::InternalError(absl::StrCat("zstd: ", ZSTD_getErrorName(size)));
      }
      blob.resize(size);
      auto n = c.Execute(
          "INSERT INTO kernel (hash, arch, compiler, kernel_name, options, entries, `blob`, "
          "uncompressed_size, built_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
          "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
          {content_hash, k.arch, k.compiler, k.kernel_name, k.options, k.entries, blob,
           static_cast<int64_t>(k.code_object.size()),
           built_by.empty() ? Value(nullptr) : Value(built_by)});
      if (!n.ok()) return n.status();
      auto id = c.LastInsertId();
      if (!id.ok()) return id.status();
      ids.push_back(*id);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return ids;
}

absl::StatusOr<std::vector<StoredKernel>> LeaseStore::JobKernels(int64_t job_id) {
  auto rows = db_.Query(
      "SELECT jk.build_key, k.arch, k.compiler, k.kernel_name, k.options, k.entries, k.`blob`, "
      "k.uncompressed_size, COALESCE(k.built_by, '') FROM job_kernel jk JOIN kernel k ON k.id = jk.kernel_id "
      "WHERE jk.job_id = ? ORDER BY jk.kernel_id",
      {job_id});
  if (!rows.ok()) return rows.status();
  std::vector<StoredKernel> out;
  for (const Row& r : *rows) {
    StoredKernel k;
    k.build_key = r.String(0);
    k.arch = r.String(1);
    k.compiler = r.String(2);
    k.kernel_name = r.String(3);
    k.options = r.String(4);
    k.entries = r.String(5);
    const std::string blob = r.String(6);
    const int64_t size = r.Int(7);
    k.built_by = r.String(8);
    k.code_object.assign(static_cast<size_t>(std::max<int64_t>(size, 0)), '\0');
    const size_t got = ZSTD_decompress(k.code_object.data(), k.code_object.size(), blob.data(),
                                       blob.size());
    if (ZSTD_isError(got) || static_cast<int64_t>(got) != size) {
      return absl::DataLossError(absl::StrCat("kernel blob of job ", job_id,
                                              " does not decompress to ", size, " bytes"));
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace tuna::schema
