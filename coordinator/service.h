// The Worker gRPC service over a Coordinator (proto ↔ domain only). Internal to coordinator/.
#pragma once

#include <memory>

#include "coordinator/coordinator.h"
#include "coordinator/credentials.h"
#include "coordinator/handler_pool.h"
#include "coordinator/health_service.h"

namespace grpc {
class CallbackGenericService;
}  // namespace grpc

namespace tuna::coordinator {

// The Worker service, every method of it, as the server's generic service (unread_refusal.h):
// every call needs a token of `credentials` (none configured: no authentication), checked
// before its request is read; PutKernels and compile leases need the compile role. Requests
// of every method but Report and PutKernels are limited to 1 MiB (RESOURCE_EXHAUSTED), those two
// to the server's max receive size. Handlers that block run on `pool`. The same generic service
// answers gRPC's health protocol from `health`, without a token and unread. The pool and
// `health` must outlive the server's calls (shut the server down first); the Coordinator and
// Credentials must outlive the pool's tasks (destroy the pool, which joins them, first).
std::unique_ptr<grpc::CallbackGenericService> MakeWorkerService(Coordinator& coordinator,
                                                                const Credentials& credentials,
                                                                HandlerPool& pool,
                                                                HealthService& health);

}  // namespace tuna::coordinator
