#include <string>

#include "catch2/catch.hpp"
#include "schema/migrate/migrate.h"
#include "schema/migrate/sql_text.h"
#include "schema/store/errors.h"

using tuna::schema::SplitSqlStatements;

TEST_CASE("SplitSqlStatements respects quotes and comments", "[sql_text]") {
  auto s = SplitSqlStatements(
      "-- leading comment; not a statement\n"
      "CREATE TABLE a (x INT); # trailing ; comment\n"
      "INSERT INTO a VALUES (';'), (\"it''s; \\\" ok\"), ('a''b;');\n"
      "/* block ; comment */\n"
      "SELECT `we;ird` FROM a;\n"
      "  ;  \n"
      "SELECT 1");
  REQUIRE(s.size() == 4);
  CHECK(s[0] == "CREATE TABLE a (x INT)");
  CHECK(s[1] == "INSERT INTO a VALUES (';'), (\"it''s; \\\" ok\"), ('a''b;')");
  CHECK(s[2] == "SELECT `we;ird` FROM a");
  CHECK(s[3] == "SELECT 1");
  CHECK(SplitSqlStatements("-- only\n/* comments */ ;\n").empty());
}

TEST_CASE("MigrationChecksum is SHA-256 hex and ignores CRLF", "[sql_text]") {
  // SHA-256("abc")
  CHECK(tuna::schema::MigrationChecksum("abc") ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(tuna::schema::MigrationChecksum("a\r\nb\r\n") == tuna::schema::MigrationChecksum("a\nb\n"));
  CHECK(tuna::schema::MigrationChecksum("a\nb\n") != tuna::schema::MigrationChecksum("a\nc\n"));
}

TEST_CASE("LoadMigrations validates names and sorts by version", "[sql_text]") {
  auto ok = tuna::schema::LoadMigrations(
      {{"010_later.sql", "SELECT 1;"}, {"002_second.sql", "SELECT 2;"}});
  REQUIRE(ok.ok());
  REQUIRE(ok->size() == 2);
  CHECK((*ok)[0].version == 2);
  CHECK((*ok)[0].name == "second");
  CHECK((*ok)[1].version == 10);

  auto bad_name = tuna::schema::LoadMigrations({{"1_x.sql", "SELECT 1;"}});
  CHECK(bad_name.status().code() == absl::StatusCode::kInvalidArgument);
  auto dup = tuna::schema::LoadMigrations({{"001_a.sql", "SELECT 1;"}, {"001_b.sql", "SELECT 1;"}});
  REQUIRE_FALSE(dup.ok());
  CHECK(std::string(dup.status().message()).find("same version 1") != std::string::npos);
  auto empty = tuna::schema::LoadMigrations({{"003_empty.sql", "-- nothing\n"}});
  CHECK(empty.status().code() == absl::StatusCode::kInvalidArgument);
  auto zero = tuna::schema::LoadMigrations({{"000_zero.sql", "SELECT 1;"}});
  CHECK(zero.status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("The binary embeds migration 001 with every DESIGN §4 table", "[sql_text]") {
  auto migrations = tuna::schema::EmbeddedMigrations();
  REQUIRE(migrations.ok());
  REQUIRE_FALSE(migrations->empty());
  const auto& first = (*migrations)[0];
  CHECK(first.version == 1);
  CHECK(first.file_name == "001_initial.sql");
  auto statements = SplitSqlStatements(first.sql);
  CHECK(statements.size() == 13);  // one CREATE TABLE per table, find_result's ALTER
  for (const char* table :
       {"conv_config", "config_tag", "solver", "session", "solver_applicability", "job",
        "kernel", "job_kernel", "perf_result", "eval_sample", "worker"}) {
    INFO(table);
    CHECK(first.sql.find(std::string("CREATE TABLE IF NOT EXISTS ") + table + " (") !=
          std::string::npos);
  }
  // find_result is perf_result's shape (migrate_test compares it with the first text's table).
  CHECK(first.sql.find("CREATE TABLE IF NOT EXISTS find_result LIKE perf_result;") != std::string::npos);
}

TEST_CASE("MariaDB error codes map to Status codes", "[errors]") {
  using tuna::schema::StatusFromSqlError;
  CHECK(StatusFromSqlError(2006, "HY000", "MySQL server has gone away", "q").code() ==
        absl::StatusCode::kUnavailable);
  CHECK(StatusFromSqlError(2013, "HY000", "Lost connection", "q").code() ==
        absl::StatusCode::kUnavailable);
  CHECK(StatusFromSqlError(2002, "HY000", "Can't connect", "q").code() ==
        absl::StatusCode::kUnavailable);
  CHECK(StatusFromSqlError(2003, "HY000", "Can't connect", "q").code() ==
        absl::StatusCode::kUnavailable);
  CHECK(StatusFromSqlError(1927, "70100", "Connection was killed", "q").code() ==
        absl::StatusCode::kUnavailable);
  CHECK(StatusFromSqlError(1213, "40001", "Deadlock found", "q").code() ==
        absl::StatusCode::kAborted);
  CHECK(StatusFromSqlError(1205, "HY000", "Lock wait timeout", "q").code() ==
        absl::StatusCode::kAborted);
  CHECK(StatusFromSqlError(1062, "23000", "Duplicate entry", "q").code() ==
        absl::StatusCode::kAlreadyExists);
  CHECK(StatusFromSqlError(1064, "42000", "syntax", "q").code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(StatusFromSqlError(1045, "28000", "Access denied", "q").code() ==
        absl::StatusCode::kPermissionDenied);
  CHECK(StatusFromSqlError(1146, "42S02", "Table doesn't exist", "q").code() ==
        absl::StatusCode::kFailedPrecondition);
  CHECK(StatusFromSqlError(9999, "HY000", "odd", "q").code() == absl::StatusCode::kInternal);
  auto st = StatusFromSqlError(1062, "23000", "Duplicate entry 'x'", "INSERT INTO t");
  CHECK(std::string(st.message()) ==
        "INSERT INTO t: Duplicate entry 'x' (mysql error 1062, SQLSTATE 23000)");
}
