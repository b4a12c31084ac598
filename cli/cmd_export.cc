// `tuna export (--session_id N | --golden_v N) [-p] [-f] [-k] [-o DIR] [--merge-into DIR]
// [--heuristics] ...`: a session's verified results (or a golden version's) as MIOpen's perf db,
// find db and kernel db (exporter/exporter.h), and with --heuristics the learned models beside
// them (heuristics/heuristics.h).
// Exit codes: 0 written; 1 error; 2 bad arguments; 3 refused by --require-complete.
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/terminal_text.h"
#include "cli/progress.h"
#include "exporter/exporter.h"
#include "exporter/registry_algorithms.h"
#include "cli/version.h"
#include "heuristics/heuristics.h"
#include "schema/migrate/migrate.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct ExportArgs {
  int64_t session_id = 0;
  int64_t golden_v = -1;
  bool perf = false, find = false, kernel = false;
  std::string output_dir;
  std::string merge_dir;
  std::string arch;
  uint32_t num_cu = 0;
  bool require_complete = false;
  size_t top_n = 4;
  bool heuristics = false;
  std::string perf_db_format = "sqlite";  // sqlite, txt or both
};

// The schema versions that added result_store's `verified` columns and conv_config.pad_mode.
constexpr int kVerifiedMigration = 3;
// The schema version that added golden_result.
constexpr int kGoldenMigration = 5;
constexpr int kPadModeMigration = 6;

void PrintFile(const char* what, const exporter::FileReport& f) {
  if (!f.written) return;
  std::cout << what << f.path << ": " << f.keys << " keys, " << f.entries << " entries";
  const auto& m = f.merge;
  if (f.merged) {
    std::cout << " (merged: " << m.added << " added, " << m.improved << " improved, "
              << m.unchanged << " unchanged, " << m.kept << " kept";
    if (m.replaced_untimed) std::cout << ", " << m.replaced_untimed << " replaced without a time";
    if (m.replaced) std::cout << ", " << m.replaced << " replaced";
    std::cout << ")";
  }
  std::cout << "\n";
  for (const auto& w : f.warnings) std::cerr << "warning: " << EscapeControlBytes(w) << "\n";
}

// --heuristics: the solver picker and perf-config predictors trained on all of the session's
// configs, written beside its db files under the same basename (after them: a failure here leaves
// the db files written and exits 1).
int ExportHeuristics(schema::Database& db, const ExportArgs& args, const std::string& dir,
                     const std::string& basename) {
  heuristics_cli::TrainRequest req;
  req.sessions = {args.session_id};
  req.output_dir = dir;
  req.basename = basename;
  req.options.holdout = 0;
  req.options.tuna_version = TunaVersion();
  absl::StatusOr<heuristics_cli::TrainOutcome> out = heuristics_cli::TrainFromSessions(db, req);
  if (!out.ok()) {
    std::cerr << "tuna export: heuristics: " << EscapeControlBytes(out.status().message()) << "\n";
    return 1;
  }
  for (const std::string& f : out->files) std::cout << "heuristics " << f << "\n";
  return 0;
}

