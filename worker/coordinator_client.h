// How a worker talks to a remote coordinator: the worker API (coordinator/api.h) over gRPC, with
// the token as call metadata and TLS optional. The other implementation, direct calls in this
// process, is coordinator/in_process_client.h.
// Errors are the coordinator's codes (coordinator/api.h); a transport failure is Unavailable /
// DeadlineExceeded (a call the server cancelled while shutting down arrives as Unavailable),
// which callers retry with backoff: IsTransient says which codes those are.
// Threads: safe for concurrent use.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/api.h"

namespace tuna::worker {

// True for errors that a later identical call may not get: the coordinator unreachable, slow,
// restarting or shutting down, a lock conflict, or too busy. Every call is safe to retry on them
// (reports and kernel uploads are idempotent).
bool IsTransient(const absl::Status& st);


struct GrpcClientOptions {
  std::string address;         // "host:port"
  std::string token;           // sent as "authorization: Bearer <token>"; empty: none
  std::string tls_root_pem;    // set: TLS with this CA; empty: plaintext
  absl::Duration call_timeout = absl::Seconds(30);  // non-Lease calls; Lease adds its wait
};

std::unique_ptr<coordinator::WorkerApi> MakeGrpcClient(const GrpcClientOptions& options);

}  // namespace tuna::worker
