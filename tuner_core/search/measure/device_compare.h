// Comparing a candidate's output with the reference on the device itself (GPUs): a reduction
// kernel (kernels/conv/verify_compare.cu) computes the sums of reference/verify.h over the
// device output and a device copy of the reference, and only those few numbers travel to the
// host, so verifying a candidate costs the device microseconds and the host nothing.
//
// The host comparison stays the definition: Create checks the kernel against it on the
// reference itself (must match exactly: no error, no mismatch) and on a poisoned buffer (every
// element NaN: all mismatches), and FinishReport (reference/verify.h) applies the same
// tolerances. The evaluator falls back to the host path when Create fails.
//
// Ownership: the Device must outlive the comparer. Threads: one at a time, on the thread that
// may use the device (the evaluator's watchdog thread).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/verify.h"

namespace tuna::search {

// Compiled comparison kernels by (arch, element type), shared by the evaluators of one
// executor: building one takes the runtime compiler a fraction of a second. Thread-safe.
class CompareKernelCache {
 public:
  // Unimplemented for element types without a device comparison (int8/int32, fp64).
  absl::StatusOr<backend::CodeObject> Get(const backend::Backend& backend, const std::string& arch,
                                          reference::ElementType type);

 private:
  std::mutex mu_;
  std::map<std::string, backend::CodeObject> code_;  // guarded by mu_
};

class DeviceComparer {
 public:
  // Uploads `expected` (the problem's reference output, OutputType layout) and checks the
  // kernel against the host comparison. `poison` is a device buffer of at least the output's
  // size that the check may overwrite (the evaluator's output buffer).
  static absl::StatusOr<std::unique_ptr<DeviceComparer>> Create(
      backend::Device& device, const backend::CodeObject& code, const Problem& problem,
      const std::vector<std::byte>& expected, const reference::Tolerance& tolerance,
      const backend::DeviceBuffer& poison);

  // Compares `got` (the output buffer, after the candidate ran on the same stream) and waits.
  absl::StatusOr<reference::VerifyReport> Compare(const backend::DeviceBuffer& got);

  // Device memory held (the reference's copy and the sums).
  size_t device_bytes() const { return expected_.bytes() + sums_.bytes(); }

 private:
  DeviceComparer(backend::Device& device) : device_(device) {}
  absl::StatusOr<reference::CompareSums> Sums(const backend::DeviceBuffer& got);

  backend::Device& device_;
  std::unique_ptr<backend::Module> module_;
  backend::Kernel kernel_;
  reference::ElementType type_ = reference::ElementType::kFp32;
  TensorDesc desc_;
  int64_t count_ = 0;
  int64_t reduction_length_ = 1;
  reference::Tolerance tolerance_;
  double scale_ = 0;
  int64_t ref_nonfinite_ = 0;
  backend::DeviceBuffer expected_, sums_;
};

}  // namespace tuna::search
