// Helpers of the worker and pipeline tests: load a workload through the admin workflow (import,
// solvers update, session on this host's CPU device, applicability, jobs load), count rows,
// find the `tuna` binary in the runfiles, and spawn / signal / reap child processes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "tuner_core/solver/registry.h"

namespace tuna::testing {

// `lines` MIOpenDriver lines under `tag`; jobs for `solvers` and `kinds` ("perf", "find").
absl::StatusOr<int64_t> LoadCpuWorkload(schema::Database& db, const solver::SolverRegistry& registry,
                                        const std::string& lines, const std::string& tag,
                                        const std::vector<std::string>& solvers,
                                        const std::vector<std::string>& kinds);

int64_t CountRows(schema::Database& db, const std::string& sql);

// The path of a runfile ("cli/tuna"), or "" when not found.
std::string Runfile(const std::string& path);

// fork + exec with stdout/stderr appended to `log`; returns the pid (or -1).
pid_t Spawn(const std::vector<std::string>& argv, const std::string& log);
// waitpid with a deadline; returns the raw status, or -1 when it did not end in time.
int WaitFor(pid_t pid, int seconds);

// Where a test keeps files worth reading after it (worker logs): Bazel's undeclared outputs
// dir, else its temp dir, else /tmp.
std::string TestOutputDir();
// Polls `done` every `every` (100 ms unless said) for up to `seconds`; its last answer.
bool WaitUntil(int seconds, const std::function<bool()>& done,
               std::chrono::milliseconds every = std::chrono::milliseconds(100));

// `n` forward fp32 3x3 problems, batch `batch`, `channels` in and out, H = h0 + i (distinct), W `w`.
std::string ConvDriverLines(int n, int batch, int channels, int h0, int w);
// `n` small forward fp32 problems (distinct H), cheap to tune on a CPU: ConvDriverLines(n, 1, 4, 4, 6).
std::string SmallDriverLines(int n);

}  // namespace tuna::testing
