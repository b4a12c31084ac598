#include "schema/store/database.h"

#include <cppconn/datatype.h>
#include <cppconn/exception.h>
#include <cppconn/parameter_metadata.h>
#include <cppconn/prepared_statement.h>
#include <cppconn/resultset.h>
#include <cppconn/resultset_metadata.h>
#include <cppconn/statement.h>
#include <mysql_connection.h>
#include <mysql_driver.h>

#include <optional>
#include <random>
#include <unordered_map>

#include "absl/strings/str_cat.h"
#include "schema/store/errors.h"
#include "spdlog/spdlog.h"

namespace tuna::schema {
namespace {

// Debian's abseil has its own string_view type, distinct from std::string_view.
absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Statement text in error messages: enough to recognise it, never a value (values are bound).
std::string Abbrev(std::string_view sql) {
  std::string s(sql.substr(0, 160));
  for (char& c : s) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  if (sql.size() > 160) s += "...";
  return s;
}

enum class ColumnKind { kInt, kDouble, kString };

ColumnKind KindOf(int sql_type) {
  switch (sql_type) {
    case sql::DataType::BIT:
    case sql::DataType::TINYINT:
    case sql::DataType::SMALLINT:
    case sql::DataType::MEDIUMINT:
    case sql::DataType::INTEGER:
    case sql::DataType::BIGINT:
    case sql::DataType::YEAR:
      return ColumnKind::kInt;
    case sql::DataType::REAL:
    case sql::DataType::DOUBLE:
      return ColumnKind::kDouble;
    default:
      return ColumnKind::kString;
  }
}

// Connector/C++ keeps a process-wide driver object whose creation (and the C client library's
// initialisation inside the first connect) is not thread-safe; connecting is rare, so connects are
// serialised. This is the only process-wide state of the store.
absl::Mutex& ConnectMutex() {
  static absl::Mutex mu(absl::kConstInit);
  return mu;
}

int Seconds(absl::Duration d) {
  int64_t s = absl::ToInt64Seconds(d);
  return s < 1 ? 1 : static_cast<int>(std::min<int64_t>(s, 1 << 30));
}

}  // namespace

struct Connection::Impl {
  std::unique_ptr<sql::Connection> conn;
  std::unordered_map<std::string, std::unique_ptr<sql::PreparedStatement>> statements;
  bool broken = false;     // the session is unusable; the pool drops it
  bool retryable = false;  // the last failure was a lost connection / deadlock from the server
  absl::Time last_used = absl::Now();

  ~Impl() {
    statements.clear();  // statements before their connection
    conn.reset();
  }

