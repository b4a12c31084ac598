// The migration runner against a real MariaDB.
#include <map>
#include <regex>
#include <set>
#include <string>

#include "catch2/catch.hpp"
#include "schema/migrate/migrate.h"
#include "schema/migrate/sql_text.h"
#include "schema/store/database.h"
#include "tests/fixtures/bunzip2.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tests/fixtures/read_file.h"

using tuna::schema::Migration;
using tuna::testing::CreateTestDatabase;

namespace {

std::set<std::string> Tables(tuna::schema::Database& db) {
  auto rows = db.Query(
      "SELECT table_name AS name, engine, table_collation FROM information_schema.tables "
      "WHERE table_schema = DATABASE()");
  std::set<std::string> out;
  if (!rows.ok()) return out;
  for (const auto& r : *rows) {
    if (r.String("engine") == "InnoDB" && r.String("table_collation").rfind("utf8mb4", 0) == 0) {
      out.insert(r.String("name"));
    }
  }
  return out;
}

// SHOW CREATE TABLE of every table and view, AUTO_INCREMENT counters left out.
std::map<std::string, std::string> Schema(tuna::schema::Database& db) {
  std::map<std::string, std::string> out;
  auto tables = db.Query(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() "
      "AND table_name <> 'schema_version'");
  if (!tables.ok()) return out;
  static const std::regex kCounter(R"( AUTO_INCREMENT=[0-9]+)");
  for (const auto& t : *tables) {
    auto ddl = db.Query("SHOW CREATE TABLE `" + t.String("name") + "`");
    if (ddl.ok()) out[t.String("name")] = std::regex_replace((*ddl)[0].String(1), kCounter, "");
  }
  return out;
}

}  // namespace

TEST_CASE("Migrations create the schema and re-running is a no-op", "[mariadb][migrate]") {
  auto t = CreateTestDatabase(/*migrate=*/false);
  REQUIRE(t.ok());
  auto& db = *t->db;
  auto v0 = tuna::schema::SchemaVersion(db);
  REQUIRE(v0.ok());
  CHECK(*v0 == 0);

  auto first = tuna::schema::MigrateToLatest(db);
  REQUIRE(first.ok());
  CHECK(first->from_version == 0);
  CHECK(first->to_version >= 1);
  REQUIRE_FALSE(first->applied.empty());
  CHECK(first->applied[0] == "001_initial.sql");

  std::set<std::string> tables = Tables(db);
  for (const char* name :
       {"schema_version", "conv_config", "config_tag", "solver", "session",
        "solver_applicability", "job", "kernel", "job_kernel", "perf_result", "find_result",
        "eval_sample", "worker"}) {
    INFO(name);
    CHECK(tables.count(name) == 1);
  }

  auto second = tuna::schema::MigrateToLatest(db);
  REQUIRE(second.ok());
  CHECK(second->applied.empty());
  CHECK(second->from_version == first->to_version);
  CHECK(second->to_version == first->to_version);

  auto applied = tuna::schema::AppliedMigrations(db);
  REQUIRE(applied.ok());
  REQUIRE(applied->size() == first->applied.size());
  CHECK((*applied)[0].name == "initial");
  CHECK((*applied)[0].checksum.size() == 64);
  CHECK((*applied)[0].applied_at.size() == 26);

  // The job table enforces one job per (session, config, solver, kind).
  REQUIRE(db.Execute("INSERT INTO solver (id, name) VALUES (7, 'ConvX')").ok());
  REQUIRE(db.Execute("INSERT INTO session (arch, num_cu, backend) VALUES ('gfx942', 304, 'HIP')")
              .ok());
  REQUIRE(db.Execute("INSERT INTO conv_config (spatial_dim, batchsize, in_channels, in_h, in_w, "
                     "out_channels, fil_h, fil_w, pad_h, pad_w, conv_stride_h, conv_stride_w, "
                     "dilation_h, dilation_w, direction, data_type, driver, config_hash) VALUES "
                     "(2, 16, 64, 56, 56, 64, 3, 3, 1, 1, 1, 1, 1, 1, 'F', 'FP16', 'convfp16 ...', "
                     "REPEAT('0', 64))")
              .ok());
  const char* insert_job =
      "INSERT INTO job (session_id, config_id, solver_id, kind) "
      "SELECT s.id, c.id, 7, 'perf' FROM session s, conv_config c";
  REQUIRE(db.Execute(insert_job).ok());
  CHECK(db.Execute(insert_job).status().code() == absl::StatusCode::kAlreadyExists);
  auto bad_state = db.Execute("UPDATE job SET state = 'exploded'");
  CHECK_FALSE(bad_state.ok());
}

