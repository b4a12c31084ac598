// `tuna import-db` of MIOpen's shipped gfx942 find db and perf db against a real MariaDB.
#include <sqlite3.h>

#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "admin/import_db.h"
#include "admin/solver_records.h"
#include "catch2/catch.hpp"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "tests/admin/test_solvers.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/perf_db_text.h"
#include "exporter/exporter.h"
#include "exporter/registry_algorithms.h"
#include "schema/store/result_store.h"
#include "tuner_core/solver/registry.h"
#include <filesystem>
#include <fstream>
#include "tuner_core/problem/keys.h"
#include "absl/strings/str_cat.h"

using namespace tuna;
using tuna::testing::MariadbTest;

namespace {

const char* kFdb = "tests/problem/testdata/miopen/gfx942130.HIP.fdb.txt";
const char* kPdb = "tests/problem/testdata/miopen/gfx942130.db";
// 815 lines of MIOpen's MI100 find db (gfx90878): every key of it that an earlier tuna refused
// (MIOpen's clamp of an output to 1, tensors above 2^32 elements, INT8) and 300 others.
const char* kMi100 = "tests/admin/testdata/gfx90878_excerpt.HIP.fdb.txt";

std::string TmpDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

int64_t Scalar(schema::Database& db, const std::string& sql) {
  auto rows = db.Query(sql);
  REQUIRE(rows.ok());
  return (*rows)[0].Int(0);
}

int64_t NewSession(schema::Database& db) {
  schema::SessionStore sessions(db);
  schema::SessionRecord rec;
  rec.arch = "gfx942";
  rec.num_cu = 304;
  rec.backend = "HIP";
  rec.label = "imported";
  auto id = sessions.Create(rec);
  REQUIRE(id.ok());
  return *id;
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "import-db loads every entry of the gfx942 find db and perf db",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  const int64_t session = NewSession(db());

  auto fdb = db::ReadFindDbFile(kFdb);
  REQUIRE(fdb.ok());
  REQUIRE(fdb->records.size() == 9600);
  int64_t entries = 0;
  std::set<std::string> names;
  for (const auto& [key, list] : fdb->records) {
    entries += static_cast<int64_t>(list.size());
    for (const auto& e : list) names.insert(e.solver);
  }

  admin::ImportDbOptions o;
  o.session_id = session;
  o.path = kFdb;
  o.tag = "gfx942-fdb";
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(r.ok());
  CHECK(r->format == "find");
  CHECK(r->keys == 9600);
  CHECK(r->entries == entries);
  CHECK(r->skipped == 0);
  CHECK(r->configs_new == 9600);
  CHECK(r->results_added == entries);
  CHECK(r->tags_added == 9600);
  CHECK(r->solvers_added == static_cast<int64_t>(names.size()));
  CHECK(r->unknown_solvers.size() == names.size() - 1);  // GemmBwd1x1_stride1 is registered
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 9600);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result") == entries);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result WHERE alg_lib LIKE 'miopenConvolution%'") ==
        entries);
  // The registry's solver keeps its id and is valid; every other name is a placeholder.
  CHECK(Scalar(db(), "SELECT id FROM solver WHERE name = 'GemmBwd1x1_stride1'") == 1004);
  CHECK(Scalar(db(), "SELECT valid FROM solver WHERE name = 'GemmBwd1x1_stride1'") == 1);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver WHERE valid = 0 AND id >= 1000000") ==
        static_cast<int64_t>(names.size()) - 1);
  // A value survives exactly: the first entry of the first key.
  const auto& first = *fdb->records.begin();
  auto row = db().Query(
      "SELECT f.kernel_time, f.workspace, f.alg_lib FROM find_result f JOIN solver s ON s.id = "
      "f.solver_id WHERE s.name = ? ORDER BY f.kernel_time",
      {first.second[0].solver});
  REQUIRE(row.ok());
  bool found = false;
  for (const auto& x : *row) {
    found = found || (static_cast<float>(x.Double(0)) == first.second[0].time_ms &&
                      x.Int(1) == static_cast<int64_t>(first.second[0].workspace) &&
                      x.String(2) == first.second[0].algorithm);
  }
  CHECK(found);

  // Idempotent.
  auto again = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(again.ok());
  CHECK(again->configs_new == 0);
  CHECK(again->results_added == 0);
  CHECK(again->results_existing == entries);
  CHECK(again->solvers_added == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result") == entries);

  // The perf db: its configs are mostly the find db's problems.
  auto reader = db::PerfDbReader::Open(kPdb);
  REQUIRE(reader.ok());
  const int64_t pdb_configs = *reader->CountConfigs();
  const int64_t pdb_rows = *reader->CountRows();
  REQUIRE(pdb_configs == 9393);
  admin::ImportDbOptions p;
  p.session_id = session;
  p.path = kPdb;
  auto pr = admin::ImportMiopenDb(db(), *registry, p);
  REQUIRE(pr.ok());
  CHECK(pr->format == "perf");
  CHECK(pr->keys == pdb_configs);
  CHECK(pr->entries == pdb_rows);
  CHECK(pr->results_added == pdb_rows);
  CHECK(pr->configs_new + pr->configs_known == pdb_configs);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM perf_result") == pdb_rows);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM perf_result WHERE kernel_time = -1 AND workspace = -1 "
                     "AND params <> ''") == pdb_rows);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 9600 + pr->configs_new);
  auto pagain = admin::ImportMiopenDb(db(), *registry, p);
  REQUIRE(pagain.ok());
  CHECK(pagain->results_added == 0);
}

