#include "schema/store/job_store.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "schema/store/sql_batch.h"

namespace tuna::schema {
namespace {

constexpr size_t kChunk = 2000;  // 6 values a row

// " AND j.session_id = ?" plus its parameter, or nothing for all sessions.
std::string SessionFilter(std::optional<int64_t> session_id, Params* params) {
  if (!session_id) return "";
  params->push_back(*session_id);
  return " AND j.session_id = ?";
}

}  // namespace

absl::StatusOr<JobLoadCounts> JobStore::Load(int64_t session_id, const std::vector<JobSpec>& jobs,
                                             const std::string& label,
                                             const ProgressFn& progress) {
  for (const JobSpec& j : jobs) {
    if (j.kind != "perf" && j.kind != "find") {
      return absl::InvalidArgumentError(absl::StrCat("job kind '", j.kind, "' is not perf/find"));
    }
  }
  JobLoadCounts counts;
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    // Own inserts are visible to this transaction's later reads, others' commits are not
    // (REPEATABLE READ snapshot from the first read): after - before = rows this load added.
    const std::string count_sql = "SELECT COUNT(*) FROM job WHERE session_id = ?";
    auto before = c.Query(count_sql, {session_id});
    if (!before.ok()) return before.status();
    for (size_t begin = 0; begin < jobs.size(); begin += kChunk) {
      const size_t end = std::min(jobs.size(), begin + kChunk);
      Params params;
      constexpr size_t kColumns = 7;  // of the INSERT below
      params.reserve((end - begin) * kColumns);
      for (size_t k = begin; k < end; ++k) {
        params.push_back(session_id);
        params.push_back(jobs[k].config_id);
        params.push_back(jobs[k].solver_id);
        params.push_back(jobs[k].kind);
        params.push_back(std::string(jobs::ToString(jobs::JobState::kNew)));
        params.push_back(label);
        params.push_back(int64_t{jobs[k].filler ? 1 : 0});
      }
      auto n = c.Execute(
          absl::StrCat("INSERT INTO job (session_id, config_id, solver_id, kind, state, label, filler) "
                       "VALUES ",
                       RowPlaceholders(end - begin, kColumns), " ON DUPLICATE KEY UPDATE id = id"),
          params);
      if (!n.ok()) return n.status();
      if (progress) progress(static_cast<int64_t>(end), static_cast<int64_t>(jobs.size()));
    }
    auto after = c.Query(count_sql, {session_id});
    if (!after.ok()) return after.status();
    counts.added = (*after)[0].Int(0) - (*before)[0].Int(0);
    counts.existing = static_cast<int64_t>(jobs.size()) - counts.added;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return counts;
}

absl::StatusOr<int64_t> JobStore::Reset(int64_t session_id, const std::vector<std::string>& states,
                                        const std::optional<std::string>& tag) {
  if (states.empty()) return absl::InvalidArgumentError("no states to reset");
  for (const std::string& s : states) {
    if (!jobs::ParseJobState(s)) {
      return absl::InvalidArgumentError(absl::StrCat("unknown job state '", s, "'"));
    }
  }
  Params params{session_id};
  for (const std::string& s : states) params.push_back(s);
  std::string sql = absl::StrCat(
      "UPDATE job j SET j.state = 'new', j.lease_owner = NULL, j.lease_expires_at = NULL, "
      "j.retries = 0, j.started_at = NULL, j.finished_at = NULL WHERE j.session_id = ? AND "
      "j.state IN (",
      ListPlaceholders(states.size()), ")");
  if (tag) {
    sql += " AND j.config_id IN (SELECT t.config_id FROM config_tag t WHERE t.tag = ?)";
    params.push_back(*tag);
  }
  int64_t n = 0;
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    auto r = c.Execute(sql, params);
    if (!r.ok()) return r.status();
    n = *r;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return n;
}

absl::StatusOr<std::vector<StateCount>> JobStore::CountByState(std::optional<int64_t> session_id) {
  Params params;
  const std::string filter = SessionFilter(session_id, &params);
  auto rows = db_.Query(absl::StrCat("SELECT j.state, COUNT(*) FROM job j WHERE 1 = 1", filter,
                                     " GROUP BY j.state ORDER BY j.state"),
                        params);
  if (!rows.ok()) return rows.status();
  std::vector<StateCount> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.Int(1)});
  return out;
}

absl::StatusOr<std::vector<TagStateCount>> JobStore::CountByTag(std::optional<int64_t> session_id) {
  Params params;
  const std::string filter = SessionFilter(session_id, &params);
  auto rows = db_.Query(
      absl::StrCat("SELECT t.tag, j.state, COUNT(*) FROM job j JOIN config_tag t ON "
                   "t.config_id = j.config_id WHERE 1 = 1",
                   filter, " GROUP BY t.tag, j.state ORDER BY t.tag, j.state"),
      params);
  if (!rows.ok()) return rows.status();
  std::vector<TagStateCount> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.String(1), r.Int(2)});
  return out;
}

absl::StatusOr<std::vector<SessionStateCount>> JobStore::CountBySessionAndState() {
  auto rows = db_.Query("SELECT session_id, state, COUNT(*) FROM job GROUP BY session_id, state");
  if (!rows.ok()) return rows.status();
  std::vector<SessionStateCount> out;
  for (const Row& r : *rows) out.push_back({r.Int(0), r.String(1), r.Int(2)});
  return out;
}

absl::StatusOr<int64_t> JobStore::FinishedSince(std::optional<int64_t> session_id, int minutes) {
  Params params{int64_t{minutes}};
  const std::string filter = SessionFilter(session_id, &params);
  auto rows = db_.Query(
      absl::StrCat("SELECT COUNT(*) FROM job j WHERE j.state IN ('evaluated', 'failed', "
                   "'not_applicable', 'cancelled') AND COALESCE(j.finished_at, j.updated_at) >= "
                   "NOW(6) - INTERVAL ? MINUTE",
                   filter),
      params);
  if (!rows.ok()) return rows.status();
  return (*rows)[0].Int(0);
}

absl::StatusOr<std::vector<ErrorGroup>> JobStore::ErrorGroups(std::optional<int64_t> session_id,
                                                              int limit) {
  Params params;
  const std::string filter = SessionFilter(session_id, &params);
  params.push_back(int64_t{limit});
  auto rows = db_.Query(
      absl::StrCat("SELECT j.state, LEFT(COALESCE(j.error, ''), 200) AS reason, COUNT(*) AS n "
                   "FROM job j WHERE j.state IN ('errored', 'failed')",
                   filter, " GROUP BY j.state, reason ORDER BY n DESC, j.state, reason LIMIT ?"),
      params);
  if (!rows.ok()) return rows.status();
  std::vector<ErrorGroup> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.String(1), r.Int(2)});
  return out;
}

}  // namespace tuna::schema
