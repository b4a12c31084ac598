// `tuna report`: what a tuning session found, per config and direction, against another session
// or a golden version: the best solver and its time, the speed-up against the other side and
// against the best solver's default parameters, the tuning time spent, and failures by reason.
// BuildReport gathers it (schema/store/report_store.h; no SQL here); report_render.h prints it
// as a terminal table or one self-contained HTML page.
//
// Speed-ups are time ratios (> 1: this session is faster): vs_other = other best / this best
// (find results); vs_default = the best solver's default-params time / its tuned time, both
// measured by the same perf job (times of different jobs differ by the host's noise). Geometric
// means are over the rows that have the ratio.
//
// Threads: BuildReport uses the Database from the calling thread only. Errors: NotFound (no
// session; no golden version or target), InvalidArgument (both a session and a golden version
// to compare with), the store's codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "schema/store/report_store.h"
#include "schema/store/session_store.h"

namespace tuna::admin {

struct ReportOptions {
  int64_t session_id = 0;
  std::optional<int64_t> vs_session;
  std::optional<int64_t> vs_golden;  // the golden version's rows of this session's target
};

struct ReportRow {
  int64_t config_id = 0;
  std::string problem;      // MIOpen's find-db key without the direction, e.g. 64-14-14-1x1-...
  std::string direction;    // F, B or W (the problem's own direction)
  std::string best_solver;  // empty: no result
  std::optional<double> best_ms;
  std::string best_params;
  std::string other_solver;  // the other side's best, empty when none
  std::optional<double> other_ms;
  std::optional<double> vs_other;    // other_ms / best_ms
  std::optional<double> default_ms;  // the best solver's default params (tunable only)
  std::optional<double> vs_default;  // default_ms / the perf job's tuned time
  double tuning_seconds = 0;         // all of the config's jobs
  int64_t jobs = 0;
  int64_t failed_jobs = 0;
};

struct FailureCount {
  std::string reason;  // a failed job's error (first line), or a candidate's status
  int64_t count = 0;
};

struct Report {
  schema::SessionTarget session;
  std::string label;            // "session 3"
  std::string other_label;      // "session 2", "golden version 4", empty without a comparison
  std::vector<ReportRow> rows;  // by direction, then problem
  std::vector<FailureCount> failed_jobs;        // by count, descending
  std::vector<FailureCount> failed_candidates;  // eval_sample statuses other than Passed
  int64_t tuned = 0;                            // rows with a best result
  int64_t compared = 0;                         // rows with vs_other
  int64_t faster = 0, slower = 0;               // rows with vs_other > 1.02 / < 0.98
  std::optional<double> geomean_vs_other, geomean_vs_default;
  double tuning_seconds = 0;
  int64_t jobs = 0, failed = 0;
};

absl::StatusOr<Report> BuildReport(schema::Database& db, const ReportOptions& options);

}  // namespace tuna::admin
