#include "cli/command.h"

namespace tuna::cli {

void AddDbCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("db", "manage the embedded MariaDB: start, stop, status, migrate");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("db", "Foundation"); }; });
}

}  // namespace tuna::cli
