// Private helpers for the SQLite formats: RAII handles, status conversion, the deterministic
// create-then-rename write protocol and MIOpen's column-name validation.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::db::internal {

struct SqliteCloser {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using SqliteHandle = std::unique_ptr<sqlite3, SqliteCloser>;
using Stmt = std::unique_ptr<sqlite3_stmt, StmtFinalizer>;

absl::Status SqlError(sqlite3* db, std::string_view what);
absl::Status Exec(sqlite3* db, const char* sql);
absl::StatusOr<Stmt> Prepare(sqlite3* db, std::string_view sql);

// Opens an existing file read-only. NotFound when absent; InvalidArgument when smaller than
// 512 bytes (MIOpen treats such a system db as absent) or not SQLite.
absl::StatusOr<SqliteHandle> OpenReadOnly(const std::string& path);

// Like MIOpen: PRAGMA table_info(<table>) must list every name in `columns`; FailedPrecondition
// naming the missing columns otherwise.
absl::Status CheckColumns(sqlite3* db, std::string_view table,
                          std::span<const char* const> columns);

// Creates `path` byte-reproducibly: a fresh `path.tmp` with page size 4096 and a rollback
// (DELETE) journal, `fill` runs inside one transaction, the file is closed and renamed over
// `path`. On failure nothing is left behind and `path` is untouched.
absl::Status CreateDbFile(const std::string& path, const std::function<absl::Status(sqlite3*)>& fill);

// Binds helpers (1-based index); SQLITE_TRANSIENT copies, so the argument may be a temporary.
inline int BindText(sqlite3_stmt* s, int i, std::string_view v) {
  return sqlite3_bind_text(s, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
}
std::string ColumnText(sqlite3_stmt* s, int i);

}  // namespace tuna::db::internal
