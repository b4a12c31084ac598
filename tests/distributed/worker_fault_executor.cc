// An executor binary for worker tests: `tuna worker --executor` with the search tests' fault
// registry (TestFaultSolver: its default config busy-waits in the kernel launch), so a test can
// hang an executor without putting test solvers into the `tuna` binary.
#include <string>
#include <vector>

#include "spdlog/spdlog.h"
#include "tests/search/test_solvers.h"
#include "worker/executor.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = tuna::worker::ParseExecutorArgs(args);
  if (!parsed.ok()) {
    spdlog::error("fault executor: {}", parsed.status().ToString());
    return 2;
  }
  auto registry = tuna::search::testing::FaultRegistry({tuna::search::testing::kSpin}, 1e9f);
  return tuna::worker::RunExecutor(parsed->fd, parsed->backend, parsed->device, *registry,
                                   parsed->tuning, parsed->kernel_cache_dir, parsed->sharing);
}
