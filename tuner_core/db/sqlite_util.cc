#include "tuner_core/db/sqlite_util.h"

#include <cstdio>
#include <filesystem>
#include <set>

#include "tuner_core/db/miopen_sql.h"
#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tuna::db::internal {

absl::Status SqlError(sqlite3* db, std::string_view what) {
  return absl::InternalError(
      internal::Cat(what, ": ", db != nullptr ? sqlite3_errmsg(db) : "out of memory"));
}

absl::Status Exec(sqlite3* db, const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err != nullptr ? err : sqlite3_errmsg(db);
    sqlite3_free(err);
    return absl::InternalError(internal::Cat("sqlite: ", msg, " in: ", sql));
  }
  return absl::OkStatus();
}

absl::StatusOr<Stmt> Prepare(sqlite3* db, std::string_view sql) {
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &s, nullptr) != SQLITE_OK) {
    return SqlError(db, internal::Cat("prepare '", sql, "'"));
  }
  return Stmt(s);
}

absl::StatusOr<SqliteHandle> OpenReadOnly(const std::string& path) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) return absl::NotFoundError(internal::Cat("cannot open ", path, ": ", ec.message()));
  if (size < 512) {
    return absl::InvalidArgumentError(internal::Cat(path, " is smaller than 512 bytes"));
  }
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
  SqliteHandle db(raw);
  if (rc != SQLITE_OK) return SqlError(raw, internal::Cat("open ", path));
  // Touch the schema so a non-SQLite file fails here and not on first use.
  if (absl::Status s = Exec(db.get(), sql::kProbe); !s.ok()) {
    return absl::InvalidArgumentError(internal::Cat(path, " is not a SQLite db: ", s.message()));
  }
  return db;
}

absl::Status CheckColumns(sqlite3* db, std::string_view table,
                          std::span<const char* const> columns) {
  absl::StatusOr<Stmt> st = Prepare(db, sql::TableInfo(table));
  if (!st.ok()) return st.status();
  std::set<std::string> have;
  int rc;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) have.insert(ColumnText(st->get(), 1));
  if (rc != SQLITE_DONE) return SqlError(db, internal::Cat("table_info(", table, ")"));
  std::vector<std::string> missing;
  for (const char* c : columns) {
    if (have.count(c) == 0) missing.emplace_back(c);
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(internal::Cat(
        "table ", table, " lacks column(s) ", absl::StrJoin(missing, ", "), " (not a MIOpen db)"));
  }
  return absl::OkStatus();
}

absl::Status CreateDbFile(const std::string& path,
                          const std::function<absl::Status(sqlite3*)>& fill) {
  const std::string tmp = path + ".tmp";
  std::remove(tmp.c_str());
  std::remove((tmp + "-journal").c_str());
  absl::Status status = [&]() -> absl::Status {
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(tmp.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                             nullptr);
    SqliteHandle db(raw);
    if (rc != SQLITE_OK) return SqlError(raw, internal::Cat("create ", tmp));
    // Must precede the first write: page size is fixed when page 1 is written.
    if (absl::Status s = Exec(db.get(), sql::kNewFilePragmas);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = Exec(db.get(), "BEGIN;"); !s.ok()) return s;
    if (absl::Status s = fill(db.get()); !s.ok()) {
      Exec(db.get(), "ROLLBACK;").IgnoreError();
      return s;
    }
    if (absl::Status s = Exec(db.get(), "COMMIT;"); !s.ok()) return s;
    if (sqlite3_close(db.release()) != SQLITE_OK) {
      return absl::InternalError(internal::Cat("close ", tmp));
    }
    return absl::OkStatus();
  }();
  if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    status = absl::InternalError(internal::Cat("cannot rename ", tmp, " to ", path));
  }
  if (!status.ok()) {
    std::remove(tmp.c_str());
    std::remove((tmp + "-journal").c_str());
  }
  return status;
}

std::string ColumnText(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p != nullptr ? std::string(p, sqlite3_column_bytes(s, i)) : std::string();
}

}  // namespace tuna::db::internal
