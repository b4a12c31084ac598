#include "tuner_core/solver/target.h"

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tuna::solver {

int Target::SmVersion() const {
  if (!absl::StartsWith(arch, "sm_")) return 0;
  int v = 0;
  std::string digits;
  for (char c : arch.substr(3)) {
    if (c < '0' || c > '9') break;
    digits += c;
  }
  return absl::SimpleAtoi(digits, &v) ? v : 0;
}

absl::StatusOr<Target> TargetForArch(const std::string& arch, int num_cu) {
  Target t;
  t.arch = arch;
  if (absl::StartsWith(arch, "sm_")) {
    t.backend = backend::BackendKind::kCuda;
    t.warp_size = 32;
    const int sm = t.SmVersion();
    if (sm == 0) return absl::InvalidArgumentError("unknown NVIDIA arch '" + arch + "'");
    // Opt-in shared memory per block: sm_80 163 KiB, sm_86/89 99 KiB, sm_90 227 KiB.
    t.max_shared_bytes_per_block =
        sm >= 90 ? 232448 : (sm == 80 ? 166912 : (sm >= 86 ? 101376 : 49152));
    t.num_cu = num_cu > 0 ? num_cu : (sm >= 90 ? 132 : 108);
  } else if (absl::StartsWith(arch, "gfx")) {
    t.backend = backend::BackendKind::kHip;
    t.warp_size = absl::StartsWith(arch, "gfx10") || absl::StartsWith(arch, "gfx11") ? 32 : 64;
    t.max_shared_bytes_per_block = 65536;
    t.num_cu = num_cu > 0 ? num_cu
                          : (absl::StartsWith(arch, "gfx90a")  ? 104
                             : absl::StartsWith(arch, "gfx908") ? 120
                             : absl::StartsWith(arch, "gfx942") ? 304
                                                                : 60);
  } else if (absl::StartsWith(arch, "cpu")) {
    t.backend = backend::BackendKind::kCpu;
    t.warp_size = 1;
    t.max_shared_bytes_per_block = 1 << 20;
    t.num_cu = num_cu > 0 ? num_cu : 1;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown target arch '", arch, "' (expected sm_XY, gfxNNN or cpu-...)"));
  }
  return t;
}

Target TargetForDevice(backend::BackendKind kind, const backend::DeviceInfo& info) {
  Target t;
  t.backend = kind;
  t.arch = info.arch;
  t.num_cu = info.compute_units;
  t.warp_size = info.warp_size;
  t.max_shared_bytes_per_block = info.shared_memory_per_block_optin > 0
                                     ? info.shared_memory_per_block_optin
                                     : info.shared_memory_per_block;
  return t;
}

}  // namespace tuna::solver
