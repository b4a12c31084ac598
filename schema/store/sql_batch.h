// Placeholder lists for the stores' batched statements (multi-row INSERT, IN lists). Values are
// always bound; only `?`s are generated here. Internal to schema/store.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "schema/store/database.h"
#include "schema/store/rows.h"

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

// Every distinct statement text is prepared once per connection and cached (database.h: 256
// texts, then the cache is cleared), and a list of n placeholders is a new text for every n:
// batches of 1..64 rows would make 64 texts of each batched statement. Lists are therefore padded
// to the next power of two by repeating their last value (or row), which changes nothing where a
// statement takes them as a set: IN lists, CASE arms, INSERT IGNORE / upsert rows of equal values.
inline size_t PaddedCount(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// `params` ends with `rows` rows of `width` values (rows, width >= 1; values before them are left
// alone): appends copies of its last row up to PaddedCount(rows) rows and returns that count.
inline size_t PadRows(Params& params, size_t rows, size_t width) {
  const size_t padded = PaddedCount(rows);
  const size_t last = params.size() - width;
  params.reserve(params.size() + (padded - rows) * width);  // keeps params[last + k] valid
  for (size_t r = rows; r < padded; ++r) {
    for (size_t k = 0; k < width; ++k) params.push_back(params[last + k]);
  }
  return padded;
}

// Rows per multi-row INSERT (a power of two, so padding never exceeds it; at most 9 values a row
// keeps a statement far below MariaDB's 65,535 placeholders).
inline constexpr size_t kRowChunk = 256;

// Multi-row INSERT of `rows` rows of `width` values each (`params` holds them in order), in
// chunks of kRowChunk rows, each padded so that a few statement texts serve every batch:
// `head` VALUES-list `tail`. Only for INSERT IGNORE and upserts, where a repeated row changes
// nothing.
inline absl::Status InsertRows(Connection& c, const char* head, const char* tail,
                               const Params& params, size_t rows, size_t width) {
  for (size_t begin = 0; begin < rows; begin += kRowChunk) {
    const size_t end = std::min(rows, begin + kRowChunk);
    Params p(params.begin() + begin * width, params.begin() + end * width);
    const size_t count = PadRows(p, end - begin, width);
    auto n = c.Execute(absl::StrCat(head, RowPlaceholders(count, width), tail), p);
    if (!n.ok()) return n.status();
  }
  return absl::OkStatus();
}

}  // namespace tuna::schema
