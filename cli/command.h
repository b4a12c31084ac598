// How subcommands plug into the `tuna` binary.
//
// Each cli/cmd_*.cc defines one Add*Command that adds its CLI11 subcommand(s) to the app.
// A subcommand's callback stores the function to run into `*selected`; main runs it after
// parsing, so every command returns an exit code instead of exiting from inside CLI11.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "schema/store/connection_info.h"

namespace tuna::cli {

// Options every subcommand sees (set before the subcommand runs).
struct GlobalOptions {
  std::string log_level = "info";
  std::string log_format = "text";
  std::string db_url;    // --db mysql://user@host:port/db as given
  // The database after the precedence --db > TUNA_DB > TUNA_DB_* > ~/.my.cnf > embedded
  // (schema::ResolveDatabase), resolved once in main: nullopt = the embedded server.
  std::optional<schema::ConnectionInfo> external_db;
  absl::Status db_error;  // why the database could not be resolved (a bad TUNA_DB, ...)
  std::string data_dir;  // --data-dir of the embedded server; empty = default state dir
  std::string progress = "auto";  // --progress auto|bar|plain|off (cli/progress.h)
  std::string log_file;           // --log-file: logs there, stderr only warnings and errors
};

using CommandFn = std::function<int()>;

// The one `--session_id N` flag of every subcommand that works on a session (also spelt
// `--session-id`): a positive id. `required` false: the flag may be left out (0 stays).
inline CLI::Option* AddSessionIdOption(CLI::App* cmd, int64_t* session_id, const std::string& help,
                                       bool required = true) {
  CLI::Option* o = cmd->add_option("--session_id,--session-id", *session_id, help)
                       ->check(CLI::PositiveNumber);
  if (required) o->required();
  return o;
}

// The command of a worker's executor child (worker/executor.h), logging as this process does:
// the same level and format, and to `log_file` when one is given.
std::vector<std::string> ExecutorArgv(const GlobalOptions& global, const std::string& log_file);

struct CommandContext {
  const GlobalOptions* global = nullptr;
  CommandFn* selected = nullptr;  // the chosen subcommand's body
};

void AddDbCommand(CLI::App& app, CommandContext ctx);
void AddProblemCommand(CLI::App& app, CommandContext ctx);
void AddImportCommands(CLI::App& app, CommandContext ctx);      // import, import-db
void AddSolversCommand(CLI::App& app, CommandContext ctx);
void AddSessionCommand(CLI::App& app, CommandContext ctx);
void AddApplicabilityCommand(CLI::App& app, CommandContext ctx);
void AddJobsCommand(CLI::App& app, CommandContext ctx);
void AddStatusCommand(CLI::App& app, CommandContext ctx);
void AddCoordinatorCommand(CLI::App& app, CommandContext ctx);
void AddWorkerCommand(CLI::App& app, CommandContext ctx);
void AddExportCommand(CLI::App& app, CommandContext ctx);
void AddTuneCommand(CLI::App& app, CommandContext ctx);
void AddDriverCommand(CLI::App& app, CommandContext ctx);
void AddDevicesCommand(CLI::App& app, CommandContext ctx);
void AddGoldenCommand(CLI::App& app, CommandContext ctx);
void AddMergeCommand(CLI::App& app, CommandContext ctx);
void AddReportCommand(CLI::App& app, CommandContext ctx);
void AddHeuristicsCommand(CLI::App& app, CommandContext ctx);  // heuristics train, eval

}  // namespace tuna::cli
