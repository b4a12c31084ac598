#include "cli/db_access.h"

#include "schema/embedded/mariadb_server.h"
#include "schema/migrate/migrate.h"
#include "schema/store/connection_info.h"
#include "spdlog/spdlog.h"

namespace tuna::cli {

absl::StatusOr<std::unique_ptr<schema::Database>> OpenCommandDatabase(const GlobalOptions& global,
                                                                      DbAccessOptions options) {
  if (!global.db_error.ok()) return global.db_error;
  absl::StatusOr<schema::ConnectionInfo> info;
  if (global.external_db) {
    info = *global.external_db;
  } else {
    schema::EmbeddedServerOptions o;
    o.data_dir = global.data_dir;
    schema::EmbeddedServer server(o);
    auto started = server.Start();  // no-op when running
    if (!started.ok()) return started.status();
    if (!started->already_running) {
      spdlog::info("started the embedded MariaDB {} (pid {}, data dir {})",
                   started->status.version, started->status.pid, started->status.data_dir);
    }
    info = server.Connection();
  }
  if (!info.ok()) return info.status();
  schema::DatabaseOptions o;
  o.connection = *info;
  o.pool_size = options.pool_size;
  auto db = schema::Database::Open(o);
  if (!db.ok()) return db.status();
  if (!options.migrate) return db;
  auto migrated = schema::MigrateToLatest(**db);
  if (!migrated.ok()) return migrated.status();
  for (const auto& f : migrated->applied) spdlog::info("applied migration {}", f);
  return db;
}

}  // namespace tuna::cli