TEST_CASE_METHOD(MariadbTest, "A placeholder solver is replaced when the registry gains it",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  const int64_t session = NewSession(db());
  admin::ImportDbOptions o;
  o.session_id = session;
  o.path = kFdb;
  REQUIRE(admin::ImportMiopenDb(db(), *registry, o).ok());
  const int64_t rows =
      Scalar(db(), "SELECT COUNT(*) FROM find_result f JOIN solver s ON s.id = f.solver_id WHERE "
                   "s.name = 'ConvBinWinogradRxSf2x3'");
  REQUIRE(rows > 0);
  REQUIRE(Scalar(db(), "SELECT id FROM solver WHERE name = 'ConvBinWinogradRxSf2x3'") >=
          schema::kImportedSolverIdBase);

  std::vector<schema::SolverRecord> records = admin::SolverRecords(*registry);
  records.push_back({1005, "ConvBinWinogradRxSf2x3", false, "FBW", false, true});
  schema::SolverStore solvers(db());
  auto sync = solvers.Sync(records);
  REQUIRE(sync.ok());
  CHECK(Scalar(db(), "SELECT id FROM solver WHERE name = 'ConvBinWinogradRxSf2x3'") == 1005);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result WHERE solver_id = 1005") == rows);
  // The other placeholders are not registry solvers: they stay, invalid.
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver WHERE id >= 1000000 AND valid = 1") == 0);
}

TEST_CASE_METHOD(MariadbTest, "import-db refuses unknown sessions and bad keys, writing nothing",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  admin::ImportDbOptions o;
  o.session_id = 12345;
  o.path = kFdb;
  CHECK(admin::ImportMiopenDb(db(), *registry, o).status().code() == absl::StatusCode::kNotFound);

  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/bad.fdb.txt";
  {
    FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs(
        "64-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=ConvDirectNaiveConvFwd:1.5,0,"
        "miopenConvolutionFwdAlgoDirect\n"
        "64-56-56-1x1-64-55-56-32-0x0-1x1-1x1-0-NCHW-FP32-F=ConvDirectNaiveConvFwd:1.5,0,"
        "miopenConvolutionFwdAlgoDirect\n",
        f);
    std::fclose(f);
  }
  o.session_id = NewSession(db());
  o.path = path;
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("64-56-56-1x1-64-55-56") != std::string::npos);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver") == 0);

  o.skip_invalid = true;
  auto skipped = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(skipped.ok());
  CHECK(skipped->skipped == 1);
  CHECK(skipped->results_added == 1);
}

