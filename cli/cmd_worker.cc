#include "cli/command.h"

namespace tuna::cli {

void AddWorkerCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("worker", "lease and run jobs from a coordinator");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("worker", "Distributed execution"); }; });
}

}  // namespace tuna::cli
