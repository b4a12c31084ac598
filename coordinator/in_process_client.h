// The worker API (api.h) as direct calls on a Coordinator in this process: `tuna tune` and the
// tests run workers without a network hop. Errors and threads: as the Coordinator's.
#pragma once

#include <memory>

#include "coordinator/api.h"
#include "coordinator/coordinator.h"

namespace tuna::coordinator {

// The Coordinator must outlive the client.
std::unique_ptr<WorkerApi> MakeInProcessClient(Coordinator& coordinator);

}  // namespace tuna::coordinator
