// `tuna db start|stop|status|migrate`: the embedded MariaDB (DESIGN §2, §10) or, with --db, an
// external server (status and migrate only).
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/json_text.h"
#include "schema/embedded/mariadb_server.h"
#include "schema/migrate/migrate.h"
#include "schema/store/connection_info.h"
#include "schema/store/database.h"

namespace tuna::cli {
namespace {

using schema::ConnectionInfo;
using schema::Database;
using schema::EmbeddedServer;
using schema::EmbeddedServerOptions;

struct DbOptions {
  int port = 0;
  std::string socket;
  bool json = false;
  bool no_migrate = false;
};

EmbeddedServerOptions ServerOptions(const GlobalOptions& global, const DbOptions& opts) {
  EmbeddedServerOptions o;
  o.data_dir = global.data_dir;
  o.port = opts.port;
  o.socket_path = opts.socket;
  return o;
}

int Fail(const std::string& what, const absl::Status& st) {
  std::cerr << "tuna db " << what << ": " << st.message() << "\n";
  return 1;
}

absl::StatusOr<std::unique_ptr<Database>> OpenDatabase(const ConnectionInfo& info) {
  schema::DatabaseOptions o;
  o.connection = info;
  o.pool_size = 1;
  o.retry.max_attempts = 3;
  return Database::Open(o);
}

// Applies the embedded migrations and prints what happened.
int RunMigrations(const ConnectionInfo& info) {
  auto db = OpenDatabase(info);
  if (!db.ok()) return Fail("migrate", db.status());
  auto report = schema::MigrateToLatest(**db);
  if (!report.ok()) return Fail("migrate", report.status());
  if (report->applied.empty()) {
    std::cout << "schema is up to date (version " << report->to_version << ") on "
              << info.Redacted() << "\n";
  } else {
    for (const auto& f : report->applied) std::cout << "applied " << f << "\n";
    std::cout << "schema migrated from version " << report->from_version << " to "
              << report->to_version << " on " << info.Redacted() << "\n";
  }
  return 0;
}

int Start(const GlobalOptions& global, const DbOptions& opts) {
  if (!global.db_error.ok()) return Fail("start", global.db_error);
  if (global.external_db) {
    std::cerr << "tuna db start: the database is an external server (--db, TUNA_DB, "
                 "TUNA_DB_HOSTNAME or ~/.my.cnf); start/stop manage only the embedded one\n";
    return 2;
  }
  EmbeddedServer server(ServerOptions(global, opts));
  auto started = server.Start();
  if (!started.ok()) return Fail("start", started.status());
  const auto& s = started->status;
  if (started->already_running) {
    std::cout << "already running (pid " << s.pid << ", port " << s.port << ")\n";
  } else {
    std::cout << "started MariaDB " << s.version << " (pid " << s.pid << ", port " << s.port
              << ", socket " << s.socket_path << ")\n"
              << "data dir " << s.data_dir << (started->bootstrapped ? " (new)" : "") << "\n";
  }
  if (opts.no_migrate) return 0;
  auto info = server.Connection();
  if (!info.ok()) return Fail("start", info.status());
  return RunMigrations(*info);
}

int Stop(const GlobalOptions& global, const DbOptions& opts) {
  if (!global.db_error.ok()) return Fail("stop", global.db_error);
  if (global.external_db) {
    std::cerr << "tuna db stop: the database is an external server (--db, TUNA_DB, "
                 "TUNA_DB_HOSTNAME or ~/.my.cnf); start/stop manage only the embedded one\n";
    return 2;
  }
  EmbeddedServer server(ServerOptions(global, opts));
  auto before = server.Status();
  auto stopped = server.Stop();
  if (!stopped.ok()) return Fail("stop", stopped.status());
  if (*stopped) {
    std::cout << "stopped (pid " << (before.ok() ? before->pid : 0) << ", data dir "
              << server.data_dir() << ")\n";
  } else {
    std::cout << "not running (data dir " << server.data_dir() << ")\n";
  }
  return 0;
}

// Schema version through a short-lived connection; nullopt + message when it cannot be read.
std::optional<int> ReadSchemaVersion(const ConnectionInfo& info, std::string* error) {
  auto db = OpenDatabase(info);
  if (!db.ok()) {
    *error = std::string(db.status().message());
    return std::nullopt;
  }
  auto v = schema::SchemaVersion(**db);
  if (!v.ok()) {
    *error = std::string(v.status().message());
    return std::nullopt;
  }
  return *v;
}

int Status(const GlobalOptions& global, const DbOptions& opts) {
  if (!global.db_error.ok()) return Fail("status", global.db_error);
  if (global.external_db) {
    const std::optional<ConnectionInfo> info = global.external_db;
    std::string error;
    std::optional<int> version = ReadSchemaVersion(*info, &error);
    if (opts.json) {
      Json j = {{"embedded", false},
                {"url", info->Redacted()},
                {"reachable", version.has_value()},
                {"schema_version", version ? Json(*version) : Json()}};
      if (!version) j["error"] = error;
      std::cout << JsonText(j) << "\n";
    } else {
      std::cout << "database:       " << info->Redacted() << "\n";
      if (version) {
        std::cout << "reachable:      yes\nschema version: " << *version << "\n";
      } else {
        std::cout << "reachable:      no (" << error << ")\n";
      }
    }
    return version ? 0 : 1;
  }
  EmbeddedServer server(ServerOptions(global, opts));
  auto st = server.Status();
  if (!st.ok()) return Fail("status", st.status());
  std::optional<int> version;
  std::string error;
  if (st->running) {
    auto info = server.Connection();
    if (info.ok()) {
      version = ReadSchemaVersion(*info, &error);
    } else {
      error = std::string(info.status().message());
    }
  }
  if (opts.json) {
    Json j = {{"embedded", true},
              {"running", st->running},
              {"pid", st->running ? Json(st->pid) : Json()},
              {"port", st->port > 0 ? Json(st->port) : Json()},
              {"socket", st->socket_path},
              {"data_dir", st->data_dir},
              {"bootstrapped", st->bootstrapped},
              {"version", st->version.empty() ? Json() : Json(st->version)},
              {"schema_version", version ? Json(*version) : Json()},
              {"log", st->log_path}};
    if (!error.empty()) j["error"] = error;
    std::cout << JsonText(j) << "\n";
    return 0;
  }
  std::cout << "running:        " << (st->running ? "yes" : "no") << "\n";
  if (st->running) std::cout << "pid:            " << st->pid << "\n";
  if (st->port > 0) std::cout << "port:           " << st->port << "\n";
  std::cout << "socket:         " << st->socket_path << "\n"
            << "data dir:       " << st->data_dir
            << (st->bootstrapped ? "" : " (not created yet)") << "\n";
  if (!st->version.empty()) std::cout << "version:        " << st->version << "\n";
  if (version) {
    std::cout << "schema version: " << *version << "\n";
  } else if (!error.empty()) {
    std::cout << "schema version: unknown (" << error << ")\n";
  }
  std::cout << "log:            " << st->log_path << "\n";
  return 0;
}

int Migrate(const GlobalOptions& global, const DbOptions& opts) {
  if (!global.db_error.ok()) return Fail("migrate", global.db_error);
  if (global.external_db) return RunMigrations(*global.external_db);
  EmbeddedServer server(ServerOptions(global, opts));
  auto started = server.Start();  // no-op when running
  if (!started.ok()) return Fail("migrate", started.status());
  if (!started->already_running) {
    std::cout << "started MariaDB " << started->status.version << " (pid "
              << started->status.pid << ", port " << started->status.port << ")\n";
  }
  auto info = server.Connection();
  if (!info.ok()) return Fail("migrate", info.status());
  return RunMigrations(*info);
}

}  // namespace

void AddDbCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "db", "manage the embedded MariaDB (start, stop, status) and the schema (migrate)");
  cmd->require_subcommand(1);
  // Global options (--data-dir, --db, --log-level) may also follow the subcommand:
  // `tuna db start --data-dir D`.
  cmd->fallthrough();
  auto opts = std::make_shared<DbOptions>();
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;

  auto add_server_options = [opts](CLI::App* sub) {
    sub->add_option("--port", opts->port,
                    "loopback TCP port of the embedded server (default: remembered, else a free "
                    "one)")
        ->check(CLI::Range(0, 65535));
    sub->add_option("--socket", opts->socket,
                    "unix socket of the embedded server (default: <data-dir>/mariadbd.sock)");
  };

  CLI::App* start = cmd->add_subcommand(
      "start", "bootstrap (first time), start the embedded server and apply migrations");
  add_server_options(start);
  start->add_flag("--no-migrate", opts->no_migrate, "do not apply schema migrations");
  start->fallthrough();
  start->callback([=] { *selected = [=] { return Start(*global, *opts); }; });

  CLI::App* stop = cmd->add_subcommand("stop", "stop the embedded server (clean shutdown)");
  stop->fallthrough();
  stop->callback([=] { *selected = [=] { return Stop(*global, *opts); }; });

  CLI::App* status = cmd->add_subcommand(
      "status", "show whether the server runs, its pid, port, version and schema version");
  add_server_options(status);
  status->add_flag("--json", opts->json, "print one JSON object");
  status->fallthrough();
  status->callback([=] { *selected = [=] { return Status(*global, *opts); }; });

  CLI::App* migrate = cmd->add_subcommand(
      "migrate", "apply schema migrations (starts the embedded server when no --db)");
  add_server_options(migrate);
  migrate->fallthrough();
  migrate->callback([=] { *selected = [=] { return Migrate(*global, *opts); }; });
}

}  // namespace tuna::cli
