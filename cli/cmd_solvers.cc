#include "cli/command.h"

namespace tuna::cli {

void AddSolversCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("solvers", "write or list the solver registry");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("solvers", "Tuning database"); }; });
}

}  // namespace tuna::cli
