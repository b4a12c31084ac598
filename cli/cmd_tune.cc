#include "cli/command.h"

namespace tuna::cli {

void AddTuneCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("tune", "tune problems on this machine");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("tune", "In-process tuner"); }; });
}

}  // namespace tuna::cli