namespace {

const char* kKeyA = "64-56-56-1x1-64-56-56-32-0x0-1x1-1x1-0-NCHW-FP32-F";
const char* kKeyB = "64-56-56-3x3-64-56-56-32-1x1-1x1-1x1-0-NCHW-FP32-F";

std::string WriteText(const std::string& name, const std::string& text) {
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  FILE* f = std::fopen(path.c_str(), "w");
  REQUIRE(f != nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

}  // namespace

TEST_CASE_METHOD(MariadbTest,
                 "import-db refuses times < 0 and workspaces beyond int64, naming key and solver",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  const std::string path = WriteText(
      "times.fdb.txt",
      absl::StrCat(kKeyA, "=ConvDirectNaiveConvFwd:-1,0,miopenConvolutionFwdAlgoDirect;"
                   "GemmFwd1x1_0_1:2.5,0,miopenConvolutionFwdAlgoGEMM\n",
                   kKeyB, "=ConvDirectNaiveConvFwd:0,0,miopenConvolutionFwdAlgoDirect;"
                   "GemmFwdRest:3.5,18446744073709551615,miopenConvolutionFwdAlgoGEMM;"
                   "ConvOclDirectFwd:1.25,4096,miopenConvolutionFwdAlgoDirect\n"));
  admin::ImportDbOptions o;
  o.session_id = NewSession(db());
  o.path = path;
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string msg(r.status().message());
  INFO(msg);
  CHECK(msg.find(absl::StrCat("key ", kKeyA, " solver ConvDirectNaiveConvFwd: time -1 ms")) !=
        std::string::npos);
  // 0 ms is a measurement (MIOpen's shipped dbs hold such entries): not refused.
  CHECK(msg.find(absl::StrCat("key ", kKeyB, " solver ConvDirectNaiveConvFwd")) ==
        std::string::npos);
  CHECK(msg.find(absl::StrCat("key ", kKeyB, " solver GemmFwdRest: workspace "
                              "18446744073709551615 bytes exceeds the int64 range")) !=
        std::string::npos);
  // All or nothing: no config, solver or result row was written.
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result") == 0);

  // --skip_invalid drops exactly the two bad entries.
  o.skip_invalid = true;
  auto skipped = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(skipped.ok());
  CHECK(skipped->skipped == 2);
  CHECK(skipped->results_added == 3);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result WHERE kernel_time < 0 OR workspace < 0") ==
        0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result WHERE kernel_time = 0") == 1);
}

TEST_CASE_METHOD(MariadbTest, "import-db refuses perf-db rows without params, naming key and solver",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  auto problem = ParseFindDbKey(kKeyA);
  REQUIRE(problem.ok());
  db::PerfDbWriter w;
  w.Add(ToPerfDbConfig(*problem), "ConvOclDirectFwd", "");
  w.Add(ToPerfDbConfig(*problem), "ConvHipImplicitGemmV4R1Fwd", "16,32,4");
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/empty_params.db";
  REQUIRE(w.Write(path).ok());
  admin::ImportDbOptions o;
  o.session_id = NewSession(db());
  o.path = path;
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE_FALSE(r.ok());
  const std::string msg(r.status().message());
  INFO(msg);
  CHECK(msg.find(absl::StrCat("config 1 key ", kKeyA, " solver ConvOclDirectFwd: empty params")) !=
        std::string::npos);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM perf_result") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 0);
}

TEST_CASE_METHOD(MariadbTest, "Imported rows never overwrite results measured by tuna",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  const int64_t session = NewSession(db());
  admin::ImportDbOptions o;
  o.session_id = session;
  o.path = WriteText("first.fdb.txt",
                     absl::StrCat(kKeyA, "=ConvDirectNaiveConvFwd:2,0,miopenConvolutionFwdAlgoDirect;"
                                  "GemmFwd1x1_0_1:3,0,miopenConvolutionFwdAlgoGEMM\n"));
  REQUIRE(admin::ImportMiopenDb(db(), *registry, o).ok());
  // tuna measures and verifies one of them (what an eval step's report writes).
  REQUIRE(db().Execute("UPDATE find_result f JOIN solver s ON s.id = f.solver_id SET "
                       "f.kernel_time = 0.75, f.workspace = 64, f.verified = TRUE WHERE "
                       "s.name = 'ConvDirectNaiveConvFwd'")
              .ok());
  // A newer file says other things about both.
  o.path = WriteText("second.fdb.txt",
                     absl::StrCat(kKeyA, "=ConvDirectNaiveConvFwd:0.25,8,miopenConvolutionFwdAlgoDirect;"
                                  "GemmFwd1x1_0_1:1.5,16,miopenConvolutionFwdAlgoGEMM\n"));
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(r.ok());
  CHECK(r->results_existing == 2);
  auto rows = db().Query(
      "SELECT s.name, f.kernel_time, f.workspace, f.verified FROM find_result f JOIN solver s "
      "ON s.id = f.solver_id ORDER BY s.name");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  // The measured row keeps its values and its verified flag.
  CHECK((*rows)[0].String(0) == "ConvDirectNaiveConvFwd");
  CHECK((*rows)[0].Double(1) == 0.75);
  CHECK((*rows)[0].Int(2) == 64);
  CHECK((*rows)[0].Int(3) == 1);
  // The imported one takes the file's values and stays unverified.
  CHECK((*rows)[1].String(0) == "GemmFwd1x1_0_1");
  CHECK((*rows)[1].Double(1) == 1.5);
  CHECK((*rows)[1].Int(2) == 16);
  CHECK((*rows)[1].Int(3) == 0);

  // Perf db: a row tuned by a job keeps its params.
  auto problem = ParseFindDbKey(kKeyA);
  REQUIRE(problem.ok());
  db::PerfDbWriter w;
  w.Add(ToPerfDbConfig(*problem), "ConvOclDirectFwd", "1,2,3");
  const std::string pdb = std::string(std::getenv("TEST_TMPDIR")) + "/measured.db";
  REQUIRE(w.Write(pdb).ok());
  o.path = pdb;
  REQUIRE(admin::ImportMiopenDb(db(), *registry, o).ok());
  REQUIRE(db().Execute("UPDATE perf_result SET params = 'tuned', kernel_time = 0.5, "
                       "verified = TRUE").ok());
  db::PerfDbWriter w2;
  w2.Add(ToPerfDbConfig(*problem), "ConvOclDirectFwd", "9,9,9");
  REQUIRE(w2.Write(pdb).ok());
  REQUIRE(admin::ImportMiopenDb(db(), *registry, o).ok());
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM perf_result WHERE params = 'tuned' AND verified AND "
                     "kernel_time = 0.5") == 1);
}

