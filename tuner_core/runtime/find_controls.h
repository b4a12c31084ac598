// The runtime's configuration: MIOpen's environment controls (MIOPEN_FIND_MODE,
// MIOPEN_FIND_ENFORCE, db and cache directories, command logging), parsed ONCE into a plain
// RuntimeConfig value that is passed to Handle explicitly. Nothing here keeps global state:
// FromEnvironment reads the process environment when called, and tests build configs directly
// or through FromEnvironmentLookup with their own variable table.
//
// Semantics follow MIOpen (research/MIOPEN_DB_FORMATS.md §4, §5.1, §5.2) with one deliberate
// difference: MIOPEN_FIND_MODE=4 (MIOpen's reserved "DeprecatedFastHybrid", silently NORMAL)
// is rejected with InvalidArgument, as the runtime issue asks.
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tuna::runtime {

// Values are MIOpen's numbers.
enum class FindMode { kNormal = 1, kFast = 2, kHybrid = 3, kDynamicHybrid = 5 };
enum class FindEnforce { kNone = 1, kDbUpdate = 2, kSearch = 3, kSearchDbUpdate = 4, kDbClean = 5 };

// Case-insensitive names (NORMAL, FAST, HYBRID, DYNAMIC_HYBRID) or numbers 1, 2, 3, 5.
// InvalidArgument for anything else; 4 gets its own message (reserved, not supported).
absl::StatusOr<FindMode> ParseFindMode(std::string_view text);
// Case-insensitive names (NONE, DB_UPDATE, SEARCH, SEARCH_DB_UPDATE, DB_CLEAN; CLEAN too) or
// numbers 1-5. InvalidArgument otherwise (MIOpen only logs and uses the default; a typo in a
// tuning run is better caught).
absl::StatusOr<FindEnforce> ParseFindEnforce(std::string_view text);
std::string_view FindModeName(FindMode mode);        // "NORMAL", ..., "DYNAMIC_HYBRID"
std::string_view FindEnforceName(FindEnforce value);  // "NONE", ..., "DB_CLEAN"

// Any enforce value but NONE makes Find behave as NORMAL (MIOpen's FindMode::IsEnabled).
FindMode EffectiveFindMode(FindMode mode, FindEnforce enforce);

struct RuntimeConfig {
  FindMode find_mode = FindMode::kDynamicHybrid;  // MIOpen's build default
  FindEnforce find_enforce = FindEnforce::kNone;
  // Empty disables the user dbs (MIOpen: an empty MIOPEN_USER_DB_PATH disables them).
  std::string user_db_dir;
  // Empty: no system dbs.
  std::string system_db_dir;
  // Kernel cache directory (code objects); empty or disable_kernel_cache: no on-disk cache.
  std::string kernel_cache_dir;
  bool disable_kernel_cache = false;  // MIOPEN_DISABLE_CACHE
  bool logging_cmd = false;           // MIOPEN_ENABLE_LOGGING_CMD
  bool disable_find_db = false;       // MIOPEN_DEBUG_DISABLE_FIND_DB
  bool disable_fallback = false;      // MIOPEN_DEBUG_CONV_IMMED_FALLBACK=0
  // MIOPEN_DEVICE_CU: overrides the compute-unit count in db file names (0 = the device's).
  int device_cu = 0;
  // Configs tried per tunable solver when searching (MIOPEN_DEBUG_TUNING_ITERATIONS_MAX);
  // 0 = the whole valid space.
  uint64_t search_budget = 0;
  // Backend to open (TUNA_BACKEND: cpu, cuda, hip); empty = the best usable one.
  std::string backend;
};

// getenv-like: nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// Reads, with defaults:
//   MIOPEN_FIND_MODE (DYNAMIC_HYBRID), MIOPEN_FIND_ENFORCE (NONE),
//   MIOPEN_USER_DB_PATH ("~/.config/miopen"; "~" and "$HOME" expanded; set-but-empty disables),
//   MIOPEN_SYSTEM_DB_PATH (unset: no system db; tuna has no install prefix to derive it from),
//   MIOPEN_CUSTOM_CACHE_DIR ("~/.cache/tuna/kernels"), MIOPEN_DISABLE_CACHE,
//   MIOPEN_ENABLE_LOGGING_CMD, MIOPEN_DEBUG_DISABLE_FIND_DB, MIOPEN_DEBUG_CONV_IMMED_FALLBACK,
//   MIOPEN_DEVICE_CU, MIOPEN_DEBUG_TUNING_ITERATIONS_MAX, TUNA_BACKEND.
// Booleans accept 1/0, on/off, yes/no, true/false (case-insensitive).
// InvalidArgument naming the variable for a bad value (FIND_MODE=4 included).
absl::StatusOr<RuntimeConfig> FromEnvironmentLookup(const EnvLookup& lookup);
// FromEnvironmentLookup over the process environment (std::getenv). Call once at start-up.
absl::StatusOr<RuntimeConfig> FromEnvironment();

// "~/x" and "$HOME/x" with HOME from `lookup` (HOME unset, empty or "/" → the temp dir, as
// MIOpen does).
std::string ExpandHome(std::string_view path, const EnvLookup& lookup);

}  // namespace tuna::runtime
