// The `worker` table (migration 001) and the leases workers hold: registration upserts by the
// coordinator, last-seen updates by its queue sampler, and the reads behind `tuna status --live`.
// Threads: as thread-safe as the Database. Errors: the store's codes (errors.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "schema/store/database.h"

namespace tuna::schema {

// The host part of a lease owner (a worker id is "<host>/<random>", one per registration).
std::string LeaseOwnerHost(const std::string& owner);

// One device of a registering worker host.
struct WorkerDeviceRecord {
  std::string host;
  int64_t device_index = 0;
  std::string arch;
  int64_t num_cu = 0;
  std::string backend;  // the column's ENUM: "HIP", "CUDA" or "CPU"
  std::string version;
};

// A row of `worker` with how long ago it was seen.
struct WorkerSeen {
  std::string host;
  int device_index = 0;
  std::string backend;  // the column's ENUM: "HIP", "CUDA" or "CPU"
  std::string arch;
  int num_cu = 0;
  std::string state;    // the worker table's state
  double seconds_since_seen = 0;
};

// A lease held right now.
struct HeldLease {
  std::string owner;  // job.lease_owner: "<host>/<random>"
  int64_t job_id = 0;
  std::string state;  // compile_start or eval_start
  std::string solver_name;
};

class WorkerStore {
 public:
  explicit WorkerStore(Database& db) : db_(db) {}

  // Inserts the device, or updates it (state idle, last_seen now) when (host, index) exists.
  absl::Status Upsert(const WorkerDeviceRecord& d);
  // last_seen = now for every device of the host.
  absl::Status MarkSeen(const std::string& host);
  // Devices seen within `within`, most recent first, at most `limit`.
  absl::StatusOr<std::vector<WorkerSeen>> SeenWithin(absl::Duration within, int64_t limit);
  // Leases held now (optionally of one session only), by job id, at most `limit`.
  absl::StatusOr<std::vector<HeldLease>> HeldLeases(std::optional<int64_t> session_id,
                                                    int64_t limit);

 private:
  Database& db_;
};

}  // namespace tuna::schema