TEST_CASE_METHOD(MariadbTest,
                 "import-db aborts a perf db whose perf_db is a view over an endless query",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  auto problem = ParseFindDbKey(kKeyA);
  REQUIRE(problem.ok());
  db::PerfDbWriter w;
  w.Add(ToPerfDbConfig(*problem), "ConvOclDirectFwd", "1,2,3");
  const std::string path = std::string(std::getenv("TEST_TMPDIR")) + "/endless.db";
  REQUIRE(w.Write(path).ok());
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(
        raw,
        "DROP TABLE perf_db; CREATE VIEW perf_db AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL "
        "SELECT n + 1 FROM r) SELECT n AS id, 'ConvOclDirectFwd' AS solver, 1 AS config, "
        "'1,2,3' AS params FROM r;",
        nullptr, nullptr, &err);
    INFO((err != nullptr ? err : ""));
    sqlite3_free(err);
    sqlite3_close(raw);
    REQUIRE(rc == SQLITE_OK);
  }
  admin::ImportDbOptions o;
  o.session_id = NewSession(db());
  o.path = path;
  o.sqlite_timeout = std::chrono::milliseconds(300);
  const auto start = std::chrono::steady_clock::now();
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(r.status().code() == absl::StatusCode::kDeadlineExceeded);
  CHECK(std::string(r.status().message()).find("took longer than 300 ms") != std::string::npos);
  CHECK(took < std::chrono::seconds(5));
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM perf_result") == 0);
}

