#include "schema/store/golden_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "schema/store/result_scan.h"

namespace tuna::schema {
namespace {

constexpr char kGoldenColumns[] =
    "golden_v, arch, num_cu, backend, config_id, solver_id, kind, session_id, job_id, params, "
    "kernel_time, workspace, alg_lib";

// An existing row of the same (version, target, config, solver, kind) takes the new values.
constexpr char kReplace[] =
    " ON DUPLICATE KEY UPDATE session_id = VALUES(session_id), job_id = VALUES(job_id),"
    " params = VALUES(params), kernel_time = VALUES(kernel_time),"
    " workspace = VALUES(workspace), alg_lib = VALUES(alg_lib)";

absl::StatusOr<int64_t> CountOf(Connection& c, const std::string& sql, const Params& params) {
  auto rows = c.Query(sql, params);
  if (!rows.ok()) return rows.status();
  return rows->empty() ? 0 : (*rows)[0].Int(0);
}

absl::StatusOr<int64_t> VersionRows(Connection& c, int64_t v) {
  return CountOf(c, "SELECT COUNT(*) FROM golden_result WHERE golden_v = ?", {v});
}

absl::Status CheckUpdate(Connection& c, const GoldenUpdate& u, GoldenUpdateReport* report) {
  if (u.golden_v < 0) {
    return absl::InvalidArgumentError(absl::StrCat("--golden_v ", u.golden_v, " is negative"));
  }
  if (!u.session_id && !u.base_golden_v) {
    return absl::InvalidArgumentError(
        "give --session_id or --base_golden_v to fill golden version " +
        std::to_string(u.golden_v) + " from");
  }
  if (u.base_golden_v && *u.base_golden_v == u.golden_v) {
    return absl::InvalidArgumentError("--base_golden_v is the version being written");
  }
  auto before = VersionRows(c, u.golden_v);
  if (!before.ok()) return before.status();
  report->rows_before = *before;
  if (*before > 0 && !u.overwrite) {
    return absl::AlreadyExistsError(absl::StrCat("golden version ", u.golden_v, " exists (",
                                                 *before,
                                                 " rows); pass --overwrite to write over it"));
  }
  if (u.session_id) {
    auto n = CountOf(c, "SELECT COUNT(*) FROM session WHERE id = ?", {*u.session_id});
    if (!n.ok()) return n.status();
    if (*n == 0) return absl::NotFoundError(absl::StrCat("no session ", *u.session_id));
  }
  if (u.base_golden_v) {
    auto n = VersionRows(c, *u.base_golden_v);
    if (!n.ok()) return n.status();
    if (*n == 0) {
      return absl::NotFoundError(absl::StrCat("golden version ", *u.base_golden_v, " is empty"));
    }
  }
  return absl::OkStatus();
}

// Copies the session's exportable rows of one result table (find_result or perf_result).
absl::StatusOr<int64_t> CopySessionRows(Connection& c, int64_t golden_v, int64_t session_id,
                                        bool find) {
  const char* table = find ? "find_result" : "perf_result";
  const char* rule = find ? internal::kExportableFind : internal::kExportablePerf;
  const std::string from = absl::StrCat(" FROM ", table,
                                        " r JOIN solver s ON s.id = r.solver_id"
                                        " JOIN session se ON se.id = r.session_id"
                                        " WHERE r.session_id = ? AND ",
                                        rule);
  auto n = CountOf(c, absl::StrCat("SELECT COUNT(*)", from), {session_id});
  if (!n.ok()) return n.status();
  const std::string insert = absl::StrCat("INSERT INTO golden_result (", kGoldenColumns,
                                          ") SELECT ?, se.arch, se.num_cu, se.backend,"
                                          " r.config_id, r.solver_id, '",
                                          find ? "find" : "perf",
                                          "', r.session_id, r.job_id,"
                                          " r.params, r.kernel_time, r.workspace, ",
                                          find ? "r.alg_lib" : "NULL", from, kReplace);
  if (auto done = c.Execute(insert, {golden_v, session_id}); !done.ok()) return done.status();
  return *n;
}

}  // namespace

absl::StatusOr<GoldenUpdateReport> UpdateGolden(Database& db, const GoldenUpdate& u) {
  GoldenUpdateReport report;
  auto st = db.Transaction([&](Connection& c) -> absl::Status {
    report = GoldenUpdateReport{};
    if (auto checked = CheckUpdate(c, u, &report); !checked.ok()) return checked;
    if (u.base_golden_v) {
      auto n = VersionRows(c, *u.base_golden_v);
      if (!n.ok()) return n.status();
      report.from_base = *n;
      auto copied = c.Execute(absl::StrCat("INSERT INTO golden_result (", kGoldenColumns,
                                           ") SELECT ?, arch, num_cu, backend, config_id,"
                                           " solver_id, kind, session_id, job_id, params,"
                                           " kernel_time, workspace, alg_lib FROM golden_result"
                                           " WHERE golden_v = ?",
                                           kReplace),
                              {u.golden_v, *u.base_golden_v});
      if (!copied.ok()) return copied.status();
    }
    if (u.session_id) {
      auto find = CopySessionRows(c, u.golden_v, *u.session_id, true);
      if (!find.ok()) return find.status();
      report.from_session_find = *find;
      auto perf = CopySessionRows(c, u.golden_v, *u.session_id, false);
      if (!perf.ok()) return perf.status();
      report.from_session_perf = *perf;
    }
    auto after = VersionRows(c, u.golden_v);
    if (!after.ok()) return after.status();
    report.rows_after = *after;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return report;
}

absl::StatusOr<std::vector<GoldenTargetRows>> ListGolden(Database& db,
                                                         std::optional<int64_t> golden_v) {
  const std::string sql = absl::StrCat(
      "SELECT golden_v, arch, num_cu, CAST(backend AS CHAR), SUM(kind = 'find'),"
      " SUM(kind = 'perf') FROM golden_result",
      golden_v ? " WHERE golden_v = ?" : "",
      " GROUP BY golden_v, arch, num_cu, backend ORDER BY golden_v, arch, num_cu, backend");
  Params params;
  if (golden_v) params.push_back(*golden_v);
  auto rows = db.Query(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<GoldenTargetRows> out;
  for (const Row& r : *rows) {
    GoldenTargetRows t;
    t.golden_v = r.Int(0);
    t.target = SessionTarget{0, r.String(1), r.Int(2), r.String(3)};
    t.find_rows = r.Int(4);
    t.perf_rows = r.Int(5);
    out.push_back(std::move(t));
  }
  return out;
}

namespace {

std::string GoldenScanSql(const char* columns, const char* kind) {
  return absl::StrCat("SELECT ", columns,
                      " FROM golden_result r JOIN solver s ON s.id = r.solver_id"
                      " WHERE r.golden_v = ? AND r.arch = ? AND r.num_cu = ? AND r.backend = ?"
                      " AND r.kind = '",
                      kind, "' AND s.valid = TRUE AND r.id > ? ORDER BY r.id LIMIT ?");
}

Params GoldenScanParams(int64_t golden_v, const SessionTarget& t) {
  return {golden_v, t.arch, t.num_cu, t.backend};
}

}  // namespace

absl::Status ScanGoldenFindResults(
    Database& db, int64_t golden_v, const SessionTarget& target, int page_size,
    const std::function<absl::Status(const std::vector<FindResultRow>&)>& page) {
  const std::string sql =
      GoldenScanSql("r.id, r.config_id, s.name, r.kernel_time, r.workspace, r.job_id", "find");
  return internal::ScanPages(db, sql, GoldenScanParams(golden_v, target), page_size,
                             &internal::DecodeFindResult, page);
}

absl::Status ScanGoldenPerfResults(
    Database& db, int64_t golden_v, const SessionTarget& target, int page_size,
    const std::function<absl::Status(const std::vector<PerfResultRow>&)>& page) {
  const std::string sql = GoldenScanSql(
      "r.id, r.config_id, s.name, r.params, r.kernel_time, r.workspace, r.job_id", "perf");
  return internal::ScanPages(db, sql, GoldenScanParams(golden_v, target), page_size,
                             &internal::DecodePerfResult, page);
}

}  // namespace tuna::schema
