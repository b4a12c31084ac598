// Reading the per-candidate timings of a session (eval_sample) for the learned heuristics
// (`tuna heuristics train|eval`): every candidate an eval step timed, with its config and solver.
//
// Only candidates that passed (compiled, ran, verified against the reference, timed:
// eval_sample.status = 'Passed' with a finite time >= 0) of a still-valid solver are returned;
// the rest stay for audits. A candidate timed in several attempts of the same job appears once
// per attempt: callers reduce (the trainer keeps the fastest).
//
// Rows are read in keyset pages (eval_sample.id order), so a session of millions of samples is
// never one result set. Threads: takes a Database (thread-safe), keeps no state. Errors: the
// store's codes (errors.h).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schema/store/database.h"

namespace tuna::schema {

struct CandidateSample {
  int64_t id = 0;         // eval_sample.id
  int64_t config_id = 0;
  std::string solver;     // solver.name
  std::string params;     // the candidate's perf-db params string
  double time_ms = 0;
};

// Calls `page` with consecutive pages of the session's passed samples; a non-OK return from
// `page` stops the scan and is returned.
absl::Status ScanPassedSamples(Database& db, int64_t session_id, int page_size,
                               const std::function<absl::Status(const std::vector<CandidateSample>&)>& page);

}  // namespace tuna::schema
