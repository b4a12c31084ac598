// Shared helpers of the fuzz tests: the valid inputs the mutations start from and the
// "clear error" check every rejection must pass.
#pragma once

#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "catch2/catch.hpp"
#include "tuner_core/db/text_record.h"

namespace tuna::fuzz {

// Lines of hundreds of KiB are fed in; an error message may quote them, but must stay readable.
constexpr size_t kMaxMessage = 4096;

inline std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

inline std::string Slurp(const std::string& path) {
  auto s = db::ReadFileToString(path);
  REQUIRE(s.ok());
  return *s;
}

inline std::vector<std::string> Lines(std::string_view text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    if (nl > at) out.emplace_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

// A rejection: not OK, a non-empty message of bounded length.
inline void RequireClearError(const absl::Status& st) {
  REQUIRE(!st.ok());
  INFO(st.ToString().substr(0, 300));
  REQUIRE(!st.message().empty());
  REQUIRE(st.message().size() <= kMaxMessage);
}

}  // namespace tuna::fuzz
