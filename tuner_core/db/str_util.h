// Private: string concatenation that takes std::string_view (Debian's absl is built with its own
// absl::string_view, so absl::StrCat rejects std::string_view arguments).
#pragma once

#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/string_view.h"
#include "tuner_core/problem/text_util.h"

namespace tuna::db::internal {

inline void AppendOne(std::string& out, std::string_view s) { out.append(s); }
inline void AppendOne(std::string& out, const char* s) { out.append(s); }
inline void AppendOne(std::string& out, const std::string& s) { out.append(s); }
inline void AppendOne(std::string& out, absl::string_view s) { out.append(s.data(), s.size()); }
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, char> && !std::is_same_v<T, bool>)
inline void AppendOne(std::string& out, T v) {
  out += std::to_string(v);
}

template <class... A>
std::string Cat(const A&... a) {
  std::string s;
  (AppendOne(s, a), ...);
  return s;
}
// Input text quoted for an error message: printable (control and non-ASCII bytes as \xNN)
// and bounded, since a damaged file may hold a line of megabytes.
inline std::string Quoted(std::string_view s) { return text::Quote(s, 200); }

template <class... A>
void Append(std::string* out, const A&... a) {
  (AppendOne(*out, a), ...);
}

}  // namespace tuna::db::internal
