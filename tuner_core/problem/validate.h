// Validation of problems: dimensions positive and bounded, non-empty output, groups
// dividing the channels, pad_mode normalised (problem.h), tensor sizes computed without
// overflow and capped. A filter larger than the padded input is valid (MIOpen clamps the
// output to 1, problem.h).
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "tuner_core/problem/problem.h"

namespace tuna {

struct ProblemLimits {
  int64_t max_dim = 1 << 20;                    // any single extent
  // Per tensor (x, w or y). Far above any device memory: real MIOpen dbs hold problems of more
  // than 2^32 elements (batch 1024 at 111x111); whether one fits a device is decided when it is
  // evaluated, not when it is parsed.
  int64_t max_tensor_elements = int64_t{1} << 48;
};

// OK, or InvalidArgument naming the field and value, e.g. "groups 3 does not divide c 64".
absl::Status ValidateProblem(const Problem& p, const ProblemLimits& limits = {});

}  // namespace tuna
