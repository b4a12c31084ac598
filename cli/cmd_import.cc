// `tuna import -t TAG -f FILE [--mark_recurrent]` and `tuna import-db --session_id N FILE`
// (MITuna's import_configs and import_db; admin/import_configs.h, admin/import_db.h).
#include <chrono>
#include <iostream>
#include <memory>

#include "absl/strings/str_join.h"
#include "admin/import_configs.h"
#include "admin/import_db.h"
#include "cli/command.h"
#include "cli/terminal_text.h"
#include "cli/db_access.h"
#include "cli/json_text.h"
#include "cli/progress.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct ImportFlags {
  std::string tag;
  std::string file;
  bool mark_recurrent = false;
  bool json = false;
};

struct ImportDbFlags {
  int64_t session_id = 0;
  std::string file;
  std::string tag;
  bool skip_invalid = false;
  double sqlite_timeout_s = 60;
  bool json = false;
};

int RunImport(const GlobalOptions& global, const ImportFlags& f) {
  Progress progress("import", StderrProgressOptions(global.progress));
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return progress.Fail(db.status());
  admin::ImportOptions o;
  o.tag = f.tag;
  o.mark_recurrent = f.mark_recurrent;
  o.progress = progress.StageCallback();
  auto r = admin::ImportDriverFile(**db, f.file, o);
  if (!r.ok()) return progress.Fail(r.status());
  progress.Finish();
  PrintReport(f.json,
              {{"tag", f.tag},
               {"lines", r->lines},
               {"problems", r->problems},
               {"configs_new", r->configs_new},
               {"configs_known", r->configs_known},
               {"tags_added", r->tags_added},
               {"transposed", r->transposed}},
              progress.Seconds(), [&] {
                std::cout << "lines read:     " << r->lines << " (" << r->problems << " problems, "
                          << r->unique_configs << " distinct)\n";
                if (r->transposed > 0) {
                  std::cout << "transposed:     " << r->transposed
                            << " (stored as the convolutions MIOpen runs them as: same db keys)\n";
                }
                std::cout << "configs new:    " << r->configs_new << "\n"
                          << "configs known:  " << r->configs_known << "\n"
                          << "tags added:     " << r->tags_added << " (tag " << f.tag << ")\n"
                          << "time:           " << FormatDuration(progress.Seconds()) << "\n";
              });
  return 0;
}

int RunImportDb(const GlobalOptions& global, const ImportDbFlags& f) {
  Progress progress("import-db", StderrProgressOptions(global.progress));
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) return progress.Fail(db.status());
  admin::ImportDbOptions o;
  o.session_id = f.session_id;
  o.path = f.file;
  if (!f.tag.empty()) o.tag = f.tag;
  o.skip_invalid = f.skip_invalid;
  o.sqlite_timeout = std::chrono::milliseconds(static_cast<int64_t>(f.sqlite_timeout_s * 1000));
  o.progress = progress.StageCallback();
  auto r = admin::ImportMiopenDb(**db, solver::SolverRegistry::Builtin(), o);
  if (!r.ok()) return progress.Fail(r.status());
  progress.Finish();
  PrintReport(f.json,
              {{"format", r->format},
               {"keys", r->keys},
               {"entries", r->entries},
               {"skipped", r->skipped},
               {"configs_new", r->configs_new},
               {"configs_known", r->configs_known},
               {"solvers_added", r->solvers_added},
               {"results_added", r->results_added},
               {"results_existing", r->results_existing},
               {"unknown_solvers", r->unknown_solvers}},
              progress.Seconds(), [&] {
                std::cout << (r->format == "find" ? "find db" : "perf db") << " " << f.file << "\n"
                          << "keys:             " << r->keys << (r->skipped ? " (" : "")
                          << (r->skipped ? std::to_string(r->skipped) + " invalid skipped)" : "") << "\n"
                          << "entries:          " << r->entries << "\n"
                          << "configs new:      " << r->configs_new << "\n"
                          << "configs known:    " << r->configs_known << "\n"
                          << "results new:      " << r->results_added << "\n"
                          << "results existing: " << r->results_existing << "\n"
                          << "solvers added:    " << r->solvers_added << " (" << r->unknown_solvers.size()
                          << " not in the registry, stored with valid=0)\n"
                          << "time:             " << FormatDuration(progress.Seconds()) << "\n";
              });
  return 0;
}

}  // namespace

void AddImportCommands(CLI::App& app, CommandContext ctx) {
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;

  auto f = std::make_shared<ImportFlags>();
  CLI::App* imp = app.add_subcommand(
      "import", "import MIOpenDriver command lines under a tag (one transaction: a bad line "
                "imports nothing)");
  imp->add_option("-t,--tag", f->tag, "tag for the imported configs")->required();
  imp->add_option("-f,--file_name,--file", f->file, "file of MIOpenDriver lines")
      ->required()
      ->check(CLI::ExistingFile);
  imp->add_flag("--mark_recurrent", f->mark_recurrent, "mark the tagged configs recurrent");
  imp->add_flag("--json", f->json, "print the counts as one JSON object");
  imp->callback([=] { *selected = [=] { return RunImport(*global, *f); }; });

  auto d = std::make_shared<ImportDbFlags>();
  CLI::App* idb = app.add_subcommand(
      "import-db", "import an existing MIOpen find db (.fdb.txt) or perf db (.db, .db.txt) into a "
                   "session's results");
  AddSessionIdOption(idb, &d->session_id, "session that receives the results");
  idb->add_option("file,--target_file", d->file, "FILE.fdb.txt, FILE.db or FILE.db.txt")->required()->check(CLI::ExistingFile);
  idb->add_option("-t,--tag", d->tag, "also tag the imported configs");
  idb->add_flag("--skip_invalid", d->skip_invalid,
                "skip unparsable lines/keys (default: report them all and import nothing)");
  idb->add_option("--sqlite-timeout", d->sqlite_timeout_s,
                  "seconds a perf db may take to read before the import is aborted (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  idb->add_flag("--json", d->json, "print the counts as one JSON object");
  idb->callback([=] { *selected = [=] { return RunImportDb(*global, *d); }; });
}

}  // namespace tuna::cli
