// Export benchmark: N synthetic find-db entries (configs x solvers) inserted into a throwaway
// MariaDB, then the export step alone timed (find db only, then all three files with as many
// perf-db rows). Usage: export_bench [entries=100000] [solvers_per_config=4] [repeats=3]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "exporter/exporter.h"
#include "schema/store/result_store.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

tuna::Problem MakeProblem(int64_t i) {
  tuna::Problem p;
  p.n = 1 + i % 8;
  p.c = 16 * (1 + (i / 8) % 16);
  p.k = 16 * (1 + (i / 128) % 16);
  const int64_t hw = 7 + (i / 2048) % 64;
  p.in = {1, hw, hw};
  p.fil = {1, 3, 3};
  p.pad = {0, 1, 1};
  p.direction = static_cast<tuna::Direction>((i / (2048 * 64)) % 3);
  return p;
}

int Fail(const char* what, const absl::Status& st) {
  std::fprintf(stderr, "%s: %s\n", what, std::string(st.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t entries = argc > 1 ? std::atoll(argv[1]) : 100000;
  const int solvers = argc > 2 ? std::atoi(argv[2]) : 4;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  const int64_t configs = (entries + solvers - 1) / solvers;

  auto test_db = tuna::testing::CreateTestDatabase(true, 2);
  if (!test_db.ok()) return Fail("database", test_db.status());
  tuna::schema::Database& db = *test_db->db;

  const auto t0 = Clock::now();
  for (int s = 1; s <= solvers; ++s) {
    auto st = tuna::schema::UpsertSolver(db, s, "BenchSolver" + std::to_string(s), true);
    if (!st.ok()) return Fail("solver", st);
  }
  auto session = tuna::schema::InsertSession(db, {"gfx942", 304, "HIP", "bench"});
  if (!session.ok()) return Fail("session", session.status());
  std::vector<tuna::Problem> problems;
  for (int64_t i = 0; i < configs; ++i) problems.push_back(MakeProblem(i));
  auto ids = tuna::schema::InsertConfigs(db, problems);
  if (!ids.ok()) return Fail("configs", ids.status());
  std::vector<tuna::schema::NewFindResult> finds;
  std::vector<tuna::schema::NewPerfResult> perfs;
  int64_t n = 0;
  for (int64_t i = 0; i < configs && n < entries; ++i) {
    for (int s = 1; s <= solvers && n < entries; ++s, ++n) {
      const double time = 0.01 + 0.001 * static_cast<double>((i * 7919 + s * 104729) % 5000);
      finds.push_back({*session, (*ids)[i], s, std::nullopt, time, 1024 * s, "", true});
      perfs.push_back({*session, (*ids)[i], s, std::nullopt,
                       std::to_string(s) + "," + std::to_string(i % 97), time, 0, 10, true});
    }
  }
  if (auto st = tuna::schema::InsertFindResults(db, finds); !st.ok()) return Fail("find", st);
  if (auto st = tuna::schema::InsertPerfResults(db, perfs); !st.ok()) return Fail("perf", st);
  const auto t1 = Clock::now();
  std::printf("inserted %lld configs, %lld find + %lld perf results in %.1f s (not timed below)\n",
              static_cast<long long>(configs), static_cast<long long>(finds.size()),
              static_cast<long long>(perfs.size()), Seconds(t0, t1));

  const std::string dir =
      (std::filesystem::temp_directory_path() / ("tuna_export_bench_" + test_db->name)).string();
  tuna::exporter::ExportOptions o;
  o.session_id = *session;
  o.output_dir = dir;
  o.algorithm_for = [](std::string_view, tuna::Direction) -> absl::StatusOr<std::string> {
    return std::string("miopenConvolutionFwdAlgoDirect");
  };
  for (int all = 0; all <= 1; ++all) {
    o.formats = {tuna::exporter::ExportFormat::kFindDb};
    if (all == 1) o.formats = tuna::exporter::kAllExportFormats;
    for (int r = 0; r < repeats; ++r) {
      const auto a = Clock::now();
      auto report = tuna::exporter::ExportSession(db, o);
      const auto b = Clock::now();
      if (!report.ok()) return Fail("export", report.status());
      std::printf("%s run %d: %.3f s  (find db %lld keys / %lld entries, %lld bytes; "
                  "perf db %lld rows)\n",
                  all ? "find+perf+kdb" : "find db only ", r + 1, Seconds(a, b),
                  static_cast<long long>(report->find.keys),
                  static_cast<long long>(report->find.entries),
                  static_cast<long long>(std::filesystem::file_size(report->find.path)),
                  static_cast<long long>(report->perf.entries));
    }
  }
  std::filesystem::remove_all(dir);
  tuna::testing::DropTestDatabase(test_db->name);
  return 0;
}
