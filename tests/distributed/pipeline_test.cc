// The one-machine pipeline (RunLocalPipeline) on 3 small configs against the test MariaDB:
// every job finishes, the three db files are written, and the find db read back has an entry
// per config. The executor children are the built `tuna` binary (`worker --executor`).
#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "pipeline/local_pipeline.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/db/find_db.h"

namespace tuna {
namespace {

TEST_CASE_METHOD(testing::MariadbTest, "the local pipeline tunes a file and exports three db files",
                 "[mariadb][distributed]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir = std::filesystem::path(tmp ? tmp : "/tmp") / "pipeline";
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "three.txt").string();
  {
    std::ofstream out(file);
    out << "# three small problems\n" << testing::SmallDriverLines(3);
  }
  pipeline::LocalPipelineOptions o;
  o.file = file;
  o.backend = "cpu";
  o.workers = 2;
  o.compile_jobs = 1;
  o.tuning.budget = 2;
  o.tuning.repetitions = 2;
  o.output_dir = (dir / "out").string();
  o.executor_argv = {tuna_bin, "worker", "--executor"};
  o.max_duration = absl::Seconds(150);
  std::vector<std::string> lines;
  o.progress = [&](const std::string& l) { lines.push_back(l); };
  auto r = pipeline::RunLocalPipeline(db(), o);
  REQUIRE(r.ok());
  INFO(pipeline::FormatPipelineSummary(*r));
  CHECK(r->configs == 3);
  CHECK(r->jobs > 0);
  CHECK(r->jobs_done == r->jobs);
  CHECK(r->jobs_failed == 0);
  CHECK(r->jobs_unfinished == 0);
  CHECK(!lines.empty());
  REQUIRE(r->files.size() == 3);
  for (const std::string& f : r->files) CHECK(std::filesystem::file_size(f) > 0);
  REQUIRE(r->best.size() == 3);
  for (const auto& b : r->best) {
    CHECK(!b.solver.empty());
    CHECK(b.time_ms > 0);
  }
  std::string fdb;
  for (const std::string& f : r->files) {
    if (f.size() > 8 && f.substr(f.size() - 8) == ".fdb.txt") fdb = f;
  }
  REQUIRE(!fdb.empty());
  auto read = db::ReadFindDbFile(fdb);
  REQUIRE(read.ok());
  CHECK(read->warnings.empty());
  CHECK(read->records.size() == 3);
  for (const auto& [key, entries] : read->records) CHECK(!entries.empty());
  const std::string summary = pipeline::FormatPipelineSummary(*r);
  CHECK(summary.find("3 config(s)") != std::string::npos);

  // Find ran after perf and timed the tuned params: every find result of a tuned solver
  // carries its perf result's params.
  const int64_t tuned = testing::CountRows(
      db(), "SELECT COUNT(*) FROM find_result f JOIN perf_result p ON p.session_id = f.session_id "
            "AND p.config_id = f.config_id AND p.solver_id = f.solver_id");
  const int64_t same = testing::CountRows(
      db(), "SELECT COUNT(*) FROM find_result f JOIN perf_result p ON p.session_id = f.session_id "
            "AND p.config_id = f.config_id AND p.solver_id = f.solver_id AND p.params = f.params");
  CHECK(tuned > 0);
  CHECK(same == tuned);
}

}  // namespace
}  // namespace tuna
