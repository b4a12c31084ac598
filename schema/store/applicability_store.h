// The `solver_applicability` table: for a session's target, whether each solver can run each
// config, with the reason when it cannot (DESIGN §1.4).
// Threads: as thread-safe as the Database. Errors: the store's codes (errors.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/config_store.h"
#include "schema/store/database.h"

namespace tuna::schema {

struct ApplicabilityRecord {
  int64_t config_id = 0;
  int64_t solver_id = 0;
  bool applicable = false;
  std::string reason;  // empty when applicable; cut to 1024 characters when stored
};

struct ApplicabilityCounts {
  int64_t applicable = 0;
  int64_t not_applicable = 0;
};

class ApplicabilityStore {
 public:
  explicit ApplicabilityStore(Database& db) : db_(db) {}

  // Inserts or overwrites the records of `session_id` in chunked multi-row statements, one
  // transaction per chunk (a rerun recomputes and overwrites, so partial progress is harmless
  // and the locks stay short). `progress` is called after each chunk.
  absl::Status Upsert(int64_t session_id, const std::vector<ApplicabilityRecord>& records,
                      const ProgressFn& progress = nullptr);

  // Applicable (config, solver) pairs of the session, by config then solver.
  absl::StatusOr<std::vector<ApplicabilityRecord>> Applicable(int64_t session_id);
  // Counts over the session (all configs, or the configs with `tag` when non-empty).
  absl::StatusOr<ApplicabilityCounts> Count(int64_t session_id, const std::string& tag = "");

 private:
  Database& db_;
};

}  // namespace tuna::schema
