// BuildReport in stages: read both sides, the jobs, the default-params times and the failures;
// fold them per config; sum up.
#include "admin/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "schema/store/result_store.h"
#include "tuner_core/problem/keys.h"

namespace tuna::admin {
namespace {

// Per config the fastest result (ties: solver name).
std::map<int64_t, schema::ReportResult> Best(const std::vector<schema::ReportResult>& results) {
  std::map<int64_t, schema::ReportResult> best;
  for (const auto& r : results) {
    auto [it, inserted] = best.try_emplace(r.config_id, r);
    if (!inserted &&
        std::tie(r.kernel_time, r.solver) < std::tie(it->second.kernel_time, it->second.solver)) {
      it->second = r;
    }
  }
  return best;
}

std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  if (line.size() > 160) line = line.substr(0, 157) + "...";
  return line.empty() ? "(no error recorded)" : line;
}

std::vector<FailureCount> Sorted(const std::map<std::string, int64_t>& counts) {
  std::vector<FailureCount> out;
  for (const auto& [reason, n] : counts) out.push_back({reason, n});
  std::stable_sort(out.begin(), out.end(),
                   [](const FailureCount& a, const FailureCount& b) { return a.count > b.count; });
  return out;
}

std::optional<double> GeoMean(const std::vector<ReportRow>& rows,
                              std::optional<double> ReportRow::*field) {
  double sum = 0;
  int n = 0;
  for (const auto& r : rows) {
    const auto& v = r.*field;
    if (!v || !(*v > 0) || !std::isfinite(*v)) continue;
    sum += std::log(*v);
    ++n;
  }
  if (n == 0) return std::nullopt;
  return std::exp(sum / n);
}

// The other side's results: a session's, or a golden version's rows of this session's target.
absl::StatusOr<std::vector<schema::ReportResult>> ReadOther(schema::Database& db,
                                                            const ReportOptions& o,
                                                            Report* report) {
  if (o.vs_session) {
    report->other_label = absl::StrCat("session ", *o.vs_session);
    return schema::ReadReportResults(db, *o.vs_session);
  }
  if (!o.vs_golden) return std::vector<schema::ReportResult>{};
  report->other_label = absl::StrCat("golden version ", *o.vs_golden);
  auto rows = schema::ReadGoldenReportResults(db, *o.vs_golden, report->session);
  if (rows.ok() && rows->empty()) {
    return absl::NotFoundError(absl::StrCat("golden version ", *o.vs_golden,
                                            " has no find rows for ", report->session.arch, "/",
                                            report->session.num_cu, "/", report->session.backend));
  }
  return rows;
}

// One row per config with a result or a job: problem, best of both sides, default time.
void FoldRows(const std::map<int64_t, Problem>& problems,
              const std::map<int64_t, schema::ReportResult>& mine,
              const std::map<int64_t, schema::ReportResult>& other,
              const std::vector<schema::DefaultTime>& defaults, Report* report) {
  std::map<std::pair<int64_t, std::string>, const schema::DefaultTime*> default_ms;
  for (const auto& d : defaults) {
    if (d.time && d.tuned && *d.tuned > 0) default_ms[{d.config_id, d.solver}] = &d;
  }
  for (const auto& [id, problem] : problems) {
    ReportRow row;
    row.config_id = id;
    const std::string key = FindDbKey(problem);
    row.problem = key.substr(0, key.rfind('-'));
    if (const size_t g = key.find("_g"); g != std::string::npos) row.problem += key.substr(g);
    row.direction = std::string(DirectionName(problem.direction));
    if (auto m = mine.find(id); m != mine.end()) {
      row.best_solver = m->second.solver;
      row.best_ms = m->second.kernel_time;
      row.best_params = m->second.params;
      auto d = default_ms.find({id, m->second.solver});
      if (d != default_ms.end()) {
        row.default_ms = d->second->time;
        row.vs_default = *d->second->time / *d->second->tuned;
      }
    }
    if (auto t = other.find(id); t != other.end()) {
      row.other_solver = t->second.solver;
      row.other_ms = t->second.kernel_time;
      if (row.best_ms && *row.best_ms > 0) row.vs_other = t->second.kernel_time / *row.best_ms;
    }
    report->rows.push_back(std::move(row));
  }
}

// Jobs: time per config and in total, failed jobs by reason.
void FoldJobs(const std::vector<schema::ReportJob>& jobs, Report* report) {
  std::map<int64_t, ReportRow*> by_config;
  for (auto& r : report->rows) by_config[r.config_id] = &r;
  std::map<std::string, int64_t> reasons;
  for (const auto& j : jobs) {
    const bool failed = j.state == "failed";
    ++report->jobs;
    report->tuning_seconds += j.seconds;
    if (failed) {
      ++report->failed;
      ++reasons[FirstLine(j.error)];
    }
    auto it = by_config.find(j.config_id);
    if (it == by_config.end()) continue;
    it->second->tuning_seconds += j.seconds;
    ++it->second->jobs;
    if (failed) ++it->second->failed_jobs;
  }
  report->failed_jobs = Sorted(reasons);
}

void Summarise(Report* report) {
  std::stable_sort(report->rows.begin(), report->rows.end(),
                   [](const ReportRow& a, const ReportRow& b) {
                     return std::tie(a.direction, a.problem) < std::tie(b.direction, b.problem);
                   });
  for (const auto& r : report->rows) {
    if (r.best_ms) ++report->tuned;
    if (!r.vs_other) continue;
    ++report->compared;
    if (*r.vs_other > 1.02) ++report->faster;
    if (*r.vs_other < 0.98) ++report->slower;
  }
  report->geomean_vs_other = GeoMean(report->rows, &ReportRow::vs_other);
  report->geomean_vs_default = GeoMean(report->rows, &ReportRow::vs_default);
}

}  // namespace

absl::StatusOr<Report> BuildReport(schema::Database& db, const ReportOptions& o) {
  if (o.vs_session && o.vs_golden) {
    return absl::InvalidArgumentError("compare with a session or a golden version, not both");
  }
  Report report;
  auto session = schema::ReadSessionTarget(db, o.session_id);
  if (!session.ok()) return session.status();
  report.session = *session;
  report.label = absl::StrCat("session ", o.session_id);
  auto mine = schema::ReadReportResults(db, o.session_id);
  if (!mine.ok()) return mine.status();
  auto other = ReadOther(db, o, &report);
  if (!other.ok()) return other.status();
  auto jobs = schema::ReadReportJobs(db, o.session_id);
  if (!jobs.ok()) return jobs.status();
  auto defaults = schema::ReadDefaultTimes(db, o.session_id);
  if (!defaults.ok()) return defaults.status();
  auto samples = schema::CountFailedSamples(db, o.session_id);
  if (!samples.ok()) return samples.status();

  std::set<int64_t> ids;
  for (const auto& r : *mine) ids.insert(r.config_id);
  for (const auto& j : *jobs) ids.insert(j.config_id);
  auto configs = schema::ReadConfigs(db, {ids.begin(), ids.end()});
  if (!configs.ok()) return configs.status();
  FoldRows(configs->problems, Best(*mine), Best(*other), *defaults, &report);
  FoldJobs(*jobs, &report);
  for (const auto& s : *samples) report.failed_candidates.push_back({s.status, s.count});
  Summarise(&report);
  return report;
}

}  // namespace tuna::admin
