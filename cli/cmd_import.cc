#include "cli/command.h"

namespace tuna::cli {

void AddImportCommands(CLI::App& app, CommandContext ctx) {
  CLI::App* imp = app.add_subcommand("import", "import MIOpenDriver command files under a tag");
  imp->allow_extras();
  imp->callback([ctx] { *ctx.selected = [] { return NotImplemented("import", "Tuning database"); }; });
  CLI::App* idb = app.add_subcommand("import-db", "import an existing MIOpen find db or perf db");
  idb->allow_extras();
  idb->callback(
      [ctx] { *ctx.selected = [] { return NotImplemented("import-db", "Tuning database"); }; });
}

}  // namespace tuna::cli
