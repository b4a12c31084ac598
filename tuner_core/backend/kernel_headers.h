// The standard headers every kernel source may #include, embedded in the binary.
#pragma once

#include <vector>

#include "tuner_core/backend/backend.h"

namespace tuna::backend {

// GPU backends: "common/portability.h". CPU backend: "cpu/cpu_kernel.h".
std::vector<SourceHeader> StandardKernelHeaders(BackendKind kind);

}  // namespace tuna::backend
