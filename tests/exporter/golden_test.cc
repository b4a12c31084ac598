// Golden versions (schema/store/golden_store.h), `export --golden_v` and `tuna merge` of files
// (exporter/merge_files.h) against a real MariaDB (tests/fixtures).
#include <filesystem>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "exporter/exporter.h"
#include "exporter/merge_files.h"
#include "schema/store/golden_store.h"
#include "tests/exporter/export_test_util.h"
#include "tests/exporter/session_fixture.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/kernel_db.h"
#include "tuner_core/problem/keys.h"

namespace tuna::exporter::test {
namespace {

using tuna::testing::MariadbTest;

// Session B of the same target: config 0's S2 faster (0.05 < 0.12), S3 slower (0.3 > 0.2);
// config 1's S2 new params, faster; config 2 untouched.
std::vector<FindSpec> FindsB() {
  return {{0, 2, 0.05, 512, true, "tuna_direct_tiled.cu", "-DTILE=16", "better tiled code"},
          {0, 3, 0.3},
          {1, 2, 0.2}};
}
std::vector<PerfSpec> PerfsB() { return {{0, 2, "16,16,4", 0.05}, {1, 2, "4,4,1", 0.2}}; }

ExportOptions GoldenOptions(int64_t v, const std::string& dir) {
  ExportOptions o = Options(0, dir);
  o.golden_v = v;
  return o;
}

int64_t GoldenRows(Database& db, int64_t v) {
  auto rows = db.Query("SELECT COUNT(*) FROM golden_result WHERE golden_v = ?", {v});
  REQUIRE(rows.ok());
  return (*rows)[0].Int(0);
}

double GoldenTime(Database& db, int64_t v, int solver, const std::string& kind, int64_t config) {
  auto rows = db.Query(
      "SELECT kernel_time FROM golden_result WHERE golden_v = ? AND solver_id = ? AND kind = ? "
      "AND config_id = ?",
      {v, int64_t{solver}, kind, config});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  return (*rows)[0].Double(0);
}

int64_t ConfigId(Database& db, int index) {
  auto ids = schema::InsertConfigs(db, {Problems()[index]});
  REQUIRE(ids.ok());
  return (*ids)[0];
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "a golden version from one session exports the session's files",
                 "[mariadb][golden]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  auto updated = schema::UpdateGolden(db(), {.golden_v = 1, .session_id = a});
  REQUIRE(updated.ok());
  CHECK(updated->rows_before == 0);
  CHECK(updated->from_session_find == 10);  // the exportable find results
  CHECK(updated->from_session_perf == 3);
  CHECK(updated->rows_after == 13);

  const std::string from_session = TmpDir("golden_session"), from_golden = TmpDir("golden_v1");
  REQUIRE(ExportSession(db(), Options(a, from_session)).ok());
  auto report = ExportSession(db(), GoldenOptions(1, from_golden));
  REQUIRE(report.ok());
  CHECK(report->basename == "gfx90a68");
  for (const char* name : {"gfx90a68.HIP.fdb.txt", "gfx90a68.db", "gfx90a68.kdb"}) {
    INFO(name);
    CHECK(Slurp(from_golden + "/" + name) == Slurp(from_session + "/" + name));
  }
  auto listed = schema::ListGolden(db(), std::nullopt);
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 1);
  CHECK((*listed)[0].target.arch == kTarget.arch);
  CHECK((*listed)[0].find_rows == 10);
  CHECK((*listed)[0].perf_rows == 3);
}

TEST_CASE_METHOD(MariadbTest, "golden update: base version, session rows replace, overwrite",
                 "[mariadb][golden]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  REQUIRE(schema::UpdateGolden(db(), {.golden_v = 1, .session_id = a}).ok());
  const int64_t b = InsertSessionData(db(), kTarget, FindsB(), PerfsB());

  auto v2 = schema::UpdateGolden(db(), {.golden_v = 2, .session_id = b, .base_golden_v = 1});
  REQUIRE(v2.ok());
  CHECK(v2->from_base == 13);
  CHECK(v2->from_session_find == 3);
  CHECK(v2->from_session_perf == 2);
  CHECK(v2->rows_after == 13 + 1);  // only (config 1, S2, perf) is new
  const int64_t c0 = ConfigId(db(), 0);
  CHECK(GoldenTime(db(), 2, 2, "find", c0) == Approx(0.05));
  CHECK(GoldenTime(db(), 2, 3, "find", c0) == Approx(0.3));   // the newer measurement ships
  CHECK(GoldenTime(db(), 1, 2, "find", c0) == Approx(0.12));  // version 1 unchanged
  CHECK(GoldenRows(db(), 1) == 13);

  // A version with rows is not written without overwrite, and stays as it was.
  auto again = schema::UpdateGolden(db(), {.golden_v = 2, .session_id = a});
  CHECK(again.status().code() == absl::StatusCode::kAlreadyExists);
  CHECK(GoldenTime(db(), 2, 2, "find", c0) == Approx(0.05));
  auto over = schema::UpdateGolden(db(), {.golden_v = 2, .session_id = a, .overwrite = true});
  REQUIRE(over.ok());
  CHECK(over->rows_before == 14);
  CHECK(over->rows_after == 14);
  CHECK(GoldenTime(db(), 2, 2, "find", c0) == Approx(0.12));

  const std::string dir = TmpDir("golden_v2");
  auto exported = ExportSession(db(), GoldenOptions(2, dir));
  REQUIRE(exported.ok());
  CHECK(exported->perf.entries == 4);

  CHECK(schema::UpdateGolden(db(), {.golden_v = 3}).status().code() ==
        absl::StatusCode::kInvalidArgument);
  CHECK(schema::UpdateGolden(db(), {.golden_v = 3, .base_golden_v = 7}).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(schema::UpdateGolden(db(), {.golden_v = 3, .session_id = 999}).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(GoldenRows(db(), 3) == 0);
}

TEST_CASE_METHOD(MariadbTest, "a golden version of two targets exports the one picked",
                 "[mariadb][golden]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const int64_t b =
      InsertSessionData(db(), {"gfx90a:sramecc+:xnack-", 110, "HIP", "b"}, FindsB(), PerfsB());
  REQUIRE(schema::UpdateGolden(db(), {.golden_v = 4, .session_id = a}).ok());
  REQUIRE(schema::UpdateGolden(db(), {.golden_v = 4, .session_id = b, .overwrite = true}).ok());
  const std::string dir = TmpDir("golden_two");
  auto both = ExportSession(db(), GoldenOptions(4, dir));
  CHECK(both.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(both.status().message()).find("/110/HIP") != std::string::npos);
  ExportOptions o = GoldenOptions(4, dir);
  o.arch = "gfx90a";
  o.num_cu = 110;
  auto picked = ExportSession(db(), o);
  REQUIRE(picked.ok());
  CHECK(picked->basename == "gfx90a6e");
  CHECK(picked->find.keys == 2);
  CHECK(ExportSession(db(), GoldenOptions(9, dir)).status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE_METHOD(MariadbTest, "merge of files equals an export merged into them",
                 "[mariadb][merge]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const int64_t b = InsertSessionData(db(), kTarget, FindsB(), PerfsB());
  const std::string dir_a = TmpDir("merge_a"), dir_b = TmpDir("merge_b"),
                    expected = TmpDir("merge_expected");
  REQUIRE(ExportSession(db(), Options(a, dir_a)).ok());
  REQUIRE(ExportSession(db(), Options(b, dir_b)).ok());
  ExportOptions into = Options(b, expected);
  into.merge_dir = dir_a;
  REQUIRE(ExportSession(db(), into).ok());

  for (const char* name : {"gfx90a68.HIP.fdb.txt", "gfx90a68.db", "gfx90a68.kdb"}) {
    INFO(name);
    MergeFilesOptions m;
    m.into = dir_a + "/" + name;
    m.from = dir_b + "/" + name;
    m.output = TmpDir(std::string("merge_out_") + name) + "/" + name;
    m.top_n = 4;
    auto merged = MergeDbFiles(m);
    REQUIRE(merged.ok());
    CHECK(merged->file.merged);
    CHECK(Slurp(m.output) == Slurp(expected + "/" + name));
  }
  // The find db kept the faster entry per key and solver.
  auto fdb = db::ReadFindDbFile(expected + "/gfx90a68.HIP.fdb.txt");
  REQUIRE(fdb.ok());
  const auto& e0 = fdb->records.at(FindDbKey(Problems()[0]));
  CHECK(e0.front().solver == "TunaDirectTiled");
  CHECK(e0.front().time_ms == Approx(0.05));
  CHECK(e0[1].solver == "TunaIgemm");
  CHECK(e0[1].time_ms == Approx(0.2));  // 0.3 of session B is slower
}

TEST_CASE_METHOD(MariadbTest, "merge refuses other kinds, targets and CU counts",
                 "[mariadb][merge]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const std::string dir = TmpDir("merge_refuse"), other = TmpDir("merge_refuse_cu");
  REQUIRE(ExportSession(db(), Options(a, dir)).ok());
  ExportOptions o = Options(a, other);
  o.num_cu = 110;
  REQUIRE(ExportSession(db(), o).ok());
  const std::string before = Slurp(dir + "/gfx90a68.HIP.fdb.txt");

  MergeFilesOptions kinds{dir + "/gfx90a68.HIP.fdb.txt", dir + "/gfx90a68.db"};
  CHECK(MergeDbFiles(kinds).status().code() == absl::StatusCode::kInvalidArgument);
  MergeFilesOptions cu{dir + "/gfx90a68.HIP.fdb.txt", other + "/gfx90a6e.HIP.fdb.txt"};
  auto refused = MergeDbFiles(cu);
  CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(refused.status().message()).find("--across-cu") != std::string::npos);
  CHECK(Slurp(dir + "/gfx90a68.HIP.fdb.txt") == before);
  cu.across_cu = true;
  auto merged = MergeDbFiles(cu);
  REQUIRE(merged.ok());
  CHECK(merged->file.merge.unchanged == 8);  // the same entries
  CHECK(Slurp(dir + "/gfx90a68.HIP.fdb.txt") == before);
  MergeFilesOptions missing{dir + "/gfx90a68.kdb", dir + "/nothing/gfx90a68.kdb"};
  CHECK(MergeDbFiles(missing).status().code() == absl::StatusCode::kNotFound);
  MergeFilesOptions arch{dir + "/gfx90a68.kdb", dir + "/gfx942_64.kdb"};
  std::filesystem::copy_file(dir + "/gfx90a68.kdb", dir + "/gfx942_64.kdb");
  CHECK(MergeDbFiles(arch).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace tuna::exporter::test
