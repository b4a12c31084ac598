// `tuna solvers update | list [--json]` (MITuna's --update_solvers / --list_solvers).
#include <iostream>
#include <memory>

#include "admin/solver_records.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "cli/terminal_text.h"
#include "schema/store/solver_store.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

int Fail(const std::string& what, const absl::Status& st) {
  std::cerr << "tuna solvers " << what << ": " << st.message() << "\n";
  return 1;
}

int Update(const GlobalOptions& global, bool json) {
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return Fail("update", db.status());
  schema::SolverStore store(**db);
  auto c = store.Sync(admin::SolverRecords(solver::SolverRegistry::Builtin()));
  if (!c.ok()) return Fail("update", c.status());
  if (json) {
    std::cout << JsonText({{"added", c->added},
                           {"updated", c->updated},
                           {"unchanged", c->unchanged},
                           {"invalidated", c->invalidated}})
              << "\n";
  } else {
    std::cout << "solvers added: " << c->added << ", updated: " << c->updated
              << ", unchanged: " << c->unchanged << ", marked invalid: " << c->invalidated
              << "\n";
  }
  return 0;
}

Json SolverJson(const schema::SolverRecord& s) {
  return {{"id", s.id},
          {"name", s.name},
          {"tunable", s.tunable},
          {"directions", s.directions},
          {"is_dynamic", s.is_dynamic},
          {"valid", s.valid}};
}

int List(const GlobalOptions& global, bool json) {
  auto rows = ListRows<schema::SolverStore>(global);
  if (!rows.ok()) return Fail("list", rows.status());
  auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  PrintRows(*rows, json, SolverJson, {"id", "name", "tunable", "dirs", "dynamic", "valid"},
            {9, 44, 9, 6, 9}, [&](const schema::SolverRecord& s) {
              return std::vector<std::string>{std::to_string(s.id), s.name, yes_no(s.tunable),
                                              s.directions, yes_no(s.is_dynamic), yes_no(s.valid)};
            });
  return 0;
}

}  // namespace

void AddSolversCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("solvers", "the solver table (registry -> database)");
  cmd->require_subcommand(1);
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;
  auto json = std::make_shared<bool>(false);
  CLI::App* update = cmd->add_subcommand(
      "update", "write this binary's solver registry into the solver table (idempotent; solvers "
                "no longer registered are marked invalid, never deleted)");
  update->add_flag("--json", *json, "print the counts as JSON");
  update->callback([=] { *selected = [=] { return Update(*global, *json); }; });
  CLI::App* list = cmd->add_subcommand("list", "list the solver table");
  list->add_flag("--json", *json, "print one JSON array");
  list->callback([=] { *selected = [=] { return List(*global, *json); }; });
}

}  // namespace tuna::cli
