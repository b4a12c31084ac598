// MIOpen's SQLite perf db (what `tuna import-db` reads) under seeded mutation: damaged bytes
// (tests/fuzz/mutate.h), out-of-range and mistyped values in the config and perf_db columns,
// missing columns, and tables replaced by views over endless queries, through the real reader
// (tuner_core/db/perf_db.h) and FromPerfDbConfig. Nothing may crash or hang; every refusal
// (of the file, a statement, or a config row) carries a reason.
#include <sqlite3.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/mutate.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/keys.h"
#include "tuner_core/problem/validate.h"

namespace tuna::fuzz {
namespace {

// A small valid perf db: the first rows of MIOpen's gfx942 one, written by tuna's writer.
// `configs`: how many config rows it has (ids 1..configs, each used by a perf_db row).
std::string BaseDb(int64_t* configs = nullptr) {
  auto reader = db::PerfDbReader::Open("tests/problem/testdata/miopen/gfx942130.db");
  REQUIRE(reader.ok());
  auto rows = reader->ReadAll();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() > 60);
  db::PerfDbWriter writer;
  for (size_t i = 0; i < 60; ++i) writer.Add((*rows)[i]);
  if (configs != nullptr) *configs = static_cast<int64_t>(writer.config_count());
  const std::string path = TmpPath("fuzz_base.db");
  REQUIRE(writer.Write(path).ok());
  return path;
}

void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Everything the reader offers, on whatever the file holds: each call answers, each refusal
// says why, and each row read is a problem or a reasoned refusal. `intact`: the file is sound
// SQLite, so both reads see the same rows (SQLite does not detect every damaged page, and a
// damaged index can make two query plans disagree). Returns ReadAll's status.
absl::Status ReadEverything(const std::string& path, std::chrono::milliseconds timeout,
                            bool intact) {
  db::PerfDbReadOptions options;
  options.timeout = timeout;
  auto reader = db::PerfDbReader::Open(path, options);
  if (!reader.ok()) {
    RequireClearError(reader.status());
    return reader.status();
  }
  if (auto n = reader->CountConfigs(); !n.ok()) RequireClearError(n.status());
  if (auto n = reader->CountRows(); !n.ok()) RequireClearError(n.status());
  auto rows = reader->ReadAll();
  if (!rows.ok()) {
    RequireClearError(rows.status());
  } else {
    for (const db::PerfDbRow& row : *rows) {
      auto p = FromPerfDbConfig(row.config);
      if (p.ok()) {
        REQUIRE(ValidateProblem(*p).ok());
      } else {
        RequireClearError(p.status());
      }
    }
    if (!rows->empty()) {
      if (auto found = reader->Lookup(rows->front().config); !found.ok()) {
        RequireClearError(found.status());
      }
    }
  }
  size_t streamed = 0;
  absl::Status st = reader->ForEachByConfig([&](int64_t, db::PerfDbRow&&) {
    ++streamed;
    return absl::OkStatus();
  });
  if (!st.ok()) {
    RequireClearError(st);
  } else if (rows.ok() && intact) {
    REQUIRE(streamed == rows->size());
  }
  if (intact) REQUIRE(st.ok() == rows.ok());
  return rows.status();
}

TEST_CASE("2000 perf db files with damaged bytes: read or refused with a reason") {
  const std::string base = Slurp(BaseDb());
  Mutator m(15101, "");
  const std::string path = TmpPath("fuzz_bytes.db");
  for (int i = 0; i < 2000; ++i) {
    std::string bytes = m.Mutate(base);
    if (m.Below(3) == 0) bytes = m.Mutate(bytes);  // sometimes twice
    INFO("file " << i << ": " << MutationName(m.last()) << ", " << bytes.size() << " bytes");
    WriteBytes(path, bytes);
    static_cast<void>(ReadEverything(path, std::chrono::milliseconds(5000), false));
  }
}

// Runs `sql` on a copy of the base db; false when SQLite refuses the statement itself (a NOT
// NULL column, ...), which is no input for the reader.
bool Apply(const std::string& base, const std::string& path, const std::string& sql) {
  WriteBytes(path, Slurp(base));
  sqlite3* h = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &h) == SQLITE_OK);
  const bool ok = sqlite3_exec(h, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
  sqlite3_close(h);
  return ok;
}

const char* const kIntColumns[] = {
    "spatial_dim", "in_channels", "in_h", "in_w", "in_d", "fil_h", "fil_w", "fil_d",
    "out_channels", "batchsize", "pad_h", "pad_w", "pad_d", "conv_stride_h", "conv_stride_w",
    "conv_stride_d", "dilation_h", "dilation_w", "dilation_d", "bias", "group_count"};
const char* const kTextColumns[] = {"layout", "data_type", "direction"};

