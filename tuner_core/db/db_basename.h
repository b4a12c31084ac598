// Database file base names: MIOpen's Handle::GetDbBasename (and MITuna export_db.get_filename).
//
//   num_cu <= 64 ? arch + "_" + decimal(num_cu) : arch + lowercase_hex(num_cu)
//
// e.g. gfx906/60 -> gfx906_60, gfx908/120 -> gfx90878, gfx942/304 -> gfx942130, and (our own
// extension of the rule to NVIDIA) sm_90/132 -> sm_9084. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tuna::db {

std::string DbBasename(std::string_view arch, uint32_t num_cu);

struct DbBasenameParts {
  std::string arch;
  uint32_t num_cu = 0;
  bool operator==(const DbBasenameParts&) const = default;
};

// Inverse of DbBasename where the split is unambiguous:
//  - "<arch>_<decimal>" with the decimal <= 64 (any arch);
//  - "<arch><hex>" with hex > 64, only for arch names whose length is known: "gfx" + 3 chars
//    (gfx8xx/gfx9xx) or 4 chars (gfx1xxx), and "sm_" + 2 digits (3 when starting with '1'),
//    optionally followed by target features "_sramecc", "_nosramecc", "_xnack".
// The result must reproduce `basename` through DbBasename (no leading zeros, lowercase hex),
// else InvalidArgument. File extensions must be stripped by the caller.
absl::StatusOr<DbBasenameParts> ParseDbBasename(std::string_view basename);

}  // namespace tuna::db
