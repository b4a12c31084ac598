// The in-process tuning path as a library call (what `tuna tune` without a database runs):
// open a backend and device (or only a compiler for a dry run) and tune problems one by one.
// Kept apart from the CLI so the distributed pipeline and benchmarks can call it too.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {

struct SessionOptions {
  std::string backend = "cpu";  // cpu | cuda | hip (a dry run takes it from target_arch)
  int device = 0;
  std::string target_arch;      // dry runs: "gfx90a", "sm_90", "cpu-avx2"
  TuneOptions tune;             // tune.dry_run selects the compile-only path
  // Asked before each problem (null = never): true leaves that problem and the rest untuned
  // (their results' error says so), e.g. a benchmark's deadline.
  std::function<bool()> stop;
};

// Called after each problem, in order (index into `problems`).
using ResultCallback = std::function<void(size_t index, const TuneResult& result)>;

// One result per problem, in order; a problem that cannot be tuned (e.g. the reference does not
// support it) gets a result with `error` set instead of stopping the run. Fails as a whole
// only when the backend/device cannot be opened (Unavailable, InvalidArgument for a bad arch or
// backend name).
absl::StatusOr<std::vector<TuneResult>> TuneProblems(const std::vector<Problem>& problems,
                                                     const SessionOptions& options,
                                                     const solver::SolverRegistry& registry,
                                                     const ResultCallback& on_result = nullptr);

}  // namespace tuna::search
