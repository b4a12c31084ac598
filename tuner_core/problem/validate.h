// Validation of problems: dimensions positive and bounded, non-empty output, groups
// dividing the channels, tensor sizes computed without overflow and capped.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "tuner_core/problem/problem.h"

namespace tuna {

struct ProblemLimits {
  int64_t max_dim = 1 << 20;                    // any single extent
  int64_t max_tensor_elements = int64_t{1} << 32;  // per tensor (x, w or y)
};

// OK, or InvalidArgument naming the field and value, e.g. "groups 3 does not divide c 64".
absl::Status ValidateProblem(const Problem& p, const ProblemLimits& limits = {});

}  // namespace tuna
