// A grpc.health.v1 client for the tests (proto/health.proto): asks a server's health service,
// as grpc_health_probe or a Kubernetes gRPC probe would, or watches it as gRPC's client-side
// health checking does.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "proto/health.grpc.pb.h"

namespace tuna::testing {

// One Check over a fresh plaintext channel: the status name ("SERVING", "NOT_SERVING", ...),
// or the call's error (UNAVAILABLE when nothing listens).
absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        absl::Duration timeout = absl::Seconds(2));

// One Watch call over a fresh plaintext channel. One thread.
class HealthWatch {
 public:
  // The call ends by itself after `timeout`.
  HealthWatch(const std::string& address, const std::string& service,
              absl::Duration timeout = absl::Seconds(30));
  // The next status the server sends ("SERVING", ...); once the stream has ended, OutOfRange
  // when the server ended it with OK, else the call's error.
  absl::StatusOr<std::string> Next();

 private:
  std::unique_ptr<grpc::health::v1::Health::Stub> stub_;
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReader<grpc::health::v1::HealthCheckResponse>> reader_;
  std::optional<absl::Status> ended_;  // once the stream has ended
};

}  // namespace tuna::testing
