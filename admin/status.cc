#include "admin/status.h"

#include <map>

#include "jobs/job_state.h"

namespace tuna::admin {

void ComputeProgress(int rate_window_minutes, StatusReport* r) {
  r->total = r->finished = r->in_progress = 0;
  for (const auto& s : r->by_state) {
    r->total += s.jobs;
    const std::optional<jobs::JobState> state = jobs::ParseJobState(s.state);
    if (state && jobs::IsTerminal(*state)) r->finished += s.jobs;
    if (state && jobs::IsLeased(*state)) r->in_progress += s.jobs;
  }
  r->progress_percent =
      r->total == 0 ? 100.0 : 100.0 * static_cast<double>(r->finished) / r->total;
  r->rate_per_minute = rate_window_minutes > 0 ? static_cast<double>(r->finished_recently) /
                                                     rate_window_minutes
                                               : 0.0;
  const int64_t remaining = r->total - r->finished;
  r->eta_minutes.reset();
  if (remaining == 0) {
    r->eta_minutes = 0.0;
  } else if (r->rate_per_minute > 0) {
    r->eta_minutes = static_cast<double>(remaining) / r->rate_per_minute;
  }
}

absl::StatusOr<StatusReport> CollectStatus(schema::Database& db, const StatusOptions& options) {
  schema::JobStore jobs(db);
  StatusReport r;
  auto by_state = jobs.CountByState(options.session_id);
  if (!by_state.ok()) return by_state.status();
  std::map<std::string, int64_t> counts;
  for (const auto& s : *by_state) counts[s.state] = s.jobs;
  for (jobs::JobState s : jobs::AllJobStates()) {
    r.by_state.push_back({jobs::ToString(s), counts[jobs::ToString(s)]});
  }
  auto by_tag = jobs.CountByTag(options.session_id);
  if (!by_tag.ok()) return by_tag.status();
  r.by_tag = std::move(*by_tag);
  auto recent = jobs.FinishedSince(options.session_id, options.rate_window_minutes);
  if (!recent.ok()) return recent.status();
  r.finished_recently = *recent;
  auto errors = jobs.ErrorGroups(options.session_id, options.max_error_groups);
  if (!errors.ok()) return errors.status();
  r.errors = std::move(*errors);
  ComputeProgress(options.rate_window_minutes, &r);
  return r;
}

}  // namespace tuna::admin
