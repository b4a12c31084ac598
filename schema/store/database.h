// A small, thread-safe layer over Connector/C++ (the JDBC-style 1.1 API): a pool of
// connections, prepared statements only, retries, and absl::Status errors (schema/store/errors.h
// lists the codes). No Connector/C++ type or exception crosses this header.
//
//   auto db = Database::Open({.connection = info, .pool_size = 4});
//   auto rows = (*db)->Query("SELECT id, name FROM solver WHERE valid = ?", {int64_t{1}});
//   for (const Row& r : *rows) use(r.Int("id"), r.String("name"));
//   absl::Status st = (*db)->Transaction([&](Connection& c) -> absl::Status {
//     auto n = c.Execute("UPDATE job SET state = ? WHERE id = ?", {"compile_start", id});
//     return n.status();
//   });
//
// Retries (DESIGN §3: deadlocks and lost connections are retried with backoff):
// - Database::Query/Execute and WithConnection re-run their work when a statement fails with a
//   lost connection (Unavailable: the connection is dropped and a new one is opened) or a
//   deadlock / lock wait timeout (Aborted). Transaction re-runs the whole body after a rollback.
//   So bodies must be safe to run more than once: a write whose connection died may or may not
//   have been applied (at-least-once); tuna's writes are made idempotent with unique keys.
// - Only errors that came from the database are retried. A body that returns its own
//   Aborted/Unavailable (e.g. a fenced lease) is returned as is.
// - When the retries are used up the last error is returned with its code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "schema/store/connection_info.h"
#include "schema/store/rows.h"

namespace sql {
class Connection;
class PreparedStatement;
}  // namespace sql

namespace tuna::schema {

struct RetryPolicy {
  int max_attempts = 6;                             // total tries, >= 1
  absl::Duration initial_backoff = absl::Milliseconds(20);
  absl::Duration max_backoff = absl::Seconds(2);    // doubled each try up to this, with jitter
};

struct DatabaseOptions {
  ConnectionInfo connection;
  int pool_size = 4;  // DESIGN §3: a few connections (about the server's cores), never one per worker
  absl::Duration connect_timeout = absl::Seconds(10);
  absl::Duration read_timeout = absl::Seconds(600);  // per network read; bounds a hung server
  absl::Duration acquire_timeout = absl::Seconds(60);  // waiting for a free pooled connection
  RetryPolicy retry;
};

// One database session. Handed to WithConnection/Transaction callbacks and valid only inside
// them; not thread-safe (one thread at a time, as the pool guarantees). Every SQL text is
// prepared once per connection and cached; values are always bound as parameters.
class Connection {
 public:
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // A statement returning rows. Fetches all rows.
  absl::StatusOr<Rows> Query(std::string_view sql, const Params& params = {});
  // A statement returning no rows; yields the affected-row count.
  absl::StatusOr<int64_t> Execute(std::string_view sql, const Params& params = {});
  // Text without parameters that MariaDB cannot prepare or that should not be cached (DDL in
  // migrations, START TRANSACTION, KILL). Never pass values through this.
  absl::Status ExecuteUnprepared(std::string_view sql);
  // LAST_INSERT_ID() of this session.
  absl::StatusOr<int64_t> LastInsertId();

 private:
  friend class Database;
  struct Impl;
  explicit Connection(std::unique_ptr<Impl> impl);
  absl::Status Fail(std::string_view context);  // maps the in-flight exception
  std::unique_ptr<Impl> impl_;
};

// Thread-safe. Owns up to pool_size connections, opened lazily. Destroying the Database while
// callbacks run on other threads is not allowed.
class Database {
 public:
  // Opens one connection to check the server, credentials and database.
  static absl::StatusOr<std::unique_ptr<Database>> Open(DatabaseOptions options);
  ~Database();

  absl::StatusOr<Rows> Query(std::string_view sql, const Params& params = {});
  absl::StatusOr<int64_t> Execute(std::string_view sql, const Params& params = {});

  // Runs fn on one pooled connection in autocommit mode (see retries above).
  absl::Status WithConnection(const std::function<absl::Status(Connection&)>& fn);
  // START TRANSACTION; fn; COMMIT. A non-OK fn or a failed COMMIT rolls back; deadlocks and lost
  // connections re-run fn in a new transaction (see retries above).
  absl::Status Transaction(const std::function<absl::Status(Connection&)>& fn);

  const DatabaseOptions& options() const { return options_; }
  // For tests and metrics: connections currently open (idle + in use).
  int OpenConnections() const;

 private:
  explicit Database(DatabaseOptions options);
  bool CanAcquire() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::unique_ptr<Connection>> Acquire();
  void Release(std::unique_ptr<Connection> conn);
  absl::StatusOr<std::unique_ptr<Connection>> Connect();
  absl::Status Run(bool transaction, const std::function<absl::Status(Connection&)>& fn);

  const DatabaseOptions options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;
};

// Quotes an identifier (database or table name) with backticks for the few statements that
// cannot take it as a parameter (CREATE DATABASE, USE). InvalidArgument for names that are empty,
// longer than 64 bytes, or hold a backtick or NUL.
absl::StatusOr<std::string> QuoteIdentifier(std::string_view name);

}  // namespace tuna::schema