TEST_CASE_METHOD(MariadbTest, "a running import does not block reports",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  const int64_t live = NewSession(db());
  admin::ImportDbOptions o;
  o.session_id = live;
  o.path = kFdb;
  REQUIRE(admin::ImportMiopenDb(db(), *registry, o).ok());
  const int64_t config = Scalar(db(), "SELECT MIN(id) FROM conv_config");
  const int64_t solver = Scalar(db(), "SELECT id FROM solver WHERE name = 'GemmBwd1x1_stride1'");
  const std::vector<int64_t> others = {NewSession(db()), NewSession(db())};

  // While the second import's transaction is open — once before its first batch, once after a
  // batch has written configs (the same ones: the file is imported again) and results — a
  // worker's report for another session (a result row whose foreign keys need the config and
  // solver rows) goes through at once.
  o.session_id = NewSession(db());
  std::vector<int64_t> reported_at;
  std::vector<double> took_ms;
  o.progress = [&](std::string_view stage, int64_t done, int64_t) {
    if (stage != "entries written" || (done != 0 && reported_at.size() != 1) ||
        reported_at.size() >= 2) {
      return;
    }
    reported_at.push_back(done);
    const auto start = std::chrono::steady_clock::now();
    auto st = db().WithConnection([&](schema::Connection& c) -> absl::Status {
      if (auto s = c.ExecuteUnprepared("SET SESSION innodb_lock_wait_timeout = 1"); !s.ok()) {
        return s;
      }
      return c
          .Execute("INSERT INTO find_result (session_id, config_id, solver_id, job_id, "
                   "kernel_time, workspace, params, verified) VALUES (?, ?, ?, NULL, ?, 0, '', "
                   "TRUE)",
                   {others[reported_at.size() - 1], config, solver, 0.5})
          .status();
    });
    took_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    CHECK(st.ok());
  };
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(r.ok());
  REQUIRE(reported_at.size() == 2);
  CHECK(reported_at[0] == 0);
  CHECK(reported_at[1] > 0);
  std::printf("import-db lock: a live report took %.1f ms before the first batch, %.1f ms after "
              "%lld entries were written in the open transaction\n",
              took_ms[0], took_ms[1], static_cast<long long>(reported_at[1]));
  CHECK(took_ms[0] < 1000);
  CHECK(took_ms[1] < 1000);
  for (int64_t other : others) {
    CHECK(Scalar(db(), "SELECT COUNT(*) FROM find_result WHERE session_id = " +
                       std::to_string(other)) == 1);
  }
}

