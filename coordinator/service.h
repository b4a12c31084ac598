// The Worker gRPC service over a Coordinator (proto ↔ domain only). Internal to coordinator/.
#pragma once

#include <memory>
#include <string>

#include "coordinator/coordinator.h"
#include "coordinator/credentials.h"

namespace grpc {
class Service;
}

namespace tuna::coordinator {

// Every call needs a token of `credentials` (none configured: no authentication); compile leases
// and PutKernels need the compile role. The Coordinator and Credentials must outlive the service.
std::unique_ptr<grpc::Service> MakeWorkerService(Coordinator& coordinator,
                                                 const Credentials& credentials);

}  // namespace tuna::coordinator
