// The `session` table: one tuning campaign for one target (DESIGN §1.3, §4).
// Threads: as thread-safe as the Database. Errors: the store's codes (errors.h); Get of an
// unknown id is NotFound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"

namespace tuna::schema {

// A session's target: what the coordinator matches leases against and the exporter names files by.
struct SessionTarget {
  int64_t id = 0;
  std::string arch;     // as stored, possibly with target features ("gfx90a:sramecc+:xnack-")
  int64_t num_cu = 0;
  std::string backend;  // "HIP", "CUDA" or "CPU"
};

struct SessionRecord {
  int64_t id = 0;               // assigned by Create
  std::string arch;             // "gfx90a", "sm_90", "cpu-avx2"
  int64_t num_cu = 0;
  std::string backend;          // "HIP", "CUDA" or "CPU" (the column's ENUM)
  std::string tuner_version;    // cli/version.h VersionLine()
  std::string compiler_versions;
  std::string label;
  std::string created;          // "YYYY-MM-DD hh:mm:ss.ffffff" UTC, set by the database
};

class SessionStore {
 public:
  explicit SessionStore(Database& db) : db_(db) {}

  // Inserts a new session (every init is a new campaign; ids are never reused). InvalidArgument
  // for an empty arch, num_cu < 1 or a backend other than HIP/CUDA/CPU.
  absl::StatusOr<int64_t> Create(const SessionRecord& s);
  absl::StatusOr<SessionRecord> Get(int64_t id);
  // The newest session with this label and target (arch, num_cu, backend), if any: how a
  // re-run of `tuna tune -f` finds the session of the run it resumes.
  absl::StatusOr<std::optional<int64_t>> FindLatest(const std::string& label,
                                                    const std::string& arch, int64_t num_cu,
                                                    const std::string& backend);
  absl::StatusOr<std::vector<SessionRecord>> List();
  // Every session's target, by id.
  absl::StatusOr<std::vector<SessionTarget>> Targets();

 private:
  Database& db_;
};

}  // namespace tuna::schema