// An SQL literal of the kind a damaged or hostile file may hold in a column, and the type it
// has once stored in an INT column (integer affinity turns '12' into 12, not '12abc').
struct OddValue {
  const char* sql;
  int type;
};
OddValue PickOddValue(Mutator& m) {
  static const OddValue kValues[] = {
      {"9223372036854775807", SQLITE_INTEGER}, {"-9223372036854775808", SQLITE_INTEGER},
      {"-1", SQLITE_INTEGER}, {"0", SQLITE_INTEGER}, {"4294967297", SQLITE_INTEGER},
      {"'12'", SQLITE_INTEGER}, {"1e308", SQLITE_FLOAT}, {"-1e308", SQLITE_FLOAT},
      {"3.7", SQLITE_FLOAT}, {"'12abc'", SQLITE_TEXT}, {"'abc'", SQLITE_TEXT},
      {"''", SQLITE_TEXT}, {"x'00ff'", SQLITE_BLOB}, {"'NCHW'", SQLITE_TEXT},
      {"'FP32'", SQLITE_TEXT}, {"'F'", SQLITE_TEXT}, {"'NC' || char(0) || 'HW'", SQLITE_TEXT},
      {"char(27) || '[31m'", SQLITE_TEXT}, {"'INT8'", SQLITE_TEXT}, {"'NCDHW'", SQLITE_TEXT},
      {"'1 OR 1=1'", SQLITE_TEXT}, {"zeroblob(70000)", SQLITE_BLOB},
      {"printf('%.*c', 100000, 'x')", SQLITE_TEXT}};
  return kValues[m.Below(std::size(kValues))];
}

TEST_CASE("600 perf dbs with odd values in their columns: read or refused with a reason") {
  int64_t configs = 0;
  const std::string base = BaseDb(&configs);
  Mutator m(15102, "");
  const std::string path = TmpPath("fuzz_values.db");
  int applied = 0, mistyped = 0;
  for (int i = 0; i < 600; ++i) {
    std::string sql;
    std::string column;  // a config column given a value of another type than MIOpen writes
    const int64_t id = 1 + static_cast<int64_t>(m.Below(configs));
    const OddValue value = PickOddValue(m);
    switch (m.Below(4)) {
      case 0:
        column = kIntColumns[m.Below(21)];
        sql = absl::StrCat("UPDATE config SET ", column, " = ", value.sql, " WHERE id = ", id);
        if (value.type == SQLITE_INTEGER) column.clear();
        break;
      case 1:
        column = kTextColumns[m.Below(3)];
        sql = absl::StrCat("UPDATE config SET ", column, " = ", value.sql, " WHERE id = ", id);
        // TEXT affinity stores numbers as text, so only a blob is mistyped here.
        if (value.type != SQLITE_BLOB) column.clear();
        break;
      case 2:
        sql = absl::StrCat("UPDATE perf_db SET ", m.Below(2) ? "params" : "solver", " = ",
                           PickOddValue(m).sql, " WHERE id = ", id);
        break;
      default:
        sql = absl::StrCat("UPDATE perf_db SET config = ", PickOddValue(m).sql, " WHERE id = ", id);
    }
    INFO(sql);
    if (!Apply(base, path, sql)) continue;
    ++applied;
    const absl::Status read = ReadEverything(path, std::chrono::milliseconds(5000), true);
    if (!column.empty()) {
      ++mistyped;
      REQUIRE(!read.ok());
      REQUIRE(read.message().find(absl::StrCat("column ", column, " holds")) !=
              std::string_view::npos);
    }
  }
  CHECK(applied > 400);
  CHECK(mistyped > 50);
}

TEST_CASE("perf dbs missing a column or with endless views: refused with a reason, in time") {
  const std::string base = BaseDb();
  const std::string path = TmpPath("fuzz_schema.db");
  for (const char* col : {"in_h", "layout", "group_count"}) {
    REQUIRE(Apply(base, path,
                  absl::StrCat("DROP INDEX idx_config; ALTER TABLE config DROP COLUMN ", col)));
    auto r = db::PerfDbReader::Open(path);
    RequireClearError(r.status());
    CHECK(r.status().message().find(col) != std::string_view::npos);
  }
  REQUIRE(Apply(base, path, "ALTER TABLE perf_db RENAME TO old_perf_db"));
  RequireClearError(db::PerfDbReader::Open(path).status());
  // perf_db as a view over an endless recursive query: every statement stops at the deadline.
  REQUIRE(Apply(base, path,
                "ALTER TABLE perf_db RENAME TO p0; CREATE VIEW perf_db AS WITH RECURSIVE "
                "n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i AS id, 'S' AS "
                "solver, 1 AS config, 'x' AS params FROM n WHERE i < 0"));
  db::PerfDbReadOptions options;
  options.timeout = std::chrono::milliseconds(300);
  auto r = db::PerfDbReader::Open(path, options);
  REQUIRE(r.ok());
  auto rows = r->ReadAll();
  RequireClearError(rows.status());
  CHECK(rows.status().code() == absl::StatusCode::kDeadlineExceeded);
}

}  // namespace
}  // namespace tuna::fuzz
