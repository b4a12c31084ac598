// Text handling for migration files: statement splitting and checksums.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tuna::schema {

// Splits a SQL script at top-level `;`. Quotes ('...', "...", `...`, with backslash and doubled
// quote escapes) and comments (`-- `, `#`, `/* */`) are respected; statements consisting only of
// whitespace and comments are dropped. Each statement is returned without its `;` and trimmed.
// DELIMITER (stored procedures) is not supported.
std::vector<std::string> SplitSqlStatements(std::string_view script);

// Lower-case hex SHA-256 of `text` with CRLF normalised to LF (so a checkout with Windows line
// endings does not look like a changed migration).
std::string MigrationChecksum(std::string_view text);

}  // namespace tuna::schema
