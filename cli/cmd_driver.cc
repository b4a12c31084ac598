#include "cli/command.h"

namespace tuna::cli {

void AddDriverCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("driver", "run a convolution through the runtime like MIOpenDriver");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("driver", "Runtime"); }; });
}

}  // namespace tuna::cli
