#include "cli/logging.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace tuna::cli {

absl::Status SetUpLogging(const std::string& level, const std::string& format,
                          const std::string& log_file) {
  spdlog::level::level_enum lvl = spdlog::level::from_str(level);
  // from_str maps anything unknown to "off"; only accept "off" when asked for.
  if (lvl == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError("--log-level: unknown level '" + level +
                                      "' (trace, debug, info, warn, error, critical, off)");
  }
  std::string pattern;
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (format == "json") {
    // One JSON object per line; the message is escaped by spdlog's %v only for plain text,
    // so keep messages free of quotes in code that logs structured fields.
    pattern = R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","pid":%P,"thread":%t,"msg":"%v"})";
  } else if (format == "text") {
    pattern = "[%Y-%m-%d %H:%M:%S.%e] [%^%l%$] %v";
  } else {
    return absl::InvalidArgumentError("--log-format: unknown format '" + format +
                                      "' (text, json)");
  }
  auto console = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  // On a terminal a progress bar may sit on the last line, parked with the cursor in column 0
  // (cli/progress.h): each text log line first erases it, so no part of the bar stays behind
  // the message. This holds for the executor children too, which log to the same terminal.
  console->set_pattern((format == "text" && tty ? "\x1b[K" : "") + pattern);
  std::vector<spdlog::sink_ptr> sinks{console};
  if (!log_file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, false);
      file->set_pattern(format == "text" ? "[%Y-%m-%d %H:%M:%S.%e] [%l] [pid %P] %v" : pattern);
      file->set_level(lvl);
      sinks.push_back(file);
    } catch (const spdlog::spdlog_ex& e) {
      return absl::UnavailableError("--log-file: " + log_file + ": " + e.what());
    }
    console->set_level(std::max(lvl, spdlog::level::warn));
  }
  auto logger = std::make_shared<spdlog::logger>("tuna", sinks.begin(), sinks.end());
  logger->set_level(lvl);
  logger->flush_on(lvl);  // a line per write: processes sharing the file never split lines
  spdlog::drop("tuna");
  spdlog::register_logger(logger);
  spdlog::set_default_logger(logger);
  return absl::OkStatus();
}

}  // namespace tuna::cli