int RunExport(const GlobalOptions& global, const ExportArgs& args) {
  Progress progress("export", StderrProgressOptions(global.progress));
  auto db = OpenCommandDatabase(global, DbAccessOptions{.pool_size = 1, .migrate = false});
  if (!db.ok()) return progress.Fail(db.status());
  if (auto st = schema::RequireMigration(**db, kVerifiedMigration, "result verification");
      !st.ok()) {
    return progress.Fail(st);
  }
  if (auto st = schema::RequireMigration(**db, kPadModeMigration, "config pad mode"); !st.ok()) {
    return progress.Fail(st);
  }
  if (args.golden_v >= 0) {
    if (auto st = schema::RequireMigration(**db, kGoldenMigration, "golden versions"); !st.ok()) {
      return progress.Fail(st);
    }
  }

  exporter::ExportOptions o;
  o.session_id = args.session_id;
  if (args.golden_v >= 0) o.golden_v = args.golden_v;
  const bool all = !args.perf && !args.find && !args.kernel;
  o.formats.clear();
  if (all || args.perf) {
    if (args.perf_db_format != "txt") o.formats.insert(exporter::ExportFormat::kPerfDb);
    if (args.perf_db_format != "sqlite") o.formats.insert(exporter::ExportFormat::kPerfDbText);
  }
  if (all || args.find) o.formats.insert(exporter::ExportFormat::kFindDb);
  if (all || args.kernel) o.formats.insert(exporter::ExportFormat::kKernelDb);
  o.merge_dir = args.merge_dir;
  // With only --merge-into, the merged files replace the ones merged into.
  o.output_dir = !args.output_dir.empty() ? args.output_dir
                 : !args.merge_dir.empty() ? args.merge_dir
                                           : ".";
  if (!args.arch.empty()) o.arch = args.arch;
  if (args.num_cu > 0) o.num_cu = args.num_cu;
  o.require_complete = args.require_complete;
  o.top_n = args.top_n;
  o.algorithm_for = exporter::RegistryAlgorithmResolver(solver::SolverRegistry::Builtin());
  o.progress = progress.StageCallback();

  auto report = exporter::ExportSession(**db, o);
  if (!report.ok()) {
    progress.Fail(report.status());
    return absl::IsFailedPrecondition(report.status()) && args.require_complete ? 3 : 1;
  }
  progress.Finish();
  if (report->unfinished_jobs > 0) {
    std::cerr << "warning: session " << args.session_id << " has " << report->unfinished_jobs
              << " unfinished jobs; exported what is done. Jobs by state:";
    for (const auto& j : report->jobs) std::cerr << " " << j.kind << "/" << j.state << "=" << j.count;
    std::cerr << "\n";
  }
  const auto excluded = [](const schema::ResultCounts& c) { return c.total - c.exportable; };
  if (excluded(report->find_results) || excluded(report->perf_results)) {
    std::cerr << "note: not exported (unverified, untimed or invalid solver): "
              << excluded(report->find_results) << " find results, "
              << excluded(report->perf_results) << " perf results\n";
  }
  if (report->skipped_bad_config || report->skipped_unknown_solver) {
    std::cerr << "warning: skipped " << report->skipped_bad_config
              << " results of unusable configs, " << report->skipped_unknown_solver
              << " find results of solvers without an algorithm\n";
  }
  for (const auto& w : report->warnings) std::cerr << "warning: " << EscapeControlBytes(w) << "\n";
  if (args.golden_v >= 0) {
    std::cout << "golden version " << args.golden_v;
  } else {
    std::cout << "session " << args.session_id;
  }
  std::cout << " (" << report->session.arch << ", "
            << report->session.num_cu << " CUs, " << report->session.backend << ") -> "
            << report->basename << "\n";
  PrintFile("perf db   ", report->perf);
  PrintFile("perf db   ", report->perf_text);
  PrintFile("find db   ", report->find);
  PrintFile("kernel db ", report->kernel);
  std::cout << "time      " << FormatDuration(progress.Seconds()) << "\n";
  return args.heuristics ? ExportHeuristics(**db, args, o.output_dir, report->basename) : 0;
}

}  // namespace

void AddExportCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "export", "write MIOpen perf db, find db and kernel db from a session's verified results");
  auto args = std::make_shared<ExportArgs>();
  auto* session = AddSessionIdOption(cmd, &args->session_id, "session to export", false);
  auto* golden = cmd->add_option("--golden_v,--golden-v", args->golden_v,
                                 "export golden version N instead of a session (tuna golden)")
                     ->check(CLI::NonNegativeNumber);
  golden->excludes(session);
  cmd->add_flag("-p,--perf_db", args->perf,
                "write the perf db (<base>.db, <base>.db.txt: see --perf-db-format)");
  cmd->add_flag("-f,--find_db", args->find, "write the find db <base>.<BACKEND>.fdb.txt");
  cmd->add_flag("-k,--kern_db", args->kernel, "write the kernel db <base>.kdb");
  cmd->footer("Without -p/-f/-k all three files are written. Exit code 3: refused by "
              "--require-complete.");
  cmd->add_option("-o,--output", args->output_dir,
                  "output directory (default: the --merge-into directory, else .)");
  cmd->add_option("--merge-into", args->merge_dir,
                  "merge into the files of the same names in DIR, keeping the faster entry");
  cmd->add_option("-a,--arch", args->arch, "override the session's arch in file names and -mcpu");
  cmd->add_option("-n,--num_cu,--num-cu", args->num_cu, "override the session's CU count")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--require-complete", args->require_complete,
                "refuse (exit 3) while jobs of the session are unfinished");
  cmd->add_flag("--heuristics", args->heuristics,
                "also train the heuristics models (solver picker, perf-config predictors) on the "
                "session and write them beside the db files");
  cmd->add_option("--perf-db-format,--perf_db_format", args->perf_db_format,
                  "the perf db as MIOpen's SQLite <base>.db, its text <base>.db.txt (MIOpen "
                  "built without SQLite perf dbs, ROCm >= 6.2's default) or both")
      ->capture_default_str()
      ->check(CLI::IsMember({"sqlite", "txt", "both"}));
  cmd->add_option("--top", args->top_n, "find db entries per problem (0 = all)")
      ->capture_default_str();
  const GlobalOptions* global = ctx.global;
  cmd->callback([ctx, args, global] {
    *ctx.selected = [args, global] {
      if (args->session_id <= 0 && args->golden_v < 0) {
        std::cerr << "tuna export: give --session_id N or --golden_v N\n";
        return 2;
      }
      return RunExport(*global, *args);
    };
  });
}

}  // namespace tuna::cli
