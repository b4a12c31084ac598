// `tuna report --session_id S [--vs-session T | --vs-golden N] [-o report.html] [--json]`: per
// config and direction the best solver, its time, the speed-ups against the other side and
// against the default parameters, tuning time and failures (admin/report.h). Prints the table;
// -o also writes one self-contained HTML page with charts. Exit codes: 0; 1 error; 2 usage.
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "admin/report.h"
#include "admin/report_render.h"
#include "cli/command.h"
#include "cli/db_access.h"
#include "cli/json_text.h"

namespace tuna::cli {
namespace {

struct ReportArgs {
  int64_t session_id = 0;
  int64_t vs_session = 0;
  int64_t vs_golden = -1;
  std::string html;
  bool json = false;
};

Json OptJson(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

Json RowJson(const admin::ReportRow& r) {
  return {{"config_id", r.config_id},
          {"problem", r.problem},
          {"direction", r.direction},
          {"best_solver", r.best_solver},
          {"best_ms", OptJson(r.best_ms)},
          {"best_params", r.best_params},
          {"other_solver", r.other_solver},
          {"other_ms", OptJson(r.other_ms)},
          {"vs_other", OptJson(r.vs_other)},
          {"default_ms", OptJson(r.default_ms)},
          {"vs_default", OptJson(r.vs_default)},
          {"tuning_seconds", r.tuning_seconds},
          {"jobs", r.jobs},
          {"failed_jobs", r.failed_jobs}};
}

// Writes `text` to `path` through a temp file renamed over it (never half a page).
bool WriteFile(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tuna-new";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.good()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

int RunReport(const GlobalOptions& global, const ReportArgs& a) {
  admin::ReportOptions o;
  o.session_id = a.session_id;
  if (a.vs_session > 0) o.vs_session = a.vs_session;
  if (a.vs_golden >= 0) o.vs_golden = a.vs_golden;
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) {
    std::cerr << "tuna report: " << db.status().message() << "\n";
    return 1;
  }
  auto report = admin::BuildReport(**db, o);
  if (!report.ok()) {
    std::cerr << "tuna report: " << report.status().message() << "\n";
    return absl::IsInvalidArgument(report.status()) ? 2 : 1;
  }
  if (a.json) {
    std::cout << JsonText(JsonList(report->rows, RowJson), /*items_on_lines=*/true) << "\n";
  } else {
    std::cout << admin::ReportText(*report);
  }
  if (!a.html.empty()) {
    const std::string when =
        absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone());
    if (!WriteFile(a.html, admin::ReportHtml(*report, when))) {
      std::cerr << "tuna report: cannot write " << a.html << "\n";
      return 1;
    }
    std::cerr << "wrote " << a.html << "\n";
  }
  return 0;
}

}  // namespace

void AddReportCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "report", "a session's best solvers, speed-ups, tuning time and failures per config");
  auto a = std::make_shared<ReportArgs>();
  AddSessionIdOption(cmd, &a->session_id, "the session reported");
  auto* vs =
      cmd->add_option("--vs-session,--vs_session", a->vs_session, "compare with this session")
          ->check(CLI::PositiveNumber);
  cmd->add_option("--vs-golden,--vs_golden", a->vs_golden,
                  "compare with this golden version (its rows of the session's target)")
      ->check(CLI::NonNegativeNumber)
      ->excludes(vs);
  cmd->add_option("-o,--output", a->html, "also write one self-contained HTML page here");
  cmd->add_flag("--json", a->json, "print the rows as one JSON array instead of the table");
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;
  cmd->callback(
      [a, global, selected] { *selected = [a, global] { return RunReport(*global, *a); }; });
}

}  // namespace tuna::cli