TEST_CASE("A changed applied migration is a checksum error", "[mariadb][migrate]") {
  auto t = CreateTestDatabase(/*migrate=*/false);
  REQUIRE(t.ok());
  auto v1 = tuna::schema::LoadMigrations({{"001_a.sql", "CREATE TABLE a (x INT);"}});
  REQUIRE(v1.ok());
  REQUIRE(tuna::schema::Migrate(*t->db, *v1).ok());

  auto changed = tuna::schema::LoadMigrations({{"001_a.sql", "CREATE TABLE a (x BIGINT);"}});
  REQUIRE(changed.ok());
  auto r = tuna::schema::Migrate(*t->db, *changed);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(r.status().message()).find("001_a.sql was changed") != std::string::npos);

  // A database that has migrations this binary does not know is refused too.
  auto v2 = tuna::schema::LoadMigrations(
      {{"001_a.sql", "CREATE TABLE a (x INT);"}, {"002_b.sql", "CREATE TABLE b (y INT);"}});
  REQUIRE(v2.ok());
  auto up = tuna::schema::Migrate(*t->db, *v2);
  REQUIRE(up.ok());
  CHECK(up->applied == std::vector<std::string>{"002_b.sql"});
  auto old_binary = tuna::schema::Migrate(*t->db, *v1);
  REQUIRE_FALSE(old_binary.ok());
  CHECK(old_binary.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(old_binary.status().message()).find("newer") != std::string::npos);
}

TEST_CASE("A failing migration names its file and statement and is not recorded",
          "[mariadb][migrate]") {
  auto t = CreateTestDatabase(/*migrate=*/false);
  REQUIRE(t.ok());
  auto bad = tuna::schema::LoadMigrations(
      {{"001_ok.sql", "CREATE TABLE ok1 (x INT);"},
       {"002_bad.sql", "CREATE TABLE ok2 (x INT);\nCREATE TABLE broken (x NOSUCHTYPE);"}});
  REQUIRE(bad.ok());
  auto r = tuna::schema::Migrate(*t->db, *bad);
  REQUIRE_FALSE(r.ok());
  std::string msg(r.status().message());
  CHECK(msg.find("migration 002_bad.sql, statement 2") != std::string::npos);
  auto v = tuna::schema::SchemaVersion(*t->db);
  REQUIRE(v.ok());
  CHECK(*v == 1);

  // DML inside a migration is atomic with its schema_version row.
  auto dml = tuna::schema::LoadMigrations(
      {{"001_ok.sql", "CREATE TABLE ok1 (x INT);"},
       {"002_fixed.sql", "INSERT INTO ok1 VALUES (1);\nINSERT INTO ok1 VALUES ('not a number');"}});
  REQUIRE(dml.ok());
  REQUIRE_FALSE(tuna::schema::Migrate(*t->db, *dml).ok());
  auto rows = t->db->Query("SELECT COUNT(*) FROM ok1");
  REQUIRE(rows.ok());
  CHECK((*rows)[0].Int(0) == 0);
}

TEST_CASE("A recorded rewrite of 001 accepts databases of the first text and makes the same schema",
          "[mariadb][migrate]") {
  auto latest = tuna::schema::EmbeddedMigrations();
  REQUIRE(latest.ok());
  // Kept compressed: an archive of the applied text, not a second copy to maintain.
  const std::string first_text =
      tuna::testing::Bunzip2(tuna::testing::ReadFile("tests/schema/testdata/001_initial_first_text.sql.bz2"));
  REQUIRE(first_text.size() > 1000);
  REQUIRE_FALSE(latest->front().checksum == tuna::schema::MigrationChecksum(first_text));
  CHECK(latest->front().Matches(tuna::schema::MigrationChecksum(first_text)));

  // A database that applied the first text, then the rest from this binary.
  auto old_db = CreateTestDatabase(/*migrate=*/false);
  REQUIRE(old_db.ok());
  auto first = tuna::schema::LoadMigrations({{"001_initial.sql", first_text}});
  REQUIRE(first.ok());
  REQUIRE(tuna::schema::Migrate(*old_db->db, *first).ok());
  auto upgraded = tuna::schema::MigrateToLatest(*old_db->db);
  REQUIRE(upgraded.ok());
  CHECK(upgraded->from_version == 1);
  CHECK(upgraded->to_version == latest->back().version);

  // A fresh database from this binary, and 001 again after it (re-runnable).
  auto new_db = CreateTestDatabase(/*migrate=*/false);
  REQUIRE(new_db.ok());
  REQUIRE(tuna::schema::MigrateToLatest(*new_db->db).ok());
  REQUIRE(tuna::schema::SplitSqlStatements(latest->front().sql).size() > 10);
  for (const auto& statement : tuna::schema::SplitSqlStatements(latest->front().sql)) {
    INFO(statement.substr(0, 60));
    REQUIRE(new_db->db->Execute(statement).ok());
  }

  auto old_schema = Schema(*old_db->db);
  auto new_schema = Schema(*new_db->db);
  REQUIRE(old_schema.count("find_result") == 1);
  REQUIRE(old_schema.size() == new_schema.size());
  for (const auto& [name, ddl] : old_schema) {
    INFO(name);
    CHECK(new_schema[name] == ddl);
  }

  // Any other text is still refused.
  std::vector<std::pair<std::string, std::string>> edited = {
      {"001_initial.sql", first_text + "\n-- edited\n"}};
  for (size_t i = 1; i < latest->size(); ++i) {
    edited.emplace_back((*latest)[i].file_name, (*latest)[i].sql);
  }
  auto other = tuna::schema::LoadMigrations(edited);
  REQUIRE(other.ok());
  auto refused = tuna::schema::Migrate(*old_db->db, *other);
  CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(refused.status().message()).find("001_initial.sql was changed") !=
        std::string::npos);
}
