// `tuna merge -m INTO -t FROM [-o OUT] [--across-cu] [--top N]` (MITuna's merge_db): one perf
// db, find db or kernel db file merged into another of the same kind, keeping the faster entry
// (exporter/merge_files.h). Exit codes: 0 written; 1 error; 2 bad arguments or mismatched files.
#include <iostream>
#include <memory>
#include <string>

#include "cli/command.h"
#include "cli/terminal_text.h"
#include "exporter/merge_files.h"

namespace tuna::cli {
namespace {

int RunMerge(const exporter::MergeFilesOptions& o) {
  auto report = exporter::MergeDbFiles(o);
  if (!report.ok()) {
    std::cerr << "tuna merge: " << report.status().message() << "\n";
    return absl::IsInvalidArgument(report.status()) ? 2 : 1;
  }
  for (const auto& w : report->warnings) std::cerr << "warning: " << EscapeControlBytes(w) << "\n";
  for (const auto& w : report->file.warnings) {
    std::cerr << "warning: " << EscapeControlBytes(w) << "\n";
  }
  const auto& f = report->file;
  const auto& m = f.merge;
  std::cout << exporter::DbFileKindName(report->kind) << " " << f.path << ": " << f.keys
            << " keys, " << f.entries << " entries (" << m.added << " added, " << m.improved
            << " improved, " << m.unchanged << " unchanged, " << m.kept << " kept";
  if (m.replaced_untimed) std::cout << ", " << m.replaced_untimed << " replaced without a time";
  if (m.replaced) std::cout << ", " << m.replaced << " replaced";
  std::cout << ")\n";
  return 0;
}

}  // namespace

void AddMergeCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "merge", "merge one perf db (.db), find db (.fdb.txt) or kernel db (.kdb) into another");
  auto o = std::make_shared<exporter::MergeFilesOptions>();
  cmd->add_option("-m,--master_file,--into", o->into, "the file merged into")->required();
  cmd->add_option("-t,--target_file,--from", o->from, "the file merged into it")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", o->output, "write the result here (default: over -m)");
  cmd->add_flag("--across-cu,--across_cu", o->across_cu,
                "allow files of different CU counts of the same arch");
  cmd->add_option("--top", o->top_n, "find db entries per key (0 = all)")->capture_default_str();
  cmd->add_option("--master-find-db", o->into_find_db,
                  "perf db: find db timing -m's rows (default: <base>.*.fdb.txt beside it)");
  cmd->add_option("--target-find-db", o->from_find_db,
                  "perf db: find db timing -t's rows (default: <base>.*.fdb.txt beside it)");
  cmd->footer(
      "Per key and solver the faster entry is kept. A perf db has no times: each row is timed "
      "by the find db beside its file; a -t row replaces an -m row that is slower or untimed.");
  CommandFn* selected = ctx.selected;
  cmd->callback([o, selected] { *selected = [o] { return RunMerge(*o); }; });
}

}  // namespace tuna::cli
