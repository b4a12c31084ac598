// The Worker gRPC service over a Coordinator (proto ↔ domain only). Internal to coordinator/.
#pragma once

#include <memory>
#include <string>

#include "coordinator/coordinator.h"

namespace grpc {
class Service;
}

namespace tuna::coordinator {

// `token` empty: no authentication. The Coordinator must outlive the service.
std::unique_ptr<grpc::Service> MakeWorkerService(Coordinator& coordinator, std::string token);

}  // namespace tuna::coordinator
