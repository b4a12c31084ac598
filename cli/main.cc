// The `tuna` binary: global flags, then one subcommand (see cli/command.h).
#include <cstdlib>
#include <functional>
#include <iostream>

#include "absl/synchronization/mutex.h"
#include "cli/command.h"
#include "cli/logging.h"
#include "cli/version.h"
#include "spdlog/spdlog.h"

namespace {

// The database of every subcommand, once: --db > TUNA_DB > TUNA_DB_* > ~/.my.cnf > embedded
// (schema::ResolveDatabase). A bad URL or environment is kept in `global` and reported by the
// commands that open the database (tuna driver, devices, worker never need one).
void ResolveDatabase(tuna::cli::GlobalOptions& global) {
  const char* home = std::getenv("HOME");
  auto resolved = tuna::schema::ResolveDatabase(
      global.db_url, home != nullptr && *home != '\0' ? std::string(home) + "/.my.cnf" : "");
  if (!resolved.ok()) {
    global.db_error = resolved.status();
    return;
  }
  global.external_db = resolved->external;
  if (global.external_db) {
    spdlog::debug("database {} (from {})", global.external_db->Redacted(), resolved->source);
  }
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tuna::cli;
  // Debian's Abseil is built with absl::Mutex's lock-order (deadlock) detection on: a graph
  // update on every lock, ~7 % of the coordinator's CPU per lease in bench/queue (2026-12-02:
  // 3,732-3,835 -> 3,965-4,041 leases/s). Tests keep it (they do not run this main).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"tuna: distributed convolution kernel tuning with MIOpen-compatible databases"};
  app.require_subcommand(0, 1);
  // Global flags are accepted after the subcommand too (`tuna status --session_id 1 --db URL`):
  // the subcommands, which inherit this, hand options they do not know to this parser.
  app.fallthrough();
  GlobalOptions global;
  app.add_option("--log-level", global.log_level,
                 "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  app.add_option("--log-format", global.log_format, "text or json")->capture_default_str();
  app.add_option("--log-file", global.log_file,
                 "write logs to this file (appended) and only warnings and errors to stderr "
                 "(`tune -f` does this by default, to OUTPUT_DIR/tune.log)");
  app.add_option("--db", global.db_url,
                 "external server mysql://user@host:port/db (password from TUNA_DB_PASSWORD or "
                 "an option file); default: $TUNA_DB, else MITuna's TUNA_DB_HOSTNAME, "
                 "TUNA_DB_NAME, TUNA_DB_USER_NAME, TUNA_DB_USER_PASSWORD, else ~/.my.cnf when "
                 "it names a database, else the embedded server");
  app.add_option("--data-dir", global.data_dir,
                 "data directory of the embedded MariaDB (default: $XDG_STATE_HOME/tuna/mariadb)");
  app.add_option("--progress", global.progress,
                 "progress of long commands on stderr: auto (a bar redrawn in place when stderr "
                 "is a terminal, else a plain line every few seconds), bar, plain or off")
      ->check(CLI::IsMember({"auto", "bar", "plain", "off"}))
      ->capture_default_str();
  app.set_version_flag("--version", tuna::VersionLine());

  CommandFn selected;
  CommandContext ctx{&global, &selected};
  AddDbCommand(app, ctx);
  AddProblemCommand(app, ctx);
  AddImportCommands(app, ctx);
  AddSolversCommand(app, ctx);
  AddSessionCommand(app, ctx);
  AddApplicabilityCommand(app, ctx);
  AddJobsCommand(app, ctx);
  AddStatusCommand(app, ctx);
  AddCoordinatorCommand(app, ctx);
  AddWorkerCommand(app, ctx);
  AddExportCommand(app, ctx);
  AddTuneCommand(app, ctx);
  AddDriverCommand(app, ctx);
  AddDevicesCommand(app, ctx);
  AddGoldenCommand(app, ctx);
  AddMergeCommand(app, ctx);
  AddReportCommand(app, ctx);
  AddHeuristicsCommand(app, ctx);
  // Commands that take a MIOpenDriver line as it is (prefix_command: `driver`, `problem parse`)
  // keep every flag after its first word: none falls through to the global flags.
  std::function<void(CLI::App*)> keep_driver_flags = [&](CLI::App* a) {
    for (CLI::App* sub : a->get_subcommands([](CLI::App*) { return true; })) {
      if (sub->get_prefix_command()) sub->fallthrough(false);
      keep_driver_flags(sub);
    }
  };
  keep_driver_flags(&app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print and succeed; a usage error exits 2, as argparse-based tools do.
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (!selected) {
    std::cout << app.help();
    return 0;
  }
  if (auto st = SetUpLogging(global.log_level, global.log_format, global.log_file); !st.ok()) {
    std::cerr << "tuna: " << st.message() << "\n";
    return 2;
  }
  ResolveDatabase(global);
  return selected();
}
