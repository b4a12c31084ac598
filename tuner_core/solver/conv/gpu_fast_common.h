// Helpers of tuna's fast CUDA solvers (gpu_fast_tc.cc, gpu_fast_simt*.cc, gpu_hopper_fwd.cc): the
// checks they share (CUDA sm_80+, dense 2D tensors, 32-bit indices). Pure functions, thread-safe.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/target.h"

namespace tuna::solver::gpu {

// OK for a 2D, ungrouped (unless rules.groups), undilated-or-dilated convolution of `type` in
// rules.direction whose x, w and y are all `layout` (NCHW or NHWC) with dense strides, on a CUDA
// target of rules.min_sm or newer (the kernels use cp.async / mma.sync inline PTX: HIP targets
// are not applicable), with every index the kernels form below 2^31. Else NotApplicable naming
// `solver` and the reason.
struct FastConvRules {
  int min_sm = 80;      // the oldest NVIDIA arch the kernel builds for
  bool groups = false;  // grouped convolutions allowed (the kernel indexes by group)
  Direction direction = Direction::kForward;
};
absl::Status CheckFastConv(std::string_view solver, const Target& target, const Problem& problem,
                           DataType type_a, DataType type_b, Layout layout, FastConvRules rules = {});

// True when `desc` has the dense strides of `layout` for its dims.
bool IsDense(const TensorDesc& desc, Layout layout);

}  // namespace tuna::solver::gpu
