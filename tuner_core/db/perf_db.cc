#include "tuner_core/db/perf_db.h"

#include <tuple>

#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/db/miopen_sql.h"

namespace tuna::db {
namespace {

using internal::BindText;
using internal::ColumnText;
using internal::Prepare;
using internal::SqlError;

auto Tie(const PerfDbConfig& c) {
  return std::tie(c.layout, c.data_type, c.direction, c.spatial_dim, c.in_channels, c.in_h, c.in_w,
                  c.in_d, c.fil_h, c.fil_w, c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w,
                  c.pad_d, c.conv_stride_h, c.conv_stride_w, c.conv_stride_d, c.dilation_h,
                  c.dilation_w, c.dilation_d, c.bias, c.group_count);
}

// The 21 integer columns in table order (miopen_sql.h kConfigColumns[3..]).
std::vector<int64_t> IntColumns(const PerfDbConfig& c) {
  return {c.spatial_dim, c.in_channels,   c.in_h,          c.in_w,          c.in_d,
          c.fil_h,       c.fil_w,         c.fil_d,         c.out_channels,  c.batchsize,
          c.pad_h,       c.pad_w,         c.pad_d,         c.conv_stride_h, c.conv_stride_w,
          c.conv_stride_d, c.dilation_h,  c.dilation_w,    c.dilation_d,    c.bias,
          c.group_count};
}

const char* TypeName(int type) {
  switch (type) {
    case SQLITE_INTEGER: return "an integer";
    case SQLITE_FLOAT: return "a real";
    case SQLITE_TEXT: return "text";
    case SQLITE_BLOB: return "a blob";
    default: return "NULL";
  }
}

// Reads the 24 config columns starting at result column `first`. The integer columns must hold
// integers and the names text: SQLite would silently read '12abc' as 12, 3.7 as 3 and a blob
// as 0. InvalidArgument naming the config row and column otherwise.
absl::StatusOr<PerfDbConfig> ReadConfig(sqlite3_stmt* s, int first, int64_t config_id) {
  auto mistyped = [&](int col, const char* want) {
    const int type = sqlite3_column_type(s, col);
    std::string shown;
    if (type == SQLITE_TEXT || type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
      shown = internal::Cat(" ", internal::Quoted(ColumnText(s, col)));
    }
    return absl::InvalidArgumentError(internal::Cat(
        "config row ", config_id, ": column ", sqlite3_column_name(s, col), " holds ",
        TypeName(type), shown, ", not ", want));
  };
  PerfDbConfig c;
  std::string* names[] = {&c.layout, &c.data_type, &c.direction};
  for (int i = 0; i < 3; ++i) {
    if (sqlite3_column_type(s, first + i) != SQLITE_TEXT) return mistyped(first + i, "text");
    *names[i] = ColumnText(s, first + i);
  }
  int64_t* ints[] = {&c.spatial_dim,   &c.in_channels,   &c.in_h,          &c.in_w,
                     &c.in_d,          &c.fil_h,         &c.fil_w,         &c.fil_d,
                     &c.out_channels,  &c.batchsize,     &c.pad_h,         &c.pad_w,
                     &c.pad_d,         &c.conv_stride_h, &c.conv_stride_w, &c.conv_stride_d,
                     &c.dilation_h,    &c.dilation_w,    &c.dilation_d,    &c.bias,
                     &c.group_count};
  for (int i = 0; i < 21; ++i) {
    const int col = first + 3 + i;
    if (sqlite3_column_type(s, col) != SQLITE_INTEGER) return mistyped(col, "an integer");
    *ints[i] = sqlite3_column_int64(s, col);
  }
  return c;
}

}  // namespace

bool PerfDbConfigLess::operator()(const PerfDbConfig& a, const PerfDbConfig& b) const {
  return Tie(a) < Tie(b);
}

void PerfDbWriter::Add(const PerfDbConfig& config, const std::string& solver,
                       const std::string& params) {
  rows_[config][solver] = params;
}

size_t PerfDbWriter::row_count() const {
  size_t n = 0;
  for (const auto& [c, solvers] : rows_) n += solvers.size();
  return n;
}

absl::Status PerfDbWriter::Write(const std::string& path) const {
  for (const auto& [c, solvers] : rows_) {
    for (const auto& [solver, params] : solvers) {
      if (solver.empty()) return absl::InvalidArgumentError("empty solver name in perf db row");
    }
  }
  return internal::CreateDbFile(path, [this](sqlite3* db) -> absl::Status {
    if (absl::Status s = internal::Exec(db, kCreateConfigSql); !s.ok()) return s;
    if (absl::Status s = internal::Exec(db, kCreatePerfDbSql); !s.ok()) return s;
    // Explicit ids: the row order defines them and they do not depend on SQLite's rowid choice.
    auto cfg = Prepare(db, sql::InsertConfig());
    if (!cfg.ok()) return cfg.status();
    auto perf = Prepare(db, sql::kInsertPerfDb);
    if (!perf.ok()) return perf.status();
    int64_t config_id = 0, row_id = 0;
    for (const auto& [c, solvers] : rows_) {
      ++config_id;
      sqlite3_stmt* s = cfg->get();
      sqlite3_reset(s);
      sqlite3_bind_int64(s, 1, config_id);
      BindText(s, 2, c.layout);
      BindText(s, 3, c.data_type);
      BindText(s, 4, c.direction);
      std::vector<int64_t> ints = IntColumns(c);
      for (int i = 0; i < 21; ++i) sqlite3_bind_int64(s, 5 + i, ints[i]);
      if (sqlite3_step(s) != SQLITE_DONE) {
        return SqlError(db, internal::Cat("insert config ", config_id));
      }
      for (const auto& [solver, params] : solvers) {
        sqlite3_stmt* p = perf->get();
        sqlite3_reset(p);
        sqlite3_bind_int64(p, 1, ++row_id);
        sqlite3_bind_int64(p, 2, config_id);
        BindText(p, 3, solver);
        BindText(p, 4, params);
        if (sqlite3_step(p) != SQLITE_DONE) {
          return SqlError(db, internal::Cat("insert perf_db row ", solver, " config ", config_id));
        }
      }
    }
    return absl::OkStatus();
  });
}

namespace {

// SQLite's progress handler: a non-zero return interrupts the running statement.
int PastDeadline(void* arg) {
  const auto* at = static_cast<const std::chrono::steady_clock::time_point*>(arg);
  return std::chrono::steady_clock::now() >= *at ? 1 : 0;
}

}  // namespace

absl::StatusOr<PerfDbReader> PerfDbReader::Open(const std::string& path,
                                                const PerfDbReadOptions& options) {
  PerfDbReader r;
  r.path_ = path;
  absl::StatusOr<internal::SqliteHandle> db = internal::OpenReadOnly(path);
  if (!db.ok()) return db.status();
  r.db_ = *std::move(db);
  if (options.timeout.count() > 0) {
    r.deadline_ = std::make_unique<Deadline>();
    r.deadline_->at = std::chrono::steady_clock::now() + options.timeout;
    r.deadline_->timeout = options.timeout;
    sqlite3_progress_handler(r.db_.get(), 1000, PastDeadline, &r.deadline_->at);
  }
  if (absl::Status s = internal::CheckColumns(r.db_.get(), "config", kConfigColumns); !s.ok()) {
    return s;
  }
  if (absl::Status s = internal::CheckColumns(r.db_.get(), "perf_db", kPerfDbColumns); !s.ok()) {
    return s;
  }
  return r;
}

absl::Status PerfDbReader::Failed(std::string_view what) const {
  if (deadline_ != nullptr && sqlite3_errcode(db_.get()) == SQLITE_INTERRUPT &&
      std::chrono::steady_clock::now() >= deadline_->at) {
    return absl::DeadlineExceededError(internal::Cat(
        what, " of ", path_, " took longer than ", deadline_->timeout.count(),
        " ms and was aborted (is perf_db or config a view over an endless query?)"));
  }
  return SqlError(db_.get(), what);
}

absl::StatusOr<std::vector<PerfDbRow>> PerfDbReader::ReadAll() const {
  auto st = Prepare(db_.get(), sql::PerfDbRows("perf_db.id"));
  if (!st.ok()) return st.status();
  std::vector<PerfDbRow> rows;
  int rc;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) {
    PerfDbRow r;
    r.solver = ColumnText(st->get(), 0);
    r.params = ColumnText(st->get(), 1);
    auto config = ReadConfig(st->get(), 3, sqlite3_column_int64(st->get(), 2));
    if (!config.ok()) return config.status();
    r.config = *std::move(config);
    rows.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return Failed("read perf_db");
  return rows;
}

absl::Status PerfDbReader::ForEachByConfig(
    const std::function<absl::Status(int64_t config_id, PerfDbRow&& row)>& fn) const {
  auto st = Prepare(db_.get(), sql::PerfDbRows("perf_db.config, perf_db.id"));
  if (!st.ok()) return st.status();
  int rc;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) {
    PerfDbRow r;
    r.solver = ColumnText(st->get(), 0);
    r.params = ColumnText(st->get(), 1);
    const int64_t config_id = sqlite3_column_int64(st->get(), 2);
    auto config = ReadConfig(st->get(), 3, config_id);
    if (!config.ok()) return config.status();
    r.config = *std::move(config);
    if (absl::Status s = fn(config_id, std::move(r)); !s.ok()) return s;
  }
  if (rc != SQLITE_DONE) return Failed("read perf_db");
  return absl::OkStatus();
}

