// `tuna applicability update --session_id N [-t TAG] [--threads N]` (MITuna's
// --update_applicability; admin/applicability.h).
#include <iostream>
#include <memory>

#include "admin/applicability.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "cli/progress.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct Flags {
  int64_t session_id = 0;
  std::string tag;
  int threads = 0;
  bool json = false;
};

int Update(const GlobalOptions& global, const Flags& f) {
  Progress progress("applicability update", StderrProgressOptions(global.progress));
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return progress.Fail(db.status());
  admin::ApplicabilityOptions o;
  o.session_id = f.session_id;
  if (!f.tag.empty()) o.tag = f.tag;
  o.threads = f.threads;
  o.progress = progress.StageCallback();
  auto r = admin::UpdateApplicability(**db, solver::SolverRegistry::Builtin(), o);
  if (!r.ok()) return progress.Fail(r.status());
  progress.Finish();
  PrintReport(f.json,
              {{"session_id", f.session_id},
               {"configs", r->configs},
               {"solvers", r->solvers},
               {"applicable", r->applicable},
               {"not_applicable", r->not_applicable},
               {"configs_without_solver", static_cast<int64_t>(r->unsolved.size())}},
              progress.Seconds(), [&] {
                std::cout << "session " << f.session_id << ": " << r->configs << " configs x " << r->solvers
                          << " solvers\n"
                          << "applicable:     " << r->applicable << "\n"
                          << "not applicable: " << r->not_applicable << "\n"
                          << "time:           " << FormatDuration(progress.Seconds()) << " ("
                          << FormatDuration(r->compute_seconds) << " checking, "
                          << FormatDuration(r->store_seconds) << " storing)\n";
                if (!r->unsolved.empty()) std::cout << "no solver applies to " << r->unsolved.size() << " config(s):\n";
                for (const std::string& u : r->unsolved) std::cout << "  " << u << "\n";
              });
  return 0;
}

}  // namespace

void AddApplicabilityCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("applicability", "which solver can run which config");
  cmd->require_subcommand(1);
  auto f = std::make_shared<Flags>();
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;
  CLI::App* update = cmd->add_subcommand(
      "update", "compute every solver x config for the session's target (all cores) and store "
                "it with the reason for 'no'");
  AddSessionIdOption(update, &f->session_id, "session");
  update->add_option("-t,--tag,-l,--label", f->tag,
                     "only configs with this tag (default: all; -l/--label: MITuna's spelling)");
  update->add_option("--threads", f->threads, "worker threads (default: all cores)");
  update->add_flag("--json", f->json, "print the counts as JSON");
  update->callback([=] { *selected = [=] { return Update(*global, *f); }; });
}

}  // namespace tuna::cli
