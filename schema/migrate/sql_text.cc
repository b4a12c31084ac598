#include "schema/migrate/sql_text.h"

#include <cctype>

#include "tuner_core/hash/sha256.h"

namespace tuna::schema {
namespace {

bool OnlyCommentsAndSpace(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (c == '#' || (c == '-' && i + 1 < s.size() && s[i + 1] == '-')) {
      while (i < s.size() && s[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      if (i + 2 < s.size() && s[i + 2] == '!') return false;  // executable comment
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? s.size() : end + 2;
    } else {
      return false;
    }
  }
  return true;
}

// Trims whitespace and drops leading comments, so a statement starts with its keyword (error
// messages quote the beginning of the statement).
std::string Trim(std::string_view s) {
  size_t b = 0, e = s.size();
  for (;;) {
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    if (b < e && (s[b] == '#' || (s[b] == '-' && b + 1 < e && s[b + 1] == '-'))) {
      while (b < e && s[b] != '\n') ++b;
    } else if (b + 2 < e && s[b] == '/' && s[b + 1] == '*' && s[b + 2] != '!') {
      size_t end = s.find("*/", b + 2);
      b = end == std::string_view::npos ? e : end + 2;
    } else {
      break;
    }
  }
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

}  // namespace

std::vector<std::string> SplitSqlStatements(std::string_view script) {
  std::vector<std::string> out;
  size_t start = 0;
  size_t i = 0;
  auto flush = [&](size_t end) {
    std::string_view stmt = script.substr(start, end - start);
    if (!OnlyCommentsAndSpace(stmt)) out.push_back(Trim(stmt));
  };
  while (i < script.size()) {
    char c = script[i];
    if (c == '\'' || c == '"' || c == '`') {
      ++i;
      while (i < script.size()) {
        if (script[i] == '\\' && c != '`') {
          i += 2;
        } else if (script[i] == c) {
          if (i + 1 < script.size() && script[i + 1] == c) {
            i += 2;  // doubled quote
          } else {
            ++i;
            break;
          }
        } else {
          ++i;
        }
      }
    } else if (c == '#' || (c == '-' && i + 2 < script.size() && script[i + 1] == '-' &&
                            std::isspace(static_cast<unsigned char>(script[i + 2])))) {
      while (i < script.size() && script[i] != '\n') ++i;
    } else if (c == '/' && i + 1 < script.size() && script[i + 1] == '*') {
      size_t end = script.find("*/", i + 2);
      i = end == std::string_view::npos ? script.size() : end + 2;
    } else if (c == ';') {
      flush(i);
      start = ++i;
    } else {
      ++i;
    }
  }
  flush(std::min(i, script.size()));
  return out;
}

std::string MigrationChecksum(std::string_view text) {
  std::string normalised;
  normalised.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
    normalised.push_back(text[i]);
  }
  return hash::Sha256Hex(normalised);
}

}  // namespace tuna::schema
