#include "cli/command.h"

namespace tuna::cli {

void AddApplicabilityCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("applicability", "compute solver applicability for a session");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("applicability", "Tuning database"); }; });
}

}  // namespace tuna::cli
