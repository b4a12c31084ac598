// spdlog set-up for the tuna binary: level and text/json format from the global flags.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace tuna::cli {

// Installs the default logger: stderr, or with `log_file` the file (appended; several
// processes may share it) at `level` and stderr for warnings and errors only. May be called
// again to change that. InvalidArgument for an unknown level or format, Unavailable when the
// file cannot be opened.
absl::Status SetUpLogging(const std::string& level, const std::string& format,
                          const std::string& log_file = "");

}  // namespace tuna::cli
