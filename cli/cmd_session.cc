#include "cli/command.h"

namespace tuna::cli {

void AddSessionCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("session", "create or list tuning sessions");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("session", "Tuning database"); }; });
}

}  // namespace tuna::cli
