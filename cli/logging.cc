#include "cli/logging.h"

#include <unistd.h>

#include <memory>
#include <string>

#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace tuna::cli {

absl::Status SetUpLogging(const std::string& level, const std::string& format) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  // from_str maps anything unknown to "off"; only accept "off" when asked for.
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError("--log-level: unknown level '" + level +
                                      "' (trace, debug, info, warn, error, critical, off)");
  }
  auto logger = spdlog::stderr_color_mt("tuna");
  if (format == "json") {
    // One JSON object per line; the message is escaped by spdlog's %v only for plain text,
    // so keep messages free of quotes in code that logs structured fields.
    logger->set_pattern(
        R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","pid":%P,"thread":%t,"msg":"%v"})");
  } else if (format == "text") {
    // On a terminal a progress bar may sit on the last line, parked with the cursor in column 0
    // (cli/progress.h): each log line first erases it, so no part of the bar stays behind the
    // message. This holds for the executor children too, which log to the same terminal.
    const std::string erase = isatty(STDERR_FILENO) == 1 ? "\x1b[K" : "";
    logger->set_pattern(erase + "[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v");
  } else {
    spdlog::drop("tuna");
    return absl::InvalidArgumentError("--log-format: unknown format '" + format +
                                      "' (text, json)");
  }
  logger->set_level(lvl);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace tuna::cli
