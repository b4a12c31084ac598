#include "cli/command.h"

namespace tuna::cli {

void AddProblemCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("problem", "parse MIOpenDriver lines and MIOpen db keys");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("problem", "Problem model"); }; });
}

}  // namespace tuna::cli
