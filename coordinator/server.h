// Transport wiring of the coordinator (STYLE §5: RunServer): listen address, token check, TLS,
// health service, reflection. The service itself (service.cc) only translates messages.
//
// Security (DESIGN §9): a non-loopback listen address without a token is refused; the token is
// compared in constant time against the `authorization: Bearer <token>` metadata of every call
// (UNAUTHENTICATED otherwise); TLS is used when both cert and key are given. Secrets are never
// logged.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace tuna::coordinator {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // "host:port"; port 0 picks a free one
  std::string token;                        // empty: no authentication (loopback only)
  std::string tls_cert_pem, tls_key_pem;    // both or neither
  int max_message_bytes = 256 << 20;
};

// True for 127.0.0.0/8, ::1, localhost and unix: addresses.
bool IsLoopbackAddress(const std::string& listen);

class CoordinatorServer {
 public:
  // The Coordinator must outlive the server. InvalidArgument for a non-loopback address
  // without a token or half a TLS pair; Unavailable when the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<CoordinatorServer>> Start(Coordinator& coordinator,
                                                                   const ServerOptions& options);
  ~CoordinatorServer();  // Shutdown()

  int port() const { return port_; }
  std::string address() const;  // "127.0.0.1:<port>" style, for clients
  void Wait();
  // Stops accepting calls and shuts the Coordinator down (which wakes waiting long-polls).
  void Shutdown();

 private:
  CoordinatorServer() = default;
  std::unique_ptr<grpc::Service> service_;
  std::unique_ptr<grpc::Server> server_;
  Coordinator* coordinator_ = nullptr;
  std::string host_;
  int port_ = 0;
};

// Reads a token file (first line, trimmed). InvalidArgument when empty; PermissionDenied when
// the file is readable by group/others (a secret must not be).
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace tuna::coordinator
