#include "schema/store/report_store.h"

#include "absl/strings/str_cat.h"
#include "schema/store/result_scan.h"

namespace tuna::schema {
namespace {

ReportResult DecodeResult(const Row& r) {
  return {r.Int(0), r.String(1), r.Int(2) != 0, r.Double(3), r.Int(4), r.String(5)};
}

absl::StatusOr<std::vector<ReportResult>> Results(Database& db, const std::string& sql,
                                                  const Params& params) {
  auto rows = db.Query(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<ReportResult> out;
  out.reserve(rows->size());
  for (const Row& r : *rows) out.push_back(DecodeResult(r));
  return out;
}

}  // namespace

absl::StatusOr<std::vector<ReportResult>> ReadReportResults(Database& db, int64_t session_id) {
  if (auto s = ReadSessionTarget(db, session_id); !s.ok()) return s.status();
  return Results(db,
                 absl::StrCat("SELECT r.config_id, s.name, s.tunable, r.kernel_time, r.workspace,"
                              " r.params FROM find_result r JOIN solver s ON s.id = r.solver_id"
                              " WHERE r.session_id = ? AND ",
                              internal::kExportableFind, " ORDER BY r.config_id, s.name"),
                 {session_id});
}

absl::StatusOr<std::vector<ReportResult>> ReadGoldenReportResults(Database& db, int64_t golden_v,
                                                                  const SessionTarget& t) {
  return Results(db,
                 "SELECT r.config_id, s.name, s.tunable, r.kernel_time, r.workspace, r.params"
                 " FROM golden_result r JOIN solver s ON s.id = r.solver_id"
                 " WHERE r.golden_v = ? AND r.arch = ? AND r.num_cu = ? AND r.backend = ?"
                 " AND r.kind = 'find' ORDER BY r.config_id, s.name",
                 {golden_v, t.arch, t.num_cu, t.backend});
}

absl::StatusOr<std::vector<ReportJob>> ReadReportJobs(Database& db, int64_t session_id) {
  auto rows = db.Query(
      "SELECT j.config_id, s.name, CAST(j.kind AS CHAR), CAST(j.state AS CHAR),"
      " COALESCE(TIMESTAMPDIFF(MICROSECOND, j.started_at, j.finished_at), 0) / 1e6,"
      " COALESCE(j.error, '') FROM job j JOIN solver s ON s.id = j.solver_id"
      " WHERE j.session_id = ? ORDER BY j.id",
      {session_id});
  if (!rows.ok()) return rows.status();
  std::vector<ReportJob> out;
  out.reserve(rows->size());
  for (const Row& r : *rows) {
    out.push_back({r.Int(0), r.String(1), r.String(2), r.String(3), r.Double(4), r.String(5)});
  }
  return out;
}

absl::StatusOr<std::vector<DefaultTime>> ReadDefaultTimes(Database& db, int64_t session_id) {
  auto rows = db.Query(
      "SELECT j.config_id, s.name, e.time, e.status, pr.kernel_time FROM job j"
      " JOIN solver s ON s.id = j.solver_id"
      " LEFT JOIN perf_result pr ON pr.session_id = j.session_id AND pr.config_id = j.config_id"
      "   AND pr.solver_id = j.solver_id"
      " JOIN eval_sample e ON e.id = (SELECT MIN(e2.id) FROM eval_sample e2 WHERE e2.job_id = j.id"
      "   AND e2.attempt = (SELECT MAX(e3.attempt) FROM eval_sample e3 WHERE e3.job_id = j.id))"
      " WHERE j.session_id = ? AND j.kind = 'perf' ORDER BY j.id",
      {session_id});
  if (!rows.ok()) return rows.status();
  std::vector<DefaultTime> out;
  for (const Row& r : *rows) {
    DefaultTime d{r.Int(0), r.String(1), std::nullopt, r.String(3), r.OptDouble(4)};
    if (d.status == "Passed") d.time = r.OptDouble(2);
    out.push_back(std::move(d));
  }
  return out;
}

absl::StatusOr<std::vector<SampleStatusCount>> CountFailedSamples(Database& db,
                                                                  int64_t session_id) {
  auto rows = db.Query(
      "SELECT e.status, COUNT(*) FROM eval_sample e JOIN job j ON j.id = e.job_id"
      " WHERE j.session_id = ? AND e.status <> 'Passed' GROUP BY e.status ORDER BY e.status",
      {session_id});
  if (!rows.ok()) return rows.status();
  std::vector<SampleStatusCount> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.Int(1)});
  return out;
}

}  // namespace tuna::schema
