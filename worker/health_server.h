// A gRPC server that serves only gRPC's health protocol (grpc.health.v1.Health: Check and
// Watch), for a process that serves nothing else: `tuna worker --health ADDR`. Probes
// (grpc_health_probe, Kubernetes gRPC probes, load balancers) ask it whether the worker is
// registered and its coordinator answers (worker.h: Worker::Healthy); the Worker itself knows
// nothing about servers and is wired to this one through WorkerOptions::on_health_change.
//
// No token and no TLS: the service tells SERVING or NOT_SERVING and nothing else, so it may
// listen off loopback (the caller logs that it does). Requests are never read
// (coordinator/health_service.h): a large one costs the worker only what HTTP/2 lets a new
// stream send (64 KiB), and every service name gets the worker's one status.
//
// Threads: SetServing may be called from any thread, also concurrently with Shutdown.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/health_service.h"

namespace grpc {
class CallbackGenericService;
class Server;
}  // namespace grpc

namespace tuna::worker {

class HealthServer {
 public:
  // Listens on `listen` ("host:port"; port 0 picks a free one, see port()) and logs the address
  // and port; NOT_SERVING until SetServing(true). InvalidArgument for an empty address,
  // Unavailable when it cannot be bound.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(const std::string& listen);
  ~HealthServer();  // Shutdown()

  int port() const { return port_; }
  // SERVING or NOT_SERVING; Watch callers are told at once. Ignored after Shutdown.
  void SetServing(bool serving);
  // NOT_SERVING (Watch callers are told, and their calls end), then the server stops within a
  // second.
  void Shutdown();

 private:
  HealthServer() = default;
  std::mutex mu_;
  coordinator::HealthService health_;                     // outlives the server's calls
  std::unique_ptr<grpc::CallbackGenericService> service_;  // outlives server_
  std::unique_ptr<grpc::Server> server_;  // guarded by mu_; null once shut down
  int port_ = 0;
};

}  // namespace tuna::worker
