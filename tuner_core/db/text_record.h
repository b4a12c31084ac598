// The line grammar shared by MIOpen's text databases (find db, text perf db), from MIOpen
// src/include/miopen/db_record.hpp:
//
//   KEY "=" ID ":" VALUES { ";" ID ":" VALUES } "\n"
//
// None of ';', ':', '=' (nor a newline) may occur inside KEY, ID or VALUES. Plus small file helpers
// used by the text formats. Pure functions, thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::db {

// A problem found while reading a text db; reading goes on past it (like MIOpen, which logs
// "Ill-formed record" and skips). `line` is 1-based.
struct ReadWarning {
  size_t line = 0;
  std::string message;
};

struct RawEntry {
  std::string_view id;
  std::string_view values;
};
struct RawRecord {
  std::string_view key;
  std::vector<RawEntry> entries;  // in line order, duplicates not removed
};

// Splits one line (without its '\n'; a trailing '\r' is dropped). Empty lines give nullopt
// silently; ill-formed lines (no '=' after a non-empty key, no well-formed entry) give nullopt
// and a warning; ill-formed entries (empty, no ':', empty id) are skipped with a warning.
// The views point into `line`.
std::optional<RawRecord> ParseRecordLine(std::string_view line, size_t line_no,
                                         std::vector<ReadWarning>& warnings);

// InvalidArgument when `field` cannot be written into a record line (contains ';', ':', '=',
// '\n' or '\r', or is empty). `what` names the field in the message.
absl::Status CheckRecordField(std::string_view what, std::string_view field);

// Whole file into memory. NotFound / Internal (I/O) on failure.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);
// Writes `path + ".tmp"` and renames it over `path`, so readers never see a partial file.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content);

}  // namespace tuna::db
