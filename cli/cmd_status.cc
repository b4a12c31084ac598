#include "cli/command.h"

namespace tuna::cli {

void AddStatusCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("status", "show job progress");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("status", "Tuning database"); }; });
}

}  // namespace tuna::cli
