#include <sqlite3.h>

#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/db/test_util.h"
#include "tuner_core/db/kernel_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/miopen_sql.h"

namespace tuna::db {
namespace {

using test::Slurp;
using test::MiopenData;
using test::TestData;

std::string WithoutTrailingNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

TEST_CASE("CREATE statements are MIOpen's, byte for byte") {
  CHECK(std::string(kCreateConfigSql) == WithoutTrailingNewline(Slurp(TestData("create_config.sql"))));
  CHECK(std::string(kCreatePerfDbSql) == WithoutTrailingNewline(Slurp(TestData("create_perfdb.sql"))));
  CHECK(std::string(kCreateKernDbSql) == WithoutTrailingNewline(Slurp(TestData("create_kerndb.sql"))));
}

std::vector<std::string> MasterNames(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "SELECT type || ':' || name FROM sqlite_master ORDER BY rowid;",
                             -1, &st, nullptr) == SQLITE_OK);
  std::vector<std::string> out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    out.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST_CASE("written files hold exactly MIOpen's objects") {
  PerfDbWriter pw;
  pw.Add(PerfDbConfig{.layout = "NCHW", .data_type = "FP32", .direction = "F"}, "S", "1");
  std::string pdb = test::TmpPath("schema.db");
  REQUIRE(pw.Write(pdb).ok());
  CHECK(MasterNames(pdb) == std::vector<std::string>{"table:config", "index:idx_config",
                                                      "table:perf_db", "index:idx_perf_db"});
  KernelDbWriter kw;
  kw.Add(MakeKernelDbEntry("a.cpp", "", "gfx942", "x"));
  std::string kdb = test::TmpPath("schema.kdb");
  REQUIRE(kw.Write(kdb).ok());
  CHECK(MasterNames(kdb) == std::vector<std::string>{"table:kern_db", "index:idx_kern_db"});
}

TEST_CASE("shipped MITuna-created perf db passes the column check") {
  CHECK(PerfDbReader::Open(MiopenData("gfx942130.db")).ok());
}

TEST_CASE("a db without MIOpen's columns is refused") {
  std::string path = test::TmpPath("wrong.db");
  std::remove(path.c_str());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  REQUIRE(sqlite3_exec(db,
                       "CREATE TABLE config(id INTEGER PRIMARY KEY, layout TEXT);"
                       "CREATE TABLE perf_db(id INTEGER PRIMARY KEY, solver TEXT, config INT, "
                       "params TEXT);"
                       "CREATE TABLE kern_db(id INTEGER, kernel_name TEXT);"
                       "CREATE TABLE pad(x BLOB); INSERT INTO pad VALUES(zeroblob(600));",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto r = PerfDbReader::Open(path);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(r.status().message()).find("data_type") != std::string::npos);
  auto k = KernelDbReader::Open(path);
  REQUIRE_FALSE(k.ok());
  CHECK(k.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK_FALSE(PerfDbReader::Open(test::TmpPath("does_not_exist.db")).ok());
}

}  // namespace
}  // namespace tuna::db
