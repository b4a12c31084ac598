// MIOpen's SQLite perf db (`<basename>.db` system, `<basename>_1.1.0.udb` user): a `config`
// table (one row per problem, the 24 columns of tuna::PerfDbConfig) and `perf_db(solver, config,
// params)` with one row per (solver, config).
//
// Files are created with MIOpen's own CREATE statements (schema.h) and are byte-reproducible:
// the same rows give the same bytes with the same SQLite library (page size 4096, rollback
// journal, one transaction, configs inserted in sorted order so ids are stable, perf rows ordered
// by (config id, solver)). The SQLite version number is part of the file header, so bytes can
// differ across SQLite versions.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/db/sqlite_util.h"
#include "tuner_core/problem/keys.h"

namespace tuna::db {

// Strict weak order over all 24 columns (strings first, then integers in table order); the
// writer's config id order.
struct PerfDbConfigLess {
  bool operator()(const PerfDbConfig& a, const PerfDbConfig& b) const;
};

struct PerfDbRow {
  PerfDbConfig config;
  std::string solver;  // solver DbId
  std::string params;  // perf-config serialisation, opaque here
  bool operator==(const PerfDbRow&) const = default;
};

struct SolverParams {
  std::string solver;
  std::string params;
  bool operator==(const SolverParams&) const = default;
};

// Collects rows in memory, then writes a fresh file. Not thread-safe; cheap to move.
class PerfDbWriter {
 public:
  // INSERT OR REPLACE semantics: a second Add for the same (config, solver) replaces params.
  void Add(const PerfDbConfig& config, const std::string& solver, const std::string& params);
  void Add(const PerfDbRow& row) { Add(row.config, row.solver, row.params); }

  size_t config_count() const { return rows_.size(); }
  size_t row_count() const;

  // Writes a new file at `path` (replacing any file there, atomically via `path.tmp`).
  // InvalidArgument for an empty solver; Internal for SQLite/I/O errors. May be called again.
  absl::Status Write(const std::string& path) const;

 private:
  // config -> solver -> params; both maps ordered, which is what makes ids deterministic.
  std::map<PerfDbConfig, std::map<std::string, std::string>, PerfDbConfigLess> rows_;
};

struct PerfDbReadOptions {
  // Every statement of the reader fails with DeadlineExceeded once this much time has passed
  // since Open (an SQLite progress handler interrupts it): a file from elsewhere may make
  // `perf_db` or `config` a view over an endless query. Zero or negative: no deadline.
  std::chrono::milliseconds timeout{60'000};
};

// A read-only open perf db (SQLITE_OPEN_READONLY; not the immutable URI, since another process
// may be writing the file). Move-only; one thread at a time.
class PerfDbReader {
 public:
  // NotFound if absent; InvalidArgument if not SQLite / < 512 bytes; FailedPrecondition when
  // `config` or `perf_db` lack a column MIOpen requires (PRAGMA table_info check).
  static absl::StatusOr<PerfDbReader> Open(const std::string& path,
                                           const PerfDbReadOptions& options = {});

  // Every (config, solver, params) row, ordered by perf_db.id. InvalidArgument naming the config
  // row and column when a config column holds a value of the wrong type (text, a real, a blob or
  // NULL where MIOpen writes an integer; anything but text in layout, data_type, direction).
  absl::StatusOr<std::vector<PerfDbRow>> ReadAll() const;
  // The same rows one at a time, ordered by (perf_db.config, perf_db.id) so the rows of one
  // config row come together; `config_id` is config.id. Memory: one row. An error of `fn` stops
  // and is returned; so does a mistyped config column (as ReadAll).
  absl::Status ForEachByConfig(
      const std::function<absl::Status(int64_t config_id, PerfDbRow&& row)>& fn) const;
  // MIOpen's lookup (SQLitePerfDb::FindRecord SQL, values bound as text like MIOpen does), in
  // the order SQLite returns them (MIOpen's SQL has no ORDER BY); empty when the config is absent.
  absl::StatusOr<std::vector<SolverParams>> Lookup(const PerfDbConfig& config) const;
  absl::StatusOr<int64_t> CountConfigs() const;
  absl::StatusOr<int64_t> CountRows() const;

 private:
  struct Deadline {
    std::chrono::steady_clock::time_point at;
    std::chrono::milliseconds timeout{0};
  };
  PerfDbReader() = default;
  absl::StatusOr<int64_t> Count(const char* sql) const;
  // The error of a failed statement: DeadlineExceeded when the progress handler stopped it.
  absl::Status Failed(std::string_view what) const;
  std::string path_;
  std::unique_ptr<Deadline> deadline_;  // the progress handler's argument; outlives db_
  internal::SqliteHandle db_;
};


}  // namespace tuna::db
