#include "cli/command.h"

namespace tuna::cli {

void AddCoordinatorCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("coordinator", "serve jobs to workers over gRPC");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("coordinator", "Distributed execution"); }; });
}

}  // namespace tuna::cli
