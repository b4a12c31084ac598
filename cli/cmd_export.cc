#include "cli/command.h"

namespace tuna::cli {

void AddExportCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("export", "write MIOpen perf db, find db and kernel db");
  cmd->allow_extras();
  cmd->callback([ctx] { *ctx.selected = [] { return NotImplemented("export", "Exporter"); }; });
}

}  // namespace tuna::cli
