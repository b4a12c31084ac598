// The terminal form of a report.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "admin/report_render.h"

namespace tuna::admin {
namespace {

std::string Ms(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.4g", *v) : std::string("-");
}

std::string Ratio(const std::optional<double>& v) {
  return v ? absl::StrFormat("%.2fx", *v) : std::string("-");
}

std::string Summary(const Report& r) {
  std::string out = absl::StrCat(r.label, ": ", r.session.arch, ", ", r.session.num_cu, " CUs, ",
                                 r.session.backend);
  if (!r.other_label.empty()) absl::StrAppend(&out, " vs ", r.other_label);
  absl::StrAppend(&out, "\n", r.tuned, " of ", r.rows.size(), " configs tuned; ", r.jobs, " jobs (",
                  r.failed, " failed), ", absl::StrFormat("%.1f", r.tuning_seconds),
                  " s of tuning\n");
  if (!r.other_label.empty()) {
    absl::StrAppend(&out, "vs ", r.other_label, ": ", r.compared, " compared, ", r.faster,
                    " faster, ", r.slower, " slower, geomean speed-up ", Ratio(r.geomean_vs_other),
                    "\n");
  }
  absl::StrAppend(&out, "vs default params: geomean speed-up ", Ratio(r.geomean_vs_default), "\n");
  return out;
}

}  // namespace

std::string ReportText(const Report& r) {
  std::string out = Summary(r) + "\n";
  const std::string other = r.other_label.empty() ? "other" : r.other_label;
  absl::StrAppend(&out, absl::StrFormat("%-48s %-3s %-26s %10s %10s %8s %8s %9s %6s\n", "problem",
                                        "dir", "best solver", "ms", "other ms", "vs other",
                                        "vs dflt", "tuning s", "failed"));
  for (const auto& row : r.rows) {
    absl::StrAppend(&out,
                    absl::StrFormat("%-48s %-3s %-26s %10s %10s %8s %8s %9.1f %6d\n", row.problem,
                                    row.direction, row.best_solver.empty() ? "-" : row.best_solver,
                                    Ms(row.best_ms), Ms(row.other_ms), Ratio(row.vs_other),
                                    Ratio(row.vs_default), row.tuning_seconds, row.failed_jobs));
  }
  if (!r.failed_jobs.empty()) {
    absl::StrAppend(&out, "\nfailed jobs by reason:\n");
    for (const auto& f : r.failed_jobs)
      absl::StrAppend(&out, absl::StrFormat("%6d  %s\n", f.count, f.reason));
  }
  if (!r.failed_candidates.empty()) {
    absl::StrAppend(&out, "\nfailed candidates by status:\n");
    for (const auto& f : r.failed_candidates) {
      absl::StrAppend(&out, absl::StrFormat("%6d  %s\n", f.count, f.reason));
    }
  }
  absl::StrAppend(&out, "(", other, " ms: the other side's best; vs other = other ms / ms; ",
                  "vs dflt = the best solver's default / tuned params, one perf job)\n");
  return out;
}

}  // namespace tuna::admin
