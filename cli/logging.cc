#include "cli/logging.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "spdlog/pattern_formatter.h"
#include "spdlog/sinks/basic_file_sink.h"
#include "spdlog/sinks/stdout_color_sinks.h"
#include "spdlog/spdlog.h"

namespace tuna::cli {
namespace {

// %* in the json pattern: the message as the inside of a JSON string (quotes, backslashes and
// control bytes escaped), so compiler errors and status payloads keep every line valid JSON.
class JsonMessageFlag : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    static constexpr char kHex[] = "0123456789abcdef";
    for (char ch : std::string_view(msg.payload.data(), msg.payload.size())) {
      const auto c = static_cast<unsigned char>(ch);
      const char* esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : nullptr;
      if (esc != nullptr) {
        dest.append(esc, esc + 2);
      } else if (c < 0x20 || c == 0x7f) {
        const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        dest.append(u, u + 6);
      } else {
        dest.push_back(ch);
      }
    }
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

std::unique_ptr<spdlog::formatter> Formatter(const std::string& pattern) {
  auto f = std::make_unique<spdlog::pattern_formatter>();
  f->add_flag<JsonMessageFlag>('*').set_pattern(pattern);
  return f;
}

}  // namespace

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
    // One JSON object per line, the message escaped (%*, JsonMessageFlag).
    pattern = R"({"time":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","pid":%P,"thread":%t,"msg":"%*"})";
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
  console->set_formatter(Formatter((format == "text" && tty ? "\x1b[K" : "") + pattern));
  std::vector<spdlog::sink_ptr> sinks{console};
  if (!log_file.empty()) {
    try {
      auto file = std::make_shared<spdlog::sinks::basic_file_sink_mt>(log_file, false);
      file->set_formatter(Formatter(format == "text" ? "[%Y-%m-%d %H:%M:%S.%e] [%l] [pid %P] %v" : pattern));
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