  sql::PreparedStatement* Prepare(std::string_view sql) {
    std::string key(sql);
    auto it = statements.find(key);
    if (it != statements.end()) return it->second.get();
    if (statements.size() >= 256) statements.clear();
    std::unique_ptr<sql::PreparedStatement> ps(conn->prepareStatement(key));
    return statements.emplace(std::move(key), std::move(ps)).first->second.get();
  }
};

Connection::Connection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Connection::~Connection() = default;

// Called from inside a catch block: rethrows the in-flight exception to classify it.
absl::Status Connection::Fail(std::string_view context) {
  try {
    throw;
  } catch (const sql::SQLException& e) {
    const int code = e.getErrorCode();
    const std::string state = e.getSQLState();
    absl::Status st = StatusFromSqlError(code, state, e.what(), context);
    if (IsConnectionError(code, state, e.what())) {
      impl_->broken = true;
      impl_->retryable = true;
    } else if (IsTransientLockError(code)) {
      impl_->retryable = true;
    }
    return st;
  } catch (const std::exception& e) {
    // Connector/C++ throws plain std exceptions for misuse (bad index, ...); the session state
    // is unknown afterwards, so do not reuse it.
    impl_->broken = true;
    return absl::InternalError(absl::StrCat(AV(context), ": ", e.what()));
  }
}

namespace {

absl::Status Bind(sql::PreparedStatement* ps, const Params& params, std::string_view sql) {
  const int expected = ps->getParameterMetaData()->getParameterCount();
  if (expected != static_cast<int>(params.size())) {
    return absl::InvalidArgumentError(absl::StrCat("statement has ", expected, " parameters, ",
                                                   params.size(), " given: ", Abbrev(sql)));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const unsigned idx = static_cast<unsigned>(i + 1);
    const Value& v = params[i];
    if (auto* p = std::get_if<int64_t>(&v)) {
      ps->setInt64(idx, *p);
    } else if (auto* p = std::get_if<double>(&v)) {
      ps->setDouble(idx, *p);
    } else if (auto* p = std::get_if<std::string>(&v)) {
      ps->setString(idx, sql::SQLString(*p));
    } else {
      ps->setNull(idx, sql::DataType::SQLNULL);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Rows> Connection::Query(std::string_view sql, const Params& params) {
  impl_->last_used = absl::Now();
  try {
    sql::PreparedStatement* ps = impl_->Prepare(sql);
    if (auto st = Bind(ps, params, sql); !st.ok()) return st;
    std::unique_ptr<sql::ResultSet> rs(ps->executeQuery());
    sql::ResultSetMetaData* md = rs->getMetaData();
    const unsigned n = md->getColumnCount();
    std::vector<std::string> names;
    std::vector<ColumnKind> kinds;
    for (unsigned i = 1; i <= n; ++i) {
      names.push_back(md->getColumnLabel(i).asStdString());
      kinds.push_back(KindOf(md->getColumnType(i)));
    }
    Rows rows(std::move(names));
    while (rs->next()) {
      std::vector<Value> values;
      values.reserve(n);
      for (unsigned i = 1; i <= n; ++i) {
        if (rs->isNull(i)) {
          values.emplace_back(nullptr);
          continue;
        }
        switch (kinds[i - 1]) {
          case ColumnKind::kInt:
            values.emplace_back(static_cast<int64_t>(rs->getInt64(i)));
            break;
          case ColumnKind::kDouble:
            values.emplace_back(static_cast<double>(rs->getDouble(i)));
            break;
          case ColumnKind::kString:
            values.emplace_back(rs->getString(i).asStdString());
            break;
        }
      }
      rows.Add(std::move(values));
    }
    return rows;
  } catch (...) {
    return Fail(Abbrev(sql));
  }
}

absl::StatusOr<int64_t> Connection::Execute(std::string_view sql, const Params& params) {
  impl_->last_used = absl::Now();
  try {
    sql::PreparedStatement* ps = impl_->Prepare(sql);
    if (auto st = Bind(ps, params, sql); !st.ok()) return st;
    return static_cast<int64_t>(ps->executeUpdate());
  } catch (...) {
    return Fail(Abbrev(sql));
  }
}

absl::Status Connection::ExecuteUnprepared(std::string_view sql) {
  impl_->last_used = absl::Now();
  try {
    std::unique_ptr<sql::Statement> stmt(impl_->conn->createStatement());
    stmt->execute(std::string(sql));
    // Drain result sets a statement may produce so the session stays usable.
    do {
      std::unique_ptr<sql::ResultSet> rs(stmt->getResultSet());
    } while (stmt->getMoreResults());
    return absl::OkStatus();
  } catch (...) {
    return Fail(Abbrev(sql));
  }
}

absl::StatusOr<int64_t> Connection::LastInsertId() {
  auto rows = Query("SELECT LAST_INSERT_ID()");
  if (!rows.ok()) return rows.status();
  return (*rows)[0].Int(0);
}

Database::Database(DatabaseOptions options) : options_(std::move(options)) {}

Database::~Database() {
  absl::MutexLock lock(&mu_);
  idle_.clear();
}

absl::StatusOr<std::unique_ptr<Database>> Database::Open(DatabaseOptions options) {
  if (options.pool_size < 1) return absl::InvalidArgumentError("pool_size must be >= 1");
  if (options.retry.max_attempts < 1) options.retry.max_attempts = 1;
  std::unique_ptr<Database> db(new Database(std::move(options)));
  auto conn = db->Acquire();
  if (!conn.ok()) return conn.status();
  db->Release(std::move(*conn));
  spdlog::debug("connected to {}", db->options_.connection.Redacted());
  return db;
}

absl::StatusOr<std::unique_ptr<Connection>> Database::Connect() {
  const ConnectionInfo& info = options_.connection;
  auto impl = std::make_unique<Connection::Impl>();
  std::unique_ptr<Connection> conn(new Connection(std::move(impl)));
  try {
    sql::ConnectOptionsMap opts;
    opts["hostName"] = sql::SQLString(info.ConnectorHost());
    opts["userName"] = sql::SQLString(info.user);
    opts["password"] = sql::SQLString(info.password);
    if (!info.database.empty()) opts["schema"] = sql::SQLString(info.database);
    opts["OPT_CONNECT_TIMEOUT"] = Seconds(options_.connect_timeout);
    opts["OPT_READ_TIMEOUT"] = Seconds(options_.read_timeout);
    opts["OPT_WRITE_TIMEOUT"] = Seconds(options_.read_timeout);
    opts["OPT_RECONNECT"] = false;  // a silent reconnect would lose session state; we reconnect
    opts["OPT_CHARSET_NAME"] = sql::SQLString("utf8mb4");
    {
      absl::MutexLock lock(&ConnectMutex());
      sql::mysql::MySQL_Driver* driver = sql::mysql::get_mysql_driver_instance();
      conn->impl_->conn.reset(driver->connect(opts));
    }
    // Same semantics on every server: strict data checks, UTC timestamps.
    std::unique_ptr<sql::Statement> stmt(conn->impl_->conn->createStatement());
    stmt->execute(
        "SET SESSION sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,"
        "NO_ZERO_DATE,NO_ZERO_IN_DATE,NO_ENGINE_SUBSTITUTION', time_zone = '+00:00'");
  } catch (...) {
    return conn->Fail(absl::StrCat("connecting to ", info.Redacted()));
  }
  return conn;
}

bool Database::CanAcquire() const { return !idle_.empty() || open_ < options_.pool_size; }

absl::StatusOr<std::unique_ptr<Connection>> Database::Acquire() {
  std::unique_ptr<Connection> conn;
  {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(this, &Database::CanAcquire),
                              options_.acquire_timeout)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("all ", options_.pool_size, " connections to ",
                       options_.connection.Redacted(), " stayed busy for ",
                       absl::FormatDuration(options_.acquire_timeout)));
    }
    if (!idle_.empty()) {
      conn = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++open_;
    }
  }
  if (conn) {
    // A connection idle for a while may have been closed by the server (restart, wait_timeout,
    // KILL); a ping is cheap next to a failed statement.
    if (absl::Now() - conn->impl_->last_used < absl::Seconds(5)) return conn;
    bool valid = false;
    try {
      valid = conn->impl_->conn->isValid();
    } catch (...) {
      valid = false;
    }
    if (valid) {
      conn->impl_->last_used = absl::Now();
      return conn;
    }
    conn.reset();  // keep the slot (open_ unchanged) and reconnect below
  }
  auto fresh = Connect();
  if (!fresh.ok()) {
    absl::MutexLock lock(&mu_);
    --open_;
    return fresh.status();
  }
  return std::move(*fresh);
}

void Database::Release(std::unique_ptr<Connection> conn) {
  absl::MutexLock lock(&mu_);
  if (conn->impl_->broken) {
    --open_;
    conn.reset();
    return;
  }
  conn->impl_->retryable = false;
  idle_.push_back(std::move(conn));
}

int Database::OpenConnections() const {
  absl::MutexLock lock(&mu_);
  return open_;
}

absl::Status Database::Run(bool transaction, const std::function<absl::Status(Connection&)>& fn) {
  const RetryPolicy& policy = options_.retry;
  absl::Duration backoff = policy.initial_backoff;
  std::optional<std::mt19937_64> rng;  // seeded on the first retry: std::random_device costs a
                                      // system call, which every call would pay (queue bench: 1.5 %
                                      // of all CPU, ~15 % of the coordinator's)
  for (int attempt = 1;; ++attempt) {
    absl::Status st;
    bool retryable = false;
    auto conn = Acquire();
    if (!conn.ok()) {
      st = conn.status();
      retryable = absl::IsUnavailable(st);  // server restarting: wait and try again
    } else {
      Connection& c = **conn;
      c.impl_->retryable = false;
      if (transaction) {
        st = c.ExecuteUnprepared("START TRANSACTION");
        if (st.ok()) st = fn(c);
        if (st.ok()) st = c.ExecuteUnprepared("COMMIT");
        if (!st.ok() && !c.impl_->broken) {
          bool keep_retryable = c.impl_->retryable;
          if (!c.ExecuteUnprepared("ROLLBACK").ok()) c.impl_->broken = true;
          c.impl_->retryable = keep_retryable;
        }
      } else {
        st = fn(c);
      }
      retryable = !st.ok() && c.impl_->retryable &&
                  (absl::IsUnavailable(st) || absl::IsAborted(st));
      Release(std::move(*conn));
    }
    if (st.ok() || !retryable || attempt >= policy.max_attempts) return st;
    if (!rng) rng.emplace(std::random_device{}());
    std::uniform_real_distribution<double> jitter(0.5, 1.0);
    absl::Duration wait = backoff * jitter(*rng);
    // A lost or refused connection is said once per outage by the callers that wait it out
    // (coordinator, `tune -f`); per attempt it is only a debug line. Lock conflicts stay warnings.
    spdlog::log(absl::IsUnavailable(st) ? spdlog::level::debug : spdlog::level::warn,
                "database: {} (attempt {}/{}), retrying in {}", std::string(st.message()), attempt,
                 policy.max_attempts, absl::FormatDuration(wait));
    absl::SleepFor(wait);
    backoff = std::min(backoff * 2, policy.max_backoff);
  }
}

absl::Status Database::WithConnection(const std::function<absl::Status(Connection&)>& fn) {
  return Run(false, fn);
}

absl::Status Database::Transaction(const std::function<absl::Status(Connection&)>& fn) {
  return Run(true, fn);
}

absl::StatusOr<Rows> Database::Query(std::string_view sql, const Params& params) {
  Rows out;
  absl::Status st = Run(false, [&](Connection& c) -> absl::Status {
    auto rows = c.Query(sql, params);
    if (!rows.ok()) return rows.status();
    out = std::move(*rows);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<int64_t> Database::Execute(std::string_view sql, const Params& params) {
  int64_t affected = 0;
  absl::Status st = Run(false, [&](Connection& c) -> absl::Status {
    auto n = c.Execute(sql, params);
    if (!n.ok()) return n.status();
    affected = *n;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return affected;
}

absl::StatusOr<std::string> QuoteIdentifier(std::string_view name) {
  if (name.empty() || name.size() > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("identifier must be 1..64 bytes, got ", name.size()));
  }
  for (char c : name) {
    if (c == '`' || c == '\0') {
      return absl::InvalidArgumentError("identifier may not contain a backtick or NUL");
    }
  }
  return absl::StrCat("`", AV(name), "`");
}

}  // namespace tuna::schema
