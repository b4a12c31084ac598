// A grpc.health.v1 client for the tests (proto/health.proto): asks a server's built-in health
// service, as grpc_health_probe or a Kubernetes gRPC probe would.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tuna::testing {

// One Check over a fresh plaintext channel: the status name ("SERVING", "NOT_SERVING", ...),
// or the call's error (NOT_FOUND for a service name the server does not know, UNAVAILABLE
// when nothing listens).
absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        absl::Duration timeout = absl::Seconds(2));

}  // namespace tuna::testing
