// How a worker talks to the coordinator (STYLE §5): one interface, two implementations, so the
// supervisor is tested without sockets and `tuna tune` runs without a network hop.
//   MakeGrpcClient       a channel to `tuna coordinator` (token as call metadata, TLS optional)
//   MakeInProcessClient  direct calls on a Coordinator in this process
// Errors are the coordinator's codes (coordinator.h); a transport failure is Unavailable /
// DeadlineExceeded (a call the server cancelled while shutting down arrives as Unavailable),
// which callers retry with backoff: IsTransient says which codes those are.
// Threads: safe for concurrent use.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"

namespace tuna::worker {

// True for errors that a later identical call may not get: the coordinator unreachable, slow,
// restarting or shutting down, a lock conflict, or too busy. Every call is safe to retry on them
// (reports and kernel uploads are idempotent).
bool IsTransient(const absl::Status& st);

class CoordinatorClient {
 public:
  virtual ~CoordinatorClient() = default;
  virtual absl::StatusOr<coordinator::Registered> Register(
      const coordinator::WorkerRegistration& w) = 0;
  virtual absl::StatusOr<std::vector<coordinator::LeasedJob>> Lease(
      const coordinator::LeaseRequest& req) = 0;
  virtual absl::StatusOr<std::vector<coordinator::Lease>> Renew(
      const std::string& worker_id, const std::vector<coordinator::Lease>& leases) = 0;
  virtual absl::Status Report(const coordinator::Report& report) = 0;
  virtual absl::StatusOr<int64_t> Release(const std::string& worker_id,
                                          const std::vector<coordinator::Lease>& leases) = 0;
  virtual absl::StatusOr<std::vector<int64_t>> PutKernels(
      const std::string& worker_id, int64_t job_id, int64_t attempt,
      const std::vector<schema::StoredKernel>& kernels) = 0;
  virtual absl::StatusOr<std::vector<schema::StoredKernel>> FetchKernels(
      const std::string& worker_id, int64_t job_id, int64_t attempt) = 0;
};

struct GrpcClientOptions {
  std::string address;         // "host:port"
  std::string token;           // sent as "authorization: Bearer <token>"; empty: none
  std::string tls_root_pem;    // set: TLS with this CA; empty: plaintext
  absl::Duration call_timeout = absl::Seconds(30);  // non-Lease calls; Lease adds its wait
};

std::unique_ptr<CoordinatorClient> MakeGrpcClient(const GrpcClientOptions& options);
// The Coordinator must outlive the client.
std::unique_ptr<CoordinatorClient> MakeInProcessClient(coordinator::Coordinator& coordinator);

}  // namespace tuna::worker
