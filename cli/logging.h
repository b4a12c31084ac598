// spdlog set-up for the tuna binary: level and text/json format from the global flags.
#pragma once

#include <string>

#include "absl/status/status.h"

namespace tuna::cli {

// Installs the default logger (stderr). InvalidArgument for an unknown level or format.
absl::Status SetUpLogging(const std::string& level, const std::string& format);

}  // namespace tuna::cli
