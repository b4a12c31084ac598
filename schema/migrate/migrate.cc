#include "schema/migrate/migrate.h"

#include <algorithm>
#include <map>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "schema/migrate/embedded_migrations.h"
#include "schema/migrate/sql_text.h"
#include "spdlog/spdlog.h"

namespace tuna::schema {
namespace {

constexpr char kCreateSchemaVersion[] =
    "CREATE TABLE IF NOT EXISTS schema_version ("
    " version INT NOT NULL PRIMARY KEY,"
    " name VARCHAR(255) NOT NULL,"
    " applied_at DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6),"
    " checksum CHAR(64) CHARACTER SET ascii NOT NULL"
    ") ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_unicode_ci";

absl::StatusOr<bool> SchemaVersionExists(Connection& c) {
  auto rows = c.Query(
      "SELECT COUNT(*) FROM information_schema.tables "
      "WHERE table_schema = DATABASE() AND table_name = 'schema_version'");
  if (!rows.ok()) return rows.status();
  return (*rows)[0].Int(0) > 0;
}

absl::StatusOr<std::vector<AppliedMigration>> ReadApplied(Connection& c) {
  auto exists = SchemaVersionExists(c);
  if (!exists.ok()) return exists.status();
  std::vector<AppliedMigration> out;
  if (!*exists) return out;
  auto rows = c.Query(
      "SELECT version, name, checksum, CAST(applied_at AS CHAR) AS applied_at "
      "FROM schema_version ORDER BY version");
  if (!rows.ok()) return rows.status();
  for (const Row& r : *rows) {
    out.push_back({static_cast<int>(r.Int("version")), r.String("name"), r.String("checksum"),
                   r.String("applied_at")});
  }
  return out;
}

absl::Status ApplyOne(Connection& c, const Migration& m) {
  std::vector<std::string> statements = SplitSqlStatements(m.sql);
  if (auto st = c.ExecuteUnprepared("START TRANSACTION"); !st.ok()) return st;
  for (size_t i = 0; i < statements.size(); ++i) {
    if (auto st = c.ExecuteUnprepared(statements[i]); !st.ok()) {
      (void)c.ExecuteUnprepared("ROLLBACK");
      return absl::Status(st.code(), absl::StrCat("migration ", m.file_name, ", statement ",
                                                  i + 1, ": ", st.message()));
    }
  }
  auto n = c.Execute("INSERT INTO schema_version (version, name, checksum) VALUES (?, ?, ?)",
                     {int64_t{m.version}, m.name, m.checksum});
  if (!n.ok()) {
    (void)c.ExecuteUnprepared("ROLLBACK");
    return absl::Status(n.status().code(), absl::StrCat("recording migration ", m.file_name,
                                                        ": ", n.status().message()));
  }
  return c.ExecuteUnprepared("COMMIT");
}

// The checksums named on `-- tuna:replaces-checksum <hex>` lines.
std::vector<std::string> ReplacedChecksums(const std::string& sql) {
  static const std::regex kLine(R"(-- tuna:replaces-checksum ([0-9a-f]{64})\s*)");
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(sql, '\n')) {
    std::smatch m;
    std::string text(line);
    if (std::regex_match(text, m, kLine)) out.push_back(m[1].str());
  }
  return out;
}

}  // namespace

bool Migration::Matches(const std::string& applied_checksum) const {
  return applied_checksum == checksum ||
         std::find(replaced_checksums.begin(), replaced_checksums.end(), applied_checksum) !=
             replaced_checksums.end();
}

absl::StatusOr<std::vector<Migration>> LoadMigrations(
    const std::vector<std::pair<std::string, std::string>>& files) {
  static const std::regex kName(R"(^([0-9]{3,})_([A-Za-z0-9_]+)\.sql$)");
  std::vector<Migration> out;
  std::map<int, std::string> seen;
  for (const auto& [file, sql] : files) {
    std::smatch m;
    if (!std::regex_match(file, m, kName)) {
      return absl::InvalidArgumentError(
          absl::StrCat("migration file name '", file, "' is not NNN_name.sql"));
    }
    int version = std::stoi(m[1].str());
    if (version <= 0) {
      return absl::InvalidArgumentError(absl::StrCat("migration ", file, ": version must be > 0"));
    }
    if (auto it = seen.find(version); it != seen.end()) {
      return absl::InvalidArgumentError(absl::StrCat("migrations ", it->second, " and ", file,
                                                     " have the same version ", version));
    }
    seen[version] = file;
    if (SplitSqlStatements(sql).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("migration ", file, " has no statements"));
    }
    out.push_back({version, m[2].str(), file, sql, MigrationChecksum(sql), ReplacedChecksums(sql)});
  }
  std::sort(out.begin(), out.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  return out;
}

