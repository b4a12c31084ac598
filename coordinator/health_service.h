// gRPC's standard health service (grpc.health.v1.Health: Check and Watch, proto/health.proto),
// served from a callback generic service without reading the request: for the coordinator's
// gRPC port (beside the Worker methods, coordinator/unread_refusal.h) and for `tuna worker
// --health` (worker/health_server.h). No token, by design: it tells SERVING or NOT_SERVING and
// nothing else.
//
// Why unread: gRPC 1.51 (Debian's) reads a request whole, whatever its size, once a handler
// asks for it, and applies any size limit only afterwards (a generic reactor reading a 64 MiB
// request with the server's max receive size at 1 KiB: 67,145,772 bytes reached the server,
// then RESOURCE_EXHAUSTED); gRPC's own health service reads every request so. A request that is
// never asked for is never read: only what HTTP/2 flow control lets a new stream send (64 KiB)
// reaches the server. So the service name in the request is not looked at: every name gets the
// status of the whole server (tuna's servers give all their names one status anyway; an unknown
// name is no longer NOT_FOUND).
//
// Threads: SetServing and Shutdown from any thread; CreateReactor on gRPC's callback threads.
// A Watch call lives on (shared with its reactor) until gRPC is done with it, so the service
// may be destroyed once the server's calls have ended.
#pragma once

#include <grpcpp/generic/async_generic_service.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tuna::coordinator {

class HealthWatch;  // one Watch call (health_service.cc)

class HealthService {
 public:
  static constexpr char kCheck[] = "/grpc.health.v1.Health/Check";
  static constexpr char kWatch[] = "/grpc.health.v1.Health/Watch";

  explicit HealthService(bool serving = false) : serving_(serving) {}

  // SERVING or NOT_SERVING from now on; open Watch calls are told. Ignored after Shutdown.
  void SetServing(bool serving);
  // NOT_SERVING for good: open Watch calls are told and then ended (OK); later calls answer
  // NOT_SERVING (a Watch: once, then it ends).
  void Shutdown();
  bool serving() const;

  // For a server's generic service: the reactor of a Check or Watch call (it answers without
  // reading the request), or nullptr when `ctx`'s method is neither.
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx);

 private:
  // The open Watch calls, to tell of a change (outside mu_: a call may end inside gRPC's call).
  std::vector<std::shared_ptr<HealthWatch>> LiveWatches();

  mutable std::mutex mu_;
  bool serving_;                                   // guarded by mu_
  bool shut_down_ = false;                         // guarded by mu_
  uint64_t version_ = 0;                           // guarded by mu_; one step per change
  std::vector<std::weak_ptr<HealthWatch>> watches_;  // guarded by mu_
};

// A generic service for a server that serves nothing but health (`tuna worker --health`):
// Check and Watch from `health`, every other method UNIMPLEMENTED (unread). `health` must
// outlive the service.
std::unique_ptr<grpc::CallbackGenericService> MakeHealthOnlyService(HealthService& health);

}  // namespace tuna::coordinator
