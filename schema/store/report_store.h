// What `tuna report` reads about a session (admin/report.h turns it into the report): its
// exportable find results, its jobs with their tuning time and errors, the time of each
// tunable solver's default parameters, and the candidates that failed, by status.
//
// Default parameters: the tuner times a tunable solver's default config first (tuner_core/
// search/tuner.h), so the first eval_sample of a perf job's latest attempt is the default's.
//
// Threads: every function takes a Database (thread-safe) and keeps no state. Errors: NotFound
// for a missing session; the store's codes for SQL errors.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "schema/store/result_store.h"

namespace tuna::schema {

struct ReportResult {
  int64_t config_id = 0;
  std::string solver;
  bool tunable = false;
  double kernel_time = 0;  // ms
  int64_t workspace = 0;
  std::string params;
};
// The session's exportable find results (result_store.h's rules), by config then solver.
absl::StatusOr<std::vector<ReportResult>> ReadReportResults(Database& db, int64_t session_id);
// The same from a golden version's find rows of one target.
absl::StatusOr<std::vector<ReportResult>> ReadGoldenReportResults(Database& db, int64_t golden_v,
                                                                  const SessionTarget& target);

struct ReportJob {
  int64_t config_id = 0;
  std::string solver;
  std::string kind;    // perf | find
  std::string state;   // job.state
  double seconds = 0;  // finished_at - started_at of its last attempt (0 while unfinished)
  std::string error;   // the last error, empty when none
};
absl::StatusOr<std::vector<ReportJob>> ReadReportJobs(Database& db, int64_t session_id);

struct DefaultTime {
  int64_t config_id = 0;
  std::string solver;
  std::optional<double> time;   // ms; nullopt when the default did not pass
  std::string status;           // the sample's status
  std::optional<double> tuned;  // the job's perf_result time (its best params), ms
};
// One per perf job that has samples. Both times come from the same job, so they compare.
absl::StatusOr<std::vector<DefaultTime>> ReadDefaultTimes(Database& db, int64_t session_id);

struct SampleStatusCount {
  std::string status;  // eval_sample.status other than Passed
  int64_t count = 0;
};
absl::StatusOr<std::vector<SampleStatusCount>> CountFailedSamples(Database& db, int64_t session_id);

}  // namespace tuna::schema
