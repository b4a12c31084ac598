// `tuna report` (admin/report.h, admin/report_render.h) against a real MariaDB: two sessions and
// a golden version written through result_store, jobs with times and errors, eval samples with
// the default params first.
#include "admin/report.h"

#include <string>
#include <vector>

#include "admin/report_render.h"
#include "catch2/catch.hpp"
#include "schema/store/golden_store.h"
#include "schema/store/result_store.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna::admin {
namespace {

using schema::Database;
using testing::MariadbTest;

constexpr int kNaive = 85, kGemm = 2001;

Problem Conv(int64_t c, Direction d) {
  Problem p;
  p.n = 2;
  p.c = c;
  p.k = 16;
  p.in = {1, 8, 8};
  p.fil = {1, 3, 3};
  p.pad = {0, 1, 1};
  p.direction = d;
  return p;
}

int64_t Job(Database& db, int64_t session, int64_t config, int solver, const char* kind,
            const char* state, double seconds, const std::string& error = "") {
  auto id = schema::InsertJob(db, {session, config, solver, kind, state});
  REQUIRE(id.ok());
  REQUIRE(db.Execute("UPDATE job SET started_at = '2026-01-01 00:00:00',"
                     " finished_at = TIMESTAMPADD(MICROSECOND, ?, '2026-01-01 00:00:00'),"
                     " error = NULLIF(?, '') WHERE id = ?",
                     {static_cast<int64_t>(seconds * 1e6), error, *id})
              .ok());
  return *id;
}

void Sample(Database& db, int64_t job, const std::string& params, std::optional<double> time,
            const std::string& status) {
  schema::Value t = nullptr;
  if (time) t = *time;
  REQUIRE(db.Execute("INSERT INTO eval_sample (job_id, attempt, params, time, status)"
                     " VALUES (?, 1, ?, ?, ?)",
                     {job, params, t, status})
              .ok());
}

struct Sessions {
  int64_t mine = 0, other = 0;
  std::vector<int64_t> configs;
};

// Session `mine`: config 0 best gemm 0.5 ms (its perf job: default 1.0 ms first, then 0.5 ms,
// then a candidate that did not compile), naive 2.0 ms; config 1 naive 3.0 ms only, its gemm
// perf job failed. Session `other`: config 0 gemm 1.0 ms, config 1 naive 1.5 ms.
Sessions Insert(Database& db) {
  REQUIRE(schema::UpsertSolver(db, kNaive, "ConvDirectNaiveConvFwd", false).ok());
  REQUIRE(schema::UpsertSolver(db, kGemm, "TunaCpuGemmConv", true).ok());
  Sessions s;
  auto mine = schema::InsertSession(db, {"cpu-avx2", 8, "CPU", "mine"});
  auto other = schema::InsertSession(db, {"cpu-avx2", 8, "CPU", "other"});
  REQUIRE(mine.ok());
  REQUIRE(other.ok());
  s.mine = *mine;
  s.other = *other;
  auto configs =
      schema::InsertConfigs(db, {Conv(8, Direction::kForward), Conv(4, Direction::kBackwardData)});
  REQUIRE(configs.ok());
  s.configs = *configs;
  const int64_t c0 = s.configs[0], c1 = s.configs[1];
  const int64_t perf = Job(db, s.mine, c0, kGemm, "perf", "evaluated", 12.5);
  Sample(db, perf, "8,8", 1.0, "Passed");
  Sample(db, perf, "16,8", 0.5, "Passed");
  Sample(db, perf, "32,8", std::nullopt, "CompileFailed");
  const int64_t find = Job(db, s.mine, c0, kGemm, "find", "evaluated", 1.5);
  const int64_t naive = Job(db, s.mine, c1, kNaive, "find", "evaluated", 2.0);
  Job(db, s.mine, c1, kGemm, "perf", "failed", 4.0, "compile failed: <oops>\nsecond line");
  REQUIRE(schema::InsertPerfResults(db, {{s.mine, c0, kGemm, perf, "16,8", 0.5}}).ok());
  REQUIRE(schema::InsertFindResults(db, {{s.mine, c0, kGemm, find, 0.5, 0, "16,8"},
                                         {s.mine, c0, kNaive, std::nullopt, 2.0},
                                         {s.mine, c1, kNaive, naive, 3.0}})
              .ok());
  REQUIRE(schema::InsertFindResults(db, {{s.other, c0, kGemm, std::nullopt, 1.0, 0, "8,8"},
                                         {s.other, c1, kNaive, std::nullopt, 1.5}})
              .ok());
  return s;
}

const ReportRow& RowOf(const Report& r, int64_t config) {
  for (const auto& row : r.rows) {
    if (row.config_id == config) return row;
  }
  FAIL("no row for config " << config);
  return r.rows.front();
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "report against another session", "[mariadb][report]") {
  const Sessions s = Insert(db());
  auto report = BuildReport(db(), {.session_id = s.mine, .vs_session = s.other});
  REQUIRE(report.ok());
  REQUIRE(report->rows.size() == 2);
  const ReportRow& r0 = RowOf(*report, s.configs[0]);
  CHECK(r0.direction == "F");
  CHECK(r0.best_solver == "TunaCpuGemmConv");
  CHECK(*r0.best_ms == Approx(0.5));
  CHECK(r0.best_params == "16,8");
  CHECK(*r0.other_ms == Approx(1.0));
  CHECK(*r0.vs_other == Approx(2.0));
  CHECK(*r0.default_ms == Approx(1.0));
  CHECK(*r0.vs_default == Approx(2.0));
  CHECK(r0.tuning_seconds == Approx(14.0));
  CHECK(r0.jobs == 2);
  const ReportRow& r1 = RowOf(*report, s.configs[1]);
  CHECK(r1.direction == "B");
  CHECK(r1.best_solver == "ConvDirectNaiveConvFwd");
  CHECK(*r1.vs_other == Approx(0.5));
  CHECK_FALSE(r1.vs_default.has_value());  // no perf job of the naive solver
  CHECK(r1.failed_jobs == 1);
  CHECK(report->tuned == 2);
  CHECK(report->faster == 1);
  CHECK(report->slower == 1);
  CHECK(*report->geomean_vs_other == Approx(1.0));
  CHECK(report->tuning_seconds == Approx(20.0));
  REQUIRE(report->failed_jobs.size() == 1);
  CHECK(report->failed_jobs[0].reason == "compile failed: <oops>");
  REQUIRE(report->failed_candidates.size() == 1);
  CHECK(report->failed_candidates[0].reason == "CompileFailed");

  const std::string text = ReportText(*report);
  CHECK(text.find("2.00x") != std::string::npos);
  CHECK(text.find("compile failed: <oops>") != std::string::npos);
  const std::string html = ReportHtml(*report, "now");
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(html.find("<svg") != std::string::npos);
  // The style sheet (admin/report.css) is embedded, not linked.
  CHECK(html.find("<style>") != std::string::npos);
  CHECK(html.find("header h1{margin:0;") != std::string::npos);
  CHECK(html.find("compile failed: &lt;oops&gt;") != std::string::npos);
  for (const char* external : {"<script", "http://", "https://", "<link", "@import", "url("}) {
    INFO(external);
    CHECK(html.find(external) == std::string::npos);  // self-contained
  }
}

TEST_CASE_METHOD(MariadbTest, "report against a golden version, and bad comparisons",
                 "[mariadb][report]") {
  const Sessions s = Insert(db());
  REQUIRE(schema::UpdateGolden(db(), {.golden_v = 3, .session_id = s.other}).ok());
  auto report = BuildReport(db(), {.session_id = s.mine, .vs_golden = 3});
  REQUIRE(report.ok());
  CHECK(report->other_label == "golden version 3");
  CHECK(*RowOf(*report, s.configs[0]).vs_other == Approx(2.0));
  CHECK(*report->geomean_vs_other == Approx(1.0));

  CHECK(BuildReport(db(), {.session_id = s.mine, .vs_golden = 4}).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(BuildReport(db(), {.session_id = s.mine, .vs_session = s.other, .vs_golden = 3})
            .status()
            .code() == absl::StatusCode::kInvalidArgument);
  CHECK(BuildReport(db(), {.session_id = 999}).status().code() == absl::StatusCode::kNotFound);
  auto alone = BuildReport(db(), {.session_id = s.mine});
  REQUIRE(alone.ok());
  CHECK(alone->other_label.empty());
  CHECK_FALSE(alone->geomean_vs_other.has_value());
  CHECK(ReportHtml(*alone, "now").find("Speed-up vs") == std::string::npos);
}

}  // namespace tuna::admin
