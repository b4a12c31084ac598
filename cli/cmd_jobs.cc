#include "cli/command.h"

namespace tuna::cli {

void AddJobsCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("jobs", "load or reset jobs");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("jobs", "Tuning database"); }; });
}

}  // namespace tuna::cli
