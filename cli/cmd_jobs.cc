// `tuna jobs load --session_id N -t TAG --fin_steps STEPS [-o] [-l LABEL] [-s SOLVERS]` and
// `tuna jobs reset --session_id N --state STATES [-t TAG]` (MITuna's load_job; admin/job_loader.h).
#include <iostream>
#include <memory>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "admin/job_loader.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "cli/progress.h"
#include "jobs/job_state.h"
#include "schema/store/job_store.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct LoadFlags {
  int64_t session_id = 0;
  std::string tag;
  std::string fin_steps;
  bool only_applicable = false;
  std::string label;
  std::string solvers;
  bool json = false;
};

struct ResetFlags {
  int64_t session_id = 0;
  std::string states;
  std::string tag;
  bool json = false;
};

std::vector<std::string> SplitList(const std::string& s) {
  return absl::StrSplit(s, ',', absl::SkipWhitespace());
}

int Load(const GlobalOptions& global, const LoadFlags& f) {
  Progress progress("jobs load", StderrProgressOptions(global.progress));
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return progress.Fail(db.status());
  admin::LoadJobsOptions o;
  o.session_id = f.session_id;
  o.tag = f.tag;
  o.fin_steps = SplitList(f.fin_steps);
  o.only_applicable = f.only_applicable;
  o.label = f.label;
  o.solvers = SplitList(f.solvers);
  o.progress = progress.StageCallback();
  auto r = admin::LoadJobs(**db, solver::SolverRegistry::Builtin(), o);
  if (!r.ok()) return progress.Fail(r.status());
  progress.Finish();
  PrintReport(f.json,
              {{"session_id", f.session_id},
               {"configs", r->configs},
               {"solvers", r->solvers},
               {"new", r->added},
               {"existing", r->existing},
               {"skipped_not_tunable", r->skipped_not_tunable}},
              progress.Seconds(), [&] {
                std::cout << "session " << f.session_id << ", " << r->configs << " configs x " << r->solvers
                          << " solvers, kinds " << absl::StrJoin(r->kinds, ",") << "\n"
                          << "jobs new:      " << r->added << "\n"
                          << "jobs existing: " << r->existing << "\n";
                if (r->skipped_not_tunable > 0) {
                  std::cout << "no perf job for " << r->skipped_not_tunable
                            << " (config, non-tunable solver) pairs\n";
                }
                std::cout << "time:          " << FormatDuration(progress.Seconds()) << "\n";
              });
  return 0;
}

int Reset(const GlobalOptions& global, const ResetFlags& f) {
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) {
    std::cerr << "tuna jobs reset: " << db.status().message() << "\n";
    return 1;
  }
  schema::JobStore store(**db);
  std::optional<std::string> tag;
  if (!f.tag.empty()) tag = f.tag;
  auto n = store.Reset(f.session_id, SplitList(f.states), tag);
  if (!n.ok()) {
    std::cerr << "tuna jobs reset: " << n.status().message() << "\n";
    return 1;
  }
  if (f.json) {
    std::cout << JsonText({{"session_id", f.session_id}, {"reset", *n}}) << "\n";
  } else {
    std::cout << "jobs reset to new: " << *n << "\n";
  }
  return 0;
}

}  // namespace

void AddJobsCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("jobs", "load and reset tuning jobs");
  cmd->require_subcommand(1);
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;

  auto l = std::make_shared<LoadFlags>();
  CLI::App* load = cmd->add_subcommand(
      "load", "one job per tagged config x solver x kind (idempotent; non-tunable solvers get "
              "no perf job)");
  AddSessionIdOption(load, &l->session_id, "session");
  load->add_option("-t,--tag", l->tag, "configs with this tag")->required();
  load->add_option("--fin_steps", l->fin_steps,
                   "miopen_perf_compile,miopen_perf_eval (perf jobs) and/or "
                   "miopen_find_compile,miopen_find_eval (find jobs)")
      ->required();
  load->add_flag("-o,--only_applicable", l->only_applicable,
                 "only solvers found applicable by `tuna applicability update` (default: every "
                 "solver of the config's direction)");
  load->add_option("-l,--label", l->label, "label stored with the jobs");
  load->add_option("-s,--solvers", l->solvers, "only these solvers (comma-separated names)");
  load->add_flag("--json", l->json, "print the counts as JSON");
  load->callback([=] { *selected = [=] { return Load(*global, *l); }; });

  auto r = std::make_shared<ResetFlags>();
  CLI::App* reset = cmd->add_subcommand(
      "reset", "move jobs in the given states back to new (lease and retries cleared)");
  AddSessionIdOption(reset, &r->session_id, "session");
  reset->add_option("--state", r->states,
                    "comma-separated states, e.g. errored,failed (any of: " +
                        absl::StrJoin(jobs::AllJobStates(), ", ",
                                      [](std::string* out, jobs::JobState s) {
                                        out->append(jobs::ToString(s));
                                      }) + ")")
      ->required();
  reset->add_option("-t,--tag", r->tag, "only configs with this tag");
  reset->add_flag("--json", r->json, "print the count as JSON");
  reset->callback([=] { *selected = [=] { return Reset(*global, *r); }; });
}

}  // namespace tuna::cli
