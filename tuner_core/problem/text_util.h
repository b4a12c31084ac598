// Private to tuner_core (problem, and the error quoting of tuner_core/db): string helpers over
// std::string_view.
//
// Debian's Abseil is built with its own absl::string_view (ABSL_OPTION_USE_STD_STRING_VIEW 0),
// so absl::StrCat/StrSplit/SimpleAtoi do not take std::string_view; these small helpers keep
// the problem code on std::string_view without conversions at every call.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tuna::text {

inline void AppendOne(std::string& s, std::string_view v) { s.append(v); }
inline void AppendOne(std::string& s, const char* v) { s.append(v); }
inline void AppendOne(std::string& s, const std::string& v) { s.append(v); }
inline void AppendOne(std::string& s, char v) { s.push_back(v); }
template <typename T, typename = std::enable_if_t<std::is_integral_v<T>>>
inline void AppendOne(std::string& s, T v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  s.append(buf, r.ptr);
}

template <typename... Args>
void Append(std::string& s, const Args&... args) {
  (AppendOne(s, args), ...);
}

template <typename... Args>
std::string Cat(const Args&... args) {
  std::string s;
  (AppendOne(s, args), ...);
  return s;
}

// Splits on `sep`, keeping empty pieces.
inline std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

inline bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}

// Splits on ASCII whitespace, dropping empty pieces.
inline std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsSpace(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !IsSpace(s[j])) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

inline std::string_view Strip(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Whole-string signed decimal ("-1", "+3", "42"); false on anything else or overflow.
inline bool ParseInt64(std::string_view s, int64_t* v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return false;
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *v);
  return r.ec == std::errc() && r.ptr == end;
}

// Printable, bounded rendering of user text for error messages.
inline std::string Quote(std::string_view s, size_t max = 64) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < max; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\' || c == '\'') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  out.push_back('\'');
  if (s.size() > max) out += "...";
  return out;
}

}  // namespace tuna::text
