// Transport wiring of the coordinator (STYLE §5: RunServer): listen address, token check, TLS,
// health service, reflection. The service itself (service.cc) only translates messages.
//
// Security (DESIGN §9, docs/OPERATIONS.md "Trust model"): a non-loopback listen address needs a
// token and TLS (plaintext only with insecure_plaintext, logged as a warning); the tokens
// (credentials.h: one per role) are compared in constant time against the
// `authorization: Bearer <token>` metadata of every call (UNAUTHENTICATED otherwise). Every
// method of the Worker service checks the token (and PutKernels its role) before its request is
// read, so a large unauthenticated request is refused unread (unread_refusal.h); then every
// method but Report and PutKernels takes at most 1 MiB, and no request may exceed
// max_message_bytes (RESOURCE_EXHAUSTED; such requests of a token holder are read, then
// refused). gRPC's health protocol (grpc.health.v1) is answered without a token and without
// reading its requests (health_service.h): SERVING while the server runs, NOT_SERVING once it
// shuts down. Token files are re-read every token_reload: a rotated token refuses
// the old one's holders from then on, and the leases they held are kept and, when they expire,
// requeued without a retry charged (a grace period begins, as after a restart). Server
// reflection only when asked for. Secrets are never logged.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "coordinator/coordinator.h"
#include "coordinator/credentials.h"
#include "coordinator/handler_pool.h"
#include "coordinator/health_service.h"

namespace grpc {
class CallbackGenericService;
class Server;
}  // namespace grpc

namespace tuna::coordinator {

struct ServerOptions {
  std::string listen = "127.0.0.1:50051";  // "host:port"; port 0 picks a free one
  // The compile role's and the eval role's tokens, fixed (tests) or from files (re-read every
  // token_reload); a file wins over a fixed token. All empty: no authentication (loopback only).
  std::string token, eval_token;
  std::string token_file, eval_token_file;
  absl::Duration token_reload = absl::Seconds(1);
  std::string tls_cert_pem, tls_key_pem;  // both or neither
  bool insecure_plaintext = false;        // allow a non-loopback listener without TLS
  bool reflection = false;                // serve grpc.reflection (unauthenticated)
  // Larger requests are refused (a token holder's after gRPC has read them). Workers send
  // kernels in pieces well below it.
  int max_message_bytes = 32 << 20;
};

// True for 127.0.0.0/8, ::1, localhost and unix: addresses.
bool IsLoopbackAddress(const std::string& listen);

class CoordinatorServer {
 public:
  // The Coordinator must outlive the server. InvalidArgument for a non-loopback address
  // without a token, or without TLS unless insecure_plaintext, or half a TLS pair; the token
  // files' errors; Unavailable when the port cannot be bound.
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
  // Waits `d`; true (at once) when the server is stopping.
  bool SleepUnlessStopping(absl::Duration d);
  void ReloadLoop(absl::Duration every);
  // Destroyed in reverse: the server (calls end), the service, the health state, the pool (its
  // tasks end), the credentials the tasks use.
  std::unique_ptr<Credentials> credentials_;
  std::unique_ptr<HandlerPool> pool_;
  std::unique_ptr<HealthService> health_;
  std::unique_ptr<grpc::CallbackGenericService> service_;
  std::unique_ptr<grpc::Server> server_;
  Coordinator* coordinator_ = nullptr;
  std::string host_;
  int port_ = 0;
  absl::Mutex reload_mu_;
  bool stopping_ ABSL_GUARDED_BY(reload_mu_) = false;
  std::thread reloader_;
};

// Reads a token file (first line, trimmed). InvalidArgument when empty; PermissionDenied when
// the file is readable by group/others (a secret must not be).
absl::StatusOr<std::string> ReadTokenFile(const std::string& path);

}  // namespace tuna::coordinator