TEST_CASE_METHOD(MariadbTest,
                 "import-db takes every key of MIOpen's MI100 find db; export --merge-into keeps "
                 "every key and entry",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  schema::SessionStore sessions(db());
  schema::SessionRecord rec;
  rec.arch = "gfx908";
  rec.num_cu = 120;
  rec.backend = "HIP";
  rec.label = "mi100";
  auto session = sessions.Create(rec);
  REQUIRE(session.ok());

  auto file = db::ReadFindDbFile(kMi100);
  REQUIRE(file.ok());
  REQUIRE(file->warnings.empty());
  REQUIRE(file->records.size() == 815);
  admin::ImportDbOptions o;
  o.session_id = *session;
  o.path = kMi100;  // no skip_invalid: every key must import
  auto r = admin::ImportMiopenDb(db(), *registry, o);
  INFO((r.ok() ? std::string() : std::string(r.status().message()).substr(0, 2000)));
  REQUIRE(r.ok());
  CHECK(r->keys == 815);
  CHECK(r->skipped == 0);
  CHECK(r->configs_new == 815);

  // The stored configs print back as the file's keys (INT8 ones in today's INT8INT8INT32 form).
  auto ids = db().Query("SELECT id FROM conv_config");
  REQUIRE(ids.ok());
  std::vector<int64_t> config_ids;
  for (const auto& row : *ids) config_ids.push_back(row.Int(0));
  auto configs = schema::ReadConfigs(db(), config_ids);
  REQUIRE(configs.ok());
  CHECK(configs->bad.empty());
  std::set<std::string> keys;
  for (const auto& [id, p] : configs->problems) keys.insert(FindDbKey(p));
  int64_t int8 = 0;
  for (const auto& [key, entries] : file->records) {
    if (key.find("-INT8-") != std::string::npos) {
      ++int8;
      std::string now = key;
      now.replace(now.find("-INT8-"), 6, "-INT8INT8INT32-");
      CHECK(keys.count(now) == 1);
    } else {
      INFO(key);
      CHECK(keys.count(key) == 1);
    }
  }
  CHECK(int8 == 48);

  // Export merged into the real file: every key and entry of it again.
  const std::string dir = TmpDir("mi100_merge");
  std::filesystem::copy_file(kMi100, dir + "/gfx90878.HIP.fdb.txt");
  exporter::ExportOptions e;
  e.session_id = *session;
  e.formats = {exporter::ExportFormat::kFindDb};
  e.merge_dir = dir;
  e.output_dir = dir;
  e.algorithm_for = exporter::RegistryAlgorithmResolver(*registry);
  auto exported = exporter::ExportSession(db(), e);
  REQUIRE(exported.ok());
  CHECK(exported->find.merged);
  auto back = db::ReadFindDbFile(dir + "/gfx90878.HIP.fdb.txt");
  REQUIRE(back.ok());
  CHECK(back->warnings.empty());
  CHECK(back->records == file->records);
}

TEST_CASE_METHOD(MariadbTest, "a text perf db (.db.txt) imports as its SQLite form does",
                 "[mariadb][admin][import-db]") {
  auto registry = testing::MakeTestRegistry();
  const int64_t a = NewSession(db());
  const int64_t b = NewSession(db());
  auto reader = db::PerfDbReader::Open(kPdb);
  REQUIRE(reader.ok());
  auto rows = reader->ReadAll();
  REQUIRE(rows.ok());
  // MIOpen's tools/sqlite2txt of the shipped gfx942 perf db.
  const std::string text_path = TmpDir("perf_text") + "/gfx942130.db.txt";
  REQUIRE(db::WritePerfDbTextFile(text_path, db::PerfDbRowsToText(*rows)).ok());

  admin::ImportDbOptions o;
  o.session_id = a;
  o.path = kPdb;
  auto sqlite = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(sqlite.ok());
  o.session_id = b;
  o.path = text_path;
  auto text = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE(text.ok());
  CHECK(text->format == "perf");
  CHECK(text->keys == sqlite->keys);
  CHECK(text->entries == sqlite->entries);
  CHECK(text->configs_new == 0);  // the same problems as the SQLite rows
  CHECK(text->results_added == sqlite->results_added);
  CHECK(Scalar(db(), absl::StrCat("SELECT COUNT(*) FROM perf_result x JOIN perf_result y ON "
                                  "y.config_id = x.config_id AND y.solver_id = x.solver_id AND "
                                  "y.params = x.params WHERE x.session_id = ",
                                  a, " AND y.session_id = ", b)) == sqlite->entries);

  // A bad key is named with its line content; nothing is imported.
  const std::string bad = TmpDir("perf_text_bad") + "/bad.udb.txt";
  std::ofstream(bad) << "2x3x32x32x1x3x3x1x64x100x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF=A:1\n"
                     << "2x3x32x32x1x3x3x1x64x100x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP99xF=A:1\n";
  o.path = bad;
  auto refused = admin::ImportMiopenDb(db(), *registry, o);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(std::string(refused.status().message()), Catch::Contains("FP99"));
}
