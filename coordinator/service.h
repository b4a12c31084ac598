// The Worker gRPC service over a Coordinator (proto ↔ domain only). Internal to coordinator/.
#pragma once

#include <memory>
#include <string>

#include "coordinator/coordinator.h"
#include "coordinator/credentials.h"

namespace grpc {
class CallbackGenericService;
class Service;
}  // namespace grpc

namespace tuna::coordinator {

// The Worker service as one server serves it (register both): every call needs a token of
// `credentials` (none configured: no authentication); compile leases and PutKernels need the
// compile role. `sync` serves the small methods (their requests are read, then checked);
// `unread` serves Report and PutKernels, whose token is checked before their requests are read
// (unread_refusal.h). The Coordinator and Credentials must outlive both; `unread` uses `sync`.
struct WorkerServices {
  std::unique_ptr<grpc::Service> sync;
  std::unique_ptr<grpc::CallbackGenericService> unread;
};
WorkerServices MakeWorkerServices(Coordinator& coordinator, const Credentials& credentials);

}  // namespace tuna::coordinator
