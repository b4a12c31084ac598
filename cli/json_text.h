// JSON text for the subcommands' --json output: string quoting (UTF-8 passes through
// unchanged) and seconds.
#pragma once

#include <cstdio>
#include <string>

namespace tuna::cli {

inline std::string JsonQuote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

// A duration in seconds for --json output ("seconds": 2.345): milliseconds are enough.
inline std::string JsonSeconds(double seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", seconds);
  return buf;
}

}  // namespace tuna::cli