absl::StatusOr<std::vector<Migration>> EmbeddedMigrations() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& f : EmbeddedMigrationFiles()) files.emplace_back(f.file_name, f.sql);
  return LoadMigrations(files);
}

absl::StatusOr<MigrationReport> Migrate(Database& db, const std::vector<Migration>& migrations) {
  MigrationReport report;
  absl::Status st = db.WithConnection([&](Connection& c) -> absl::Status {
    report = MigrationReport();
    // One runner per database at a time; the lock dies with the connection.
    auto got = c.Query("SELECT GET_LOCK(CONCAT('tuna_migrate.', DATABASE()), 120)");
    if (!got.ok()) return got.status();
    if ((*got)[0].IsNull(0) || (*got)[0].Int(0) != 1) {
      return absl::UnavailableError(
          "another `tuna db migrate` held the migration lock for 120 s; try again");
    }
    auto release = [&c] {
      (void)c.Query("SELECT RELEASE_LOCK(CONCAT('tuna_migrate.', DATABASE()))");
    };
    auto run = [&]() -> absl::Status {
      auto applied = ReadApplied(c);
      if (!applied.ok()) return applied.status();
      std::map<int, const Migration*> known;
      for (const auto& m : migrations) known[m.version] = &m;
      std::map<int, const AppliedMigration*> done;
      for (const auto& a : *applied) {
        done[a.version] = &a;
        report.from_version = std::max(report.from_version, a.version);
        auto it = known.find(a.version);
        if (it == known.end()) {
          return absl::FailedPreconditionError(absl::StrCat(
              "the database has schema migration ", a.version, " (", a.name,
              ") which this tuna does not know: the database is newer than this binary"));
        }
        if (!it->second->Matches(a.checksum)) {
          return absl::FailedPreconditionError(absl::StrCat(
              "migration ", it->second->file_name, " was changed after it was applied (checksum ",
              a.checksum.substr(0, 12), "... in the database, ",
              it->second->checksum.substr(0, 12),
              "... in this binary); add a new migration instead of editing an applied one"));
        }
      }
      report.to_version = report.from_version;
      if (auto st = c.ExecuteUnprepared(kCreateSchemaVersion); !st.ok()) return st;
      for (const auto& m : migrations) {
        if (done.count(m.version)) continue;
        spdlog::info("applying migration {}", m.file_name);
        if (auto st = ApplyOne(c, m); !st.ok()) return st;
        report.applied.push_back(m.file_name);
        report.to_version = std::max(report.to_version, m.version);
      }
      return absl::OkStatus();
    };
    absl::Status result = run();
    release();
    return result;
  });
  if (!st.ok()) return st;
  return report;
}

absl::StatusOr<MigrationReport> MigrateToLatest(Database& db) {
  auto migrations = EmbeddedMigrations();
  if (!migrations.ok()) return migrations.status();
  return Migrate(db, *migrations);
}

absl::StatusOr<std::vector<AppliedMigration>> AppliedMigrations(Database& db) {
  std::vector<AppliedMigration> out;
  absl::Status st = db.WithConnection([&](Connection& c) -> absl::Status {
    auto applied = ReadApplied(c);
    if (!applied.ok()) return applied.status();
    out = std::move(*applied);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

absl::Status RequireMigration(Database& db, int version, const std::string& what) {
  auto applied = AppliedMigrations(db);
  if (!applied.ok()) return applied.status();
  for (const auto& m : *applied) {
    if (m.version == version) return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrCat("the database lacks schema migration ",
                                                    version, " (", what, "); run `tuna db migrate`"));
}

absl::StatusOr<int> SchemaVersion(Database& db) {
  auto applied = AppliedMigrations(db);
  if (!applied.ok()) return applied.status();
  int v = 0;
  for (const auto& a : *applied) v = std::max(v, a.version);
  return v;
}

}  // namespace tuna::schema
