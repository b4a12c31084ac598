// The hardware a solver plans for (MIOpen's ExecutionContext): backend, arch, compute units
// and the limits that decide applicability and search-space pruning. Pure data: solvers
// never touch a device, so applicability and compile run on any host (`--dry-run --target`).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"

namespace tuna::solver {

struct Target {
  backend::BackendKind backend = backend::BackendKind::kCpu;
  std::string arch;       // "sm_90", "gfx90a", "cpu-x86_64"
  int num_cu = 1;         // SMs / CUs / hardware threads
  int warp_size = 1;      // 32 (NVIDIA), 64 (gfx9), 1 (CPU)
  uint64_t max_shared_bytes_per_block = 0;  // with opt-in where the hardware has one

  // 90 for "sm_90"/"sm_90a", 0 for non-NVIDIA targets.
  int SmVersion() const;
  bool IsGpu() const { return backend != backend::BackendKind::kCpu; }
};

// A Target from an arch string alone (for dry runs and sessions): the backend follows from the
// prefix (sm_ → cuda, gfx → hip, cpu- → cpu), limits from known hardware. InvalidArgument for an
// unknown prefix. num_cu <= 0 picks the arch's typical count (sm_90: 132, gfx90a: 104, ...).
absl::StatusOr<Target> TargetForArch(const std::string& arch, int num_cu = 0);

// The Target of an opened device.
Target TargetForDevice(backend::BackendKind kind, const backend::DeviceInfo& info);

}  // namespace tuna::solver
