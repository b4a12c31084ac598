// Placeholder lists for the stores' batched statements (multi-row INSERT, IN lists). Values are
// always bound; only `?`s are generated here. Internal to schema/store.
#pragma once

#include <cstddef>
#include <string>

namespace tuna::schema {

// "?, ?, ?" (n >= 1).
inline std::string ListPlaceholders(size_t n) {
  std::string s;
  s.reserve(n * 3);
  for (size_t k = 0; k < n; ++k) s += k ? ", ?" : "?";
  return s;
}

// "(?, ?), (?, ?)" for rows x cols (both >= 1).
inline std::string RowPlaceholders(size_t rows, size_t cols) {
  const std::string row = "(" + ListPlaceholders(cols) + ")";
  std::string s;
  s.reserve(rows * (row.size() + 2));
  for (size_t k = 0; k < rows; ++k) {
    if (k) s += ", ";
    s += row;
  }
  return s;
}

}  // namespace tuna::schema
