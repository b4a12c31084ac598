#include "cli/command.h"

namespace tuna::cli {

void AddDevicesCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("devices", "list backends and devices");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("devices", "In-process tuner"); }; });
}

}  // namespace tuna::cli
