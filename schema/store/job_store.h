// The `job` table from the admin side: loading jobs, resetting them, and progress statistics
// (DESIGN §1.5, §3). Leasing and reporting are the coordinator's; this store never touches
// attempt, lease_owner semantics beyond clearing a lease on reset.
// Threads: as thread-safe as the Database. Errors: the store's codes (errors.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "jobs/job_state.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"

namespace tuna::schema {

struct JobSpec {
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::string kind;  // "perf" or "find"
  // Eval claims take it after the other ready jobs of its priority (migration 012): a cheap job
  // that keeps a device busy where nothing else is ready.
  bool filler = false;
};

struct JobLoadCounts {
  int64_t added = 0;
  int64_t existing = 0;  // already there (unique (session, config, solver, kind)): left as they are
};

struct StateCount {
  std::string state;
  int64_t jobs = 0;
};

struct SessionStateCount {
  int64_t session_id = 0;
  std::string state;
  int64_t jobs = 0;
};

struct TagStateCount {
  std::string tag;
  std::string state;
  int64_t jobs = 0;
};

struct ErrorGroup {
  std::string state;   // errored or failed
  std::string reason;  // the job's error, first 200 characters ("" when none was recorded)
  int64_t jobs = 0;
};

class JobStore {
 public:
  explicit JobStore(Database& db) : db_(db) {}

  // Inserts the jobs that do not exist yet, state new, in one transaction (chunked multi-row
  // INSERT ... ON DUPLICATE KEY UPDATE id = id). InvalidArgument for a kind other than perf/find.
  absl::StatusOr<JobLoadCounts> Load(int64_t session_id, const std::vector<JobSpec>& jobs,
                                     const std::string& label,
                                     const ProgressFn& progress = nullptr);

  // Moves the session's jobs in `states` (optionally only configs tagged `tag`) back to new,
  // clearing the lease and retries; `attempt` is kept so stale reports stay fenced. Returns the
  // number of jobs reset. InvalidArgument for an unknown state (jobs::ParseJobState).
  absl::StatusOr<int64_t> Reset(int64_t session_id, const std::vector<std::string>& states,
                                const std::optional<std::string>& tag);

  // Statistics over one session, or all sessions when session_id is nullopt.
  absl::StatusOr<std::vector<StateCount>> CountByState(std::optional<int64_t> session_id);
  absl::StatusOr<std::vector<TagStateCount>> CountByTag(std::optional<int64_t> session_id);
  // Every session's jobs by state (the queue gauges); states without jobs are absent.
  absl::StatusOr<std::vector<SessionStateCount>> CountBySessionAndState();
  // Jobs that reached evaluated/failed/not_applicable/cancelled in the last `minutes` (by
  // finished_at, or updated_at when the worker did not set finished_at).
  absl::StatusOr<int64_t> FinishedSince(std::optional<int64_t> session_id, int minutes);
  // Errored and failed jobs grouped by reason, largest groups first, at most `limit` groups.
  absl::StatusOr<std::vector<ErrorGroup>> ErrorGroups(std::optional<int64_t> session_id,
                                                      int limit);

 private:
  Database& db_;
};

}  // namespace tuna::schema
