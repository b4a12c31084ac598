// A gRPC server that serves only gRPC's built-in health service (grpc.health.v1.Health: Check
// and Watch), for a process that serves nothing else: `tuna worker --health ADDR`. Probes
// (grpc_health_probe, Kubernetes gRPC probes, load balancers) ask it whether the worker is
// registered and its coordinator answers (worker.h: Worker::Healthy); the Worker itself knows
// nothing about servers and is wired to this one through WorkerOptions::on_health_change.
//
// No token and no TLS: the service tells SERVING or NOT_SERVING and nothing else, so it may
// listen off loopback (the caller logs that it does).
//
// Threads: SetServing may be called from any thread, also concurrently with Shutdown.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace grpc {
class CallbackGenericService;
class Server;
}  // namespace grpc

namespace tuna::worker {

class HealthServer {
 public:
  // Listens on `listen` ("host:port"; port 0 picks a free one, see port()) and logs the address
  // and port. `services` are the names reported besides "" (the whole server); every one starts
  // NOT_SERVING. InvalidArgument for an empty address, Unavailable when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(const std::string& listen,
                                                            std::vector<std::string> services);
  ~HealthServer();  // Shutdown()

  int port() const { return port_; }
  // SERVING or NOT_SERVING for "" and every service name; Watch callers are told at once.
  // Ignored after Shutdown.
  void SetServing(bool serving);
  // Everything NOT_SERVING (watchers are told), then the server stops within a second.
  void Shutdown();

 private:
  HealthServer() = default;
  std::mutex mu_;
  std::unique_ptr<grpc::CallbackGenericService> other_methods_;  // outlives server_
  std::unique_ptr<grpc::Server> server_;  // guarded by mu_; null once shut down
  std::vector<std::string> services_;     // "" first
  int port_ = 0;
};

}  // namespace tuna::worker
