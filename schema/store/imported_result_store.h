// find_result / perf_result rows that come from existing MIOpen files (`tuna import-db`, like
// MITuna's import_db). Results measured by workers are written by the coordinator, not here.
//
// Conventions for imported rows (MITuna's): a perf-db row has no measurement, so kernel_time
// and workspace are -1; a find-db row has no parameters, so params is '' and alg_lib keeps the
// file's algorithm field. Imported rows are written with verified = FALSE and job_id NULL.
//
// Precedence for an existing (session, config, solver) row:
//   - measured by tuna (verified = TRUE, or job_id set by an eval step): kept as it is, values
//     and verified flag untouched; the file never overrides a measurement;
//   - imported earlier (unverified, no job): the file's values replace it (re-importing the same
//     file is a no-op), and it stays unverified.
// Methods run inside the caller's transaction. Errors: the store's codes (errors.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"

namespace tuna::schema {

struct FindResultRecord {
  int64_t config_id = 0;
  int64_t solver_id = 0;
  double kernel_time = 0;  // ms
  int64_t workspace = 0;   // bytes
  std::string alg_lib;     // e.g. miopenConvolutionFwdAlgoWinograd
};

struct PerfResultRecord {
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::string params;
};

struct UpsertCounts {
  int64_t added = 0;
  int64_t existing = 0;  // matched a stored row (updated only if unverified and different)
};

class ImportedResultStore {
 public:
  // Chunked multi-row INSERT ... ON DUPLICATE KEY UPDATE. Duplicate (config, solver) pairs in
  // one call: the last wins.
  static absl::StatusOr<UpsertCounts> UpsertFind(Connection& c, int64_t session_id,
                                                 const std::vector<FindResultRecord>& rows,
                                                 const ProgressFn& progress = nullptr);
  static absl::StatusOr<UpsertCounts> UpsertPerf(Connection& c, int64_t session_id,
                                                 const std::vector<PerfResultRecord>& rows,
                                                 const ProgressFn& progress = nullptr);
};

}  // namespace tuna::schema
