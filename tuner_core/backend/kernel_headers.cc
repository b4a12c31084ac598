#include "tuner_core/backend/kernel_headers.h"

namespace tuna::kernels {
extern const char kPortabilityHeader[];
extern const char kCpuKernelHeader[];
}  // namespace tuna::kernels

namespace tuna::backend {

std::vector<SourceHeader> StandardKernelHeaders(BackendKind kind) {
  if (kind == BackendKind::kCpu) return {{"cpu/cpu_kernel.h", kernels::kCpuKernelHeader}};
  return {{"common/portability.h", kernels::kPortabilityHeader}};
}

}  // namespace tuna::backend
