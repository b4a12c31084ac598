// `tuna status`: job progress of one session (or all): counts by state and by tag, progress,
// recent rate, ETA and failures grouped by reason.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "schema/store/job_store.h"

namespace tuna::admin {

struct StatusOptions {
  std::optional<int64_t> session_id;  // nullopt: every session
  int rate_window_minutes = 10;
  int max_error_groups = 20;
};

struct StatusReport {
  std::vector<schema::StateCount> by_state;    // every state, zeros included, ENUM order
  std::vector<schema::TagStateCount> by_tag;
  int64_t total = 0;
  int64_t finished = 0;     // terminal states (evaluated, failed, not_applicable, cancelled)
  int64_t in_progress = 0;  // leased: compile_start, eval_start
  double progress_percent = 0;  // finished / total (100 when there are no jobs)
  int64_t finished_recently = 0;  // in the last rate_window_minutes
  double rate_per_minute = 0;
  std::optional<double> eta_minutes;  // unset when nothing finished recently and work remains
  std::vector<schema::ErrorGroup> errors;
};

// Pure arithmetic over counts (unit-tested without a database).
void ComputeProgress(int rate_window_minutes, StatusReport* report);

absl::StatusOr<StatusReport> CollectStatus(schema::Database& db, const StatusOptions& options);

}  // namespace tuna::admin