absl::StatusOr<std::vector<SolverParams>> PerfDbReader::Lookup(const PerfDbConfig& c) const {
  auto st = Prepare(db_.get(), sql::PerfDbLookup());
  if (!st.ok()) return st.status();
  sqlite3_stmt* s = st->get();
  BindText(s, 1, c.layout);
  BindText(s, 2, c.data_type);
  BindText(s, 3, c.direction);
  std::vector<int64_t> ints = IntColumns(c);
  for (int i = 0; i < 21; ++i) BindText(s, 4 + i, std::to_string(ints[i]));
  std::vector<SolverParams> out;
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    out.push_back({ColumnText(s, 0), ColumnText(s, 1)});
  }
  if (rc != SQLITE_DONE) return Failed("perf db lookup");
  return out;
}

absl::StatusOr<int64_t> PerfDbReader::Count(const char* sql) const {
  auto st = Prepare(db_.get(), sql);
  if (!st.ok()) return st.status();
  if (sqlite3_step(st->get()) != SQLITE_ROW) return Failed(sql);
  return sqlite3_column_int64(st->get(), 0);
}

absl::StatusOr<int64_t> PerfDbReader::CountConfigs() const {
  return Count(sql::kCountConfigs);
}
absl::StatusOr<int64_t> PerfDbReader::CountRows() const {
  return Count(sql::kCountPerfDb);
}

}  // namespace tuna::db
