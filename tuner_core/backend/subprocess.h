// Running the system compiler, and isolating calls that may crash the process.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace tuna::backend {

struct ProcessResult {
  int exit_code = -1;  // 128 + signal when killed by a signal
  std::string output;  // stdout and stderr interleaved
};

// Runs argv[0] (searched in PATH) and waits at most `timeout` (then kills it: DeadlineExceeded).
// Unavailable when the program cannot be started. Thread-safe.
absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout);

// Runs `fn` in a forked child and returns its exit code (128 + signal if it crashed), so a
// library that aborts on bad input (hiprtc on an unknown target) cannot take the caller down.
// The child must not rely on other threads of the parent (only fork-safe work); it is killed
// after `timeout` (DeadlineExceeded).
absl::StatusOr<int> RunInChild(const std::function<int()>& fn, absl::Duration timeout);

}  // namespace tuna::backend
