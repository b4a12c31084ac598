// Text from input files (driver lines, find-db keys, perf-db params, solver names) echoed to a
// terminal: control bytes would be interpreted by the terminal (colours, cursor moves, title
// changes), so every place of the CLI that prints such text passes it through
// EscapeControlBytes. Pure and thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace tuna::cli {

// Each byte < 0x20 or == 0x7f becomes the four characters `\xHH` (lower-case hex), except '\n',
// which is kept so multi-line messages stay readable. Other bytes (UTF-8 included) are kept.
inline std::string EscapeControlBytes(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto b = static_cast<unsigned char>(ch);
    if ((b < 0x20 && b != '\n') || b == 0x7f) {
      out += "\\x";
      out += kHex[b >> 4];
      out += kHex[b & 0xf];
    } else {
      out += ch;
    }
  }
  return out;
}
// Debian's absl::string_view is not std::string_view (Status::message() returns it).
inline std::string EscapeControlBytes(absl::string_view text) {
  return EscapeControlBytes(std::string_view(text.data(), text.size()));
}
inline std::string EscapeControlBytes(const std::string& text) {
  return EscapeControlBytes(std::string_view(text));
}
inline std::string EscapeControlBytes(const char* text) {
  return EscapeControlBytes(std::string_view(text));
}

// One line of a left-aligned table: cell i padded with spaces to widths[i] (a longer cell is
// not cut); cells past the widths (the last column) are not padded.
inline std::string TableLine(const std::vector<std::string>& cells, const std::vector<int>& widths) {
  std::string out;
  for (size_t i = 0; i < cells.size(); ++i) {
    out += cells[i];
    if (i < widths.size() && static_cast<int>(cells[i].size()) < widths[i]) {
      out.append(widths[i] - cells[i].size(), ' ');
    }
  }
  return out;
}

}  // namespace tuna::cli
