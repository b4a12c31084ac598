// The schema migration runner (DESIGN §4): applies schema/migrations/NNN_name.sql in order and
// records each in `schema_version(version, name, applied_at, checksum)`.
//
// - Re-running is a no-op. Concurrent runners (two `tuna db migrate`, a coordinator starting)
//   are serialised with a server-side named lock (GET_LOCK) per database.
// - Each migration runs on one connection inside START TRANSACTION ... COMMIT together with its
//   schema_version row. MariaDB commits DDL implicitly, so only DML is truly atomic; migrations
//   are written to be re-runnable (IF NOT EXISTS) so an interrupted one can be run again.
// - An applied migration whose checksum differs from the binary's is FailedPrecondition (never
//   edit a released migration; add a new one). Recorded rewrites (Liquibase's validCheckSum): a
//   migration rewritten without changing the schema it creates names each earlier text's
//   checksum on a line `-- tuna:replaces-checksum <64 hex>`, and databases that applied an
//   earlier text are accepted as they are (their schema_version row keeps the old checksum).
//   A test must show that both texts create the same schema. A database newer than the binary
//   (versions the binary does not know) is FailedPrecondition too: an old tuna must not write to
//   a new schema.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"

namespace tuna::schema {

struct Migration {
  int version = 0;        // NNN
  std::string name;       // "initial" from 001_initial.sql
  std::string file_name;  // "001_initial.sql"
  std::string sql;
  std::string checksum;   // MigrationChecksum(sql)
  // Checksums of earlier texts this one replaces (`-- tuna:replaces-checksum` lines).
  std::vector<std::string> replaced_checksums;

  // True when a database that recorded `applied_checksum` applied this migration.
  bool Matches(const std::string& applied_checksum) const;
};

// Builds migrations from (file name, SQL) pairs: names must be NNN_name.sql with NNN > 0, unique
// and, once sorted, any order is accepted. InvalidArgument names the offending file.
absl::StatusOr<std::vector<Migration>> LoadMigrations(
    const std::vector<std::pair<std::string, std::string>>& files);

// The migrations compiled into this binary.
absl::StatusOr<std::vector<Migration>> EmbeddedMigrations();

struct AppliedMigration {
  int version = 0;
  std::string name;
  std::string checksum;
  std::string applied_at;  // "YYYY-MM-DD hh:mm:ss.ffffff" UTC
};

struct MigrationReport {
  int from_version = 0;  // before (0 = empty database)
  int to_version = 0;    // after
  std::vector<std::string> applied;  // file names applied by this run, in order
};

// Applies what is missing. Errors: FailedPrecondition (checksum mismatch, database newer than
// the binary), the store's codes for SQL errors (message names the file and statement number).
absl::StatusOr<MigrationReport> Migrate(Database& db, const std::vector<Migration>& migrations);
// Migrate(db, EmbeddedMigrations()).
absl::StatusOr<MigrationReport> MigrateToLatest(Database& db);

// Highest applied version; 0 when schema_version does not exist yet.
absl::StatusOr<int> SchemaVersion(Database& db);
absl::StatusOr<std::vector<AppliedMigration>> AppliedMigrations(Database& db);

// OK when migration `version` is applied; FailedPrecondition naming it and `what` it adds
// ("result verification") and asking for `tuna db migrate` otherwise. For readers that must not
// migrate the database themselves (export).
absl::Status RequireMigration(Database& db, int version, const std::string& what);

}  // namespace tuna::schema
