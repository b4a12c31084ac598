// Builds and runs a Solution on a device: the generic invoker.
//
// CompileSolution turns a Solution's KernelBuilds into code objects (no device needed: the
// compile step of a job). An Invoker loads those code objects on a Device once, then Run binds
// the convolution buffers and issues the launches: the only thing inside a timed loop.
#pragma once

#include <map>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/backend/module_cache.h"
#include "tuner_core/solver/solution.h"

namespace tuna::solver {

// What the compiler is given for one kernel build targeting `arch`: its embedded source, the
// whole embedded kernel tree as headers, options, entries and the build's arch (BuildArch).
// NotFound when the source is not embedded. backend::KernelIdentity of this request is the
// build's identity.
absl::StatusOr<backend::CompileRequest> CompileRequestFor(const KernelBuild& build,
                                                          const std::string& arch);

// One code object per Solution::kernels entry, compiled for `arch` by `backend`. Sources come
// from the embedded kernel tree (kernels/sources.h). Errors name the kernel source.
absl::StatusOr<std::vector<backend::CodeObject>> CompileSolution(const backend::Backend& backend,
                                                                 const Solution& solution,
                                                                 const std::string& arch);

// Device buffers of one convolution. The workspace may be null when the solution needs none.
struct ConvBuffers {
  const backend::DeviceBuffer* x = nullptr;
  const backend::DeviceBuffer* w = nullptr;
  const backend::DeviceBuffer* y = nullptr;
  const backend::DeviceBuffer* workspace = nullptr;
};

class Invoker {
 public:
  // Loads `code` (one per solution kernel) on `device`. The device must outlive the invoker.
  // With `modules`, a code object it already holds for this device is not loaded again (the
  // invoker shares the module; backend/module_cache.h).
  static absl::StatusOr<std::unique_ptr<Invoker>> Create(backend::Device& device,
                                                         Solution solution,
                                                         const std::vector<backend::CodeObject>& code,
                                                         backend::ModuleCache* modules = nullptr);

  // Zeroes `zero_first` buffers, then issues every launch. Asynchronous on GPUs.
  // InvalidArgument when a needed buffer is missing or smaller than the workspace.
  absl::Status Run(const ConvBuffers& buffers);

  const Solution& solution() const { return solution_; }

 private:
  Invoker(backend::Device& device, Solution solution) : device_(device), solution_(std::move(solution)) {}
  backend::Device& device_;
  Solution solution_;
  std::vector<std::shared_ptr<backend::Module>> modules_;  // shared with a ModuleCache
  std::vector<std::vector<backend::Kernel>> kernels_;  // [kernel][entry index]
  // Encoded tensor maps by (launch, argument), with the buffer address they were encoded for:
  // re-encoded only when the buffer changes, so timed runs do no host encoding.
  std::map<std::pair<size_t, size_t>, std::pair<uint64_t, backend::TensorMapBytes>> tensor_maps_;
};

}  // namespace tuna::solver
