// `tuna status --watch`: the workers seen recently, each with the jobs its host leases now.
// Threads: as thread-safe as the Database. Errors: the store's codes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "schema/store/database.h"
#include "schema/store/worker_store.h"

namespace tuna::admin {

// One row of the live view's worker table: a registered device and the jobs its host's workers
// lease right now (lease_owner is "<host>/<random>", see schema::LeaseOwnerHost).
struct WorkerActivity : schema::WorkerSeen {
  std::vector<std::string> current_jobs;  // "job 17 eval_start (ConvDirectNaiveConvFwd)"
};

// Workers seen within `within` (most recent first), with the leases held by their host.
// `session_id` limits the jobs shown (not the workers).
absl::StatusOr<std::vector<WorkerActivity>> ReadWorkerActivity(schema::Database& db,
                                                               std::optional<int64_t> session_id,
                                                               absl::Duration within,
                                                               int max_workers = 50);

}  // namespace tuna::admin
