// Integration tests of ExportSession against a real MariaDB (tests/fixtures): results are inserted
// with result_store's helpers, exported, compared with golden files and read back with the
// tuner_core/db readers.
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "catch2/catch.hpp"
#include "exporter/exporter.h"
#include "exporter/output_dir.h"
#include "schema/store/result_store.h"
#include "tests/exporter/export_test_util.h"
#include "tests/exporter/session_fixture.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/kernel_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/perf_db_text.h"
#include "tuner_core/problem/keys.h"

namespace tuna::exporter::test {
namespace {

using schema::Database;
using tuna::testing::MariadbTest;

// The kernel blob of the second kernel linked to config 1's S3 job (tests that a job with two
// kernels exports both, and that -mcpu already present is not appended twice).
void LinkSecondKernel(Database& db, int64_t session) {
  auto rows = db.Query(
      "SELECT r.job_id FROM find_result r WHERE r.session_id = ? AND r.solver_id = 3 "
      "AND r.kernel_time = 0.25",
      {session});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  auto kernel = schema::InsertKernel(
      db, {"gfx90a", "hipcc 6.2", "tuna_common.cu", "-O3 -mcpu=gfx90a:xnack-", "common code"});
  REQUIRE(kernel.ok());
  REQUIRE(schema::LinkJobKernel(db, (*rows)[0].Int(0), *kernel).ok());
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "export writes the golden files", "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t session = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  LinkSecondKernel(db(), session);
  const std::string dir = TmpDir("golden");
  ExportOptions o = Options(session, dir);
  // Every stage is reported when it begins (nothing done yet) and when it ends (all done), in
  // this order, so a progress display can time each one.
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> calls;
  o.progress = [&](std::string_view stage, int64_t done, int64_t total) {
    calls.push_back({std::string(stage), {done, total}});
  };
  auto report = ExportSession(db(), o);
  REQUIRE(report.ok());
  std::vector<std::string> stages;
  for (const auto& c : calls) {
    if (stages.empty() || stages.back() != c.first) {
      CHECK(c.second.first == 0);
      stages.push_back(c.first);
    }
  }
  CHECK(stages == std::vector<std::string>{"read find results", "read perf results",
                                           "read configs", "write perf db", "write find db",
                                           "read kernels", "write kernel db"});
  std::map<std::string, std::pair<int64_t, int64_t>> last;
  for (const auto& c : calls) last[c.first] = c.second;
  CHECK(last["read find results"] == std::make_pair(int64_t{10}, int64_t{10}));
  CHECK(last["read perf results"] == std::make_pair(int64_t{3}, int64_t{3}));
  CHECK(last["write find db"] == std::make_pair(int64_t{3}, int64_t{3}));
  CHECK(last["write perf db"] == std::make_pair(int64_t{3}, int64_t{3}));
  CHECK(last["write kernel db"] == std::make_pair(int64_t{3}, int64_t{3}));

  CHECK(report->basename == "gfx90a68");
  CHECK(report->unfinished_jobs == 0);
  CHECK(report->find_results.total == 13);
  CHECK(report->find_results.exportable == 10);  // minus unverified, invalid solver, -1
  CHECK(report->perf_results.total == 6);
  CHECK(report->perf_results.exportable == 3);
  CHECK(report->skipped_unknown_solver == 1);
  CHECK(report->skipped_bad_config == 0);

  CHECK(report->find.path == dir + "/gfx90a68.HIP.fdb.txt");
  CHECK(report->find.keys == 3);
  CHECK(report->find.entries == 3 + 4 + 1);
  CHECK_FALSE(report->find.merged);
  CheckGolden("gfx90a68.HIP.fdb.txt", Slurp(dir + "/gfx90a68.HIP.fdb.txt"));

  CHECK(report->perf.keys == 2);
  CHECK(report->perf.entries == 3);
  CheckGolden("gfx90a68.db.dump", DumpPerfDb(dir + "/gfx90a68.db"));

  CHECK(report->kernel.entries == 3);
  CheckGolden("gfx90a68.kdb.dump", DumpKernelDb(dir + "/gfx90a68.kdb"));
  CHECK_FALSE(std::filesystem::exists(dir + "/gfx90a68.db.tmp"));
}

TEST_CASE_METHOD(MariadbTest, "exported files read back as the same entries",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t session = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  LinkSecondKernel(db(), session);
  const std::string dir = TmpDir("readback");
  REQUIRE(ExportSession(db(), Options(session, dir)).ok());
  const std::vector<Problem> p = Problems();

  auto fdb = db::ReadFindDbFile(dir + "/gfx90a68.HIP.fdb.txt");
  REQUIRE(fdb.ok());
  CHECK(fdb->warnings.empty());
  REQUIRE(fdb->records.size() == 3);
  const auto& f0 = fdb->records.at(FindDbKey(p[0]));
  CHECK(f0 == std::vector<db::FindDbEntry>{
                  {"TunaDirectTiled", 0.12f, 1024, "miopenConvolutionFwdAlgoDirect"},
                  {"TunaIgemm", 0.2f, 0, "miopenConvolutionFwdAlgoImplicitGEMM"},
                  {"ConvDirectNaiveConvFwd", 0.5f, 0, "miopenConvolutionFwdAlgoDirect"}});
  const auto& f1 = fdb->records.at(FindDbKey(p[1]));
  CHECK(f1 == std::vector<db::FindDbEntry>{
                  {"TunaIgemm", 0.25f, 4096, "miopenConvolutionBwdDataAlgoImplicitGEMM"},
                  {"TunaDirectTiled", 0.3f, 0, "miopenConvolutionBwdDataAlgoDirect"},
                  {"TunaFft", 0.35f, 0, "miopenConvolutionBwdDataAlgoFFT"},
                  {"TunaWinograd", 0.4f, 0, "miopenConvolutionBwdDataAlgoWinograd"}});
  CHECK(fdb->records.at(FindDbKey(p[2])) ==
        std::vector<db::FindDbEntry>{
            {"ConvDirectNaiveConvFwd", 1.5f, 0, "miopenConvolutionBwdWeightsAlgoDirect"}});

  auto pdb = db::PerfDbReader::Open(dir + "/gfx90a68.db");
  REQUIRE(pdb.ok());
  auto l0 = pdb->Lookup(ToPerfDbConfig(p[0]));
  REQUIRE(l0.ok());
  std::sort(l0->begin(), l0->end(),
            [](const auto& a, const auto& b) { return a.solver < b.solver; });
  CHECK(*l0 == std::vector<db::SolverParams>{{"TunaDirectTiled", "8,8,2"}, {"TunaIgemm", "64,32"}});
  auto l1 = pdb->Lookup(ToPerfDbConfig(p[1]));
  REQUIRE(l1.ok());
  CHECK(*l1 == std::vector<db::SolverParams>{{"TunaIgemm", "32,32"}});
  auto l2 = pdb->Lookup(ToPerfDbConfig(p[2]));
  REQUIRE(l2.ok());
  CHECK(l2->empty());

  auto kdb = db::KernelDbReader::Open(dir + "/gfx90a68.kdb");
  REQUIRE(kdb.ok());
  auto entries = kdb->ReadAll();
  REQUIRE(entries.ok());
  CHECK(*entries == std::vector<db::KernelDbEntry>{
                        {"tuna_common.cu.o", " -O3 -mcpu=gfx90a:xnack-", "common code"},
                        {"tuna_direct_tiled.cu.o", " -DTILE=8 -DN=2 -mcpu=gfx90a", "tiled code object"},
                        {"tuna_igemm.cu.o", " -DBLK=32 -mcpu=gfx90a", kBinaryCode}});
}

TEST_CASE_METHOD(MariadbTest, "the text perf db holds the SQLite perf db's rows; merges keep both",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t session = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const std::string dir = TmpDir("perftext");
  ExportOptions o = Options(session, dir);
  o.formats = {ExportFormat::kPerfDb, ExportFormat::kPerfDbText};
  auto report = ExportSession(db(), o);
  REQUIRE(report.ok());
  CHECK(report->perf.written);
  CHECK(report->perf_text.written);
  CHECK(report->perf_text.path == dir + "/gfx90a68.db.txt");
  CHECK_FALSE(std::filesystem::exists(dir + "/gfx90a68.HIP.fdb.txt"));
  // sqlite2txt of the SQLite file is the text file, byte for byte.
  auto sqlite = db::PerfDbReader::Open(dir + "/gfx90a68.db");
  REQUIRE(sqlite.ok());
  auto rows = sqlite->ReadAll();
  REQUIRE(rows.ok());
  auto text = db::SerializePerfDbText(db::PerfDbRowsToText(*rows));
  REQUIRE(text.ok());
  CHECK(*text == Slurp(dir + "/gfx90a68.db.txt"));
  CHECK(report->perf_text.entries == static_cast<int64_t>(rows->size()));
  const std::vector<Problem> p = Problems();
  CHECK_THAT(*text, Catch::Contains(PerfDbTextKey(p[0]) + "=TunaDirectTiled:8,8,2;TunaIgemm:64,32\n"));

  // Merge into an existing text db: its other keys stay, an unparsable key stays verbatim.
  const std::string merge = TmpDir("perftext_merge");
  const std::string other = "2x3x32x32x1x3x3x1x64x100x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF";
  std::ofstream(merge + "/gfx90a68.db.txt")
      << other << "=ConvAsm3x3U:7,8,4\nnot-a-text-key=X:1\n";
  ExportOptions m = Options(session, merge);
  m.formats = {ExportFormat::kPerfDbText};
  m.merge_dir = merge;
  auto merged = ExportSession(db(), m);
  REQUIRE(merged.ok());
  CHECK(merged->perf_text.merged);
  const std::string out = Slurp(merge + "/gfx90a68.db.txt");
  CHECK_THAT(out, Catch::Contains(other + "=ConvAsm3x3U:7,8,4\n"));
  CHECK_THAT(out, Catch::Contains("not-a-text-key=X:1\n"));
  CHECK_THAT(out, Catch::Contains(PerfDbTextKey(p[0]) + "=TunaDirectTiled:8,8,2;TunaIgemm:64,32\n"));
  CHECK(merged->perf_text.merge.kept == 2);
  CHECK_FALSE(merged->perf_text.warnings.empty());
}

TEST_CASE_METHOD(MariadbTest, "export is deterministic", "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  // The same results inserted in the opposite order (other result ids, other job ids).
  const int64_t b = InsertSessionData(db(), kTarget, FindsA(), PerfsA(), {}, /*reverse=*/true);
  const std::string d1 = TmpDir("det1"), d2 = TmpDir("det2"), d3 = TmpDir("det3");
  REQUIRE(ExportSession(db(), Options(a, d1)).ok());
  REQUIRE(ExportSession(db(), Options(a, d2)).ok());
  REQUIRE(ExportSession(db(), Options(b, d3)).ok());
  for (const char* name : {"gfx90a68.db", "gfx90a68.HIP.fdb.txt", "gfx90a68.kdb"}) {
    INFO(name);
    const std::string first = Slurp(d1 + "/" + name);
    CHECK(first.size() > 0);
    CHECK(first == Slurp(d2 + "/" + name));
    CHECK(first == Slurp(d3 + "/" + name));
  }
  // Re-export over the existing files: still the same bytes.
  REQUIRE(ExportSession(db(), Options(a, d1)).ok());
  CHECK(Slurp(d1 + "/gfx90a68.db") == Slurp(d2 + "/gfx90a68.db"));
}

TEST_CASE_METHOD(MariadbTest, "merge keeps the faster entry and reports what changed",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const std::string dir = TmpDir("merge");
  REQUIRE(ExportSession(db(), Options(a, dir)).ok());

  // Session B on the same target: config 0 only (configs 1, 2 must be kept untouched).
  const int64_t b = InsertSessionData(
      db(), kTarget,
      {
          {0, 2, 0.10, 512, true, "tuna_direct_tiled.cu", "-DTILE=8 -DN=2", "better tiled"},  // improved
          {0, 3, 0.25},   // slower than 0.2: existing kept
          {0, 7, 0.15},   // new solver for the key: added
      },
      {
          {0, 2, "16,4,1", 0.10},  // faster than the existing fdb time 0.12: improved
          {0, 3, "128,8", 0.25},   // slower than 0.2: existing params kept
          {0, 6, "2,2", 0.3},      // not in the existing perf db: added
      });
  ExportOptions o = Options(b, dir);
  o.merge_dir = dir;
  auto report = ExportSession(db(), o);
  REQUIRE(report.ok());

  CHECK(report->find.merged);
  CHECK(report->find.merge.added == 1);
  CHECK(report->find.merge.improved == 1);
  CHECK(report->find.merge.unchanged == 1);
  CHECK(report->find.merge.kept == 1 + 4 + 1);  // S1 of config 0, all of configs 1 and 2
  auto fdb = db::ReadFindDbFile(dir + "/gfx90a68.HIP.fdb.txt");
  REQUIRE(fdb.ok());
  const std::vector<Problem> p = Problems();
  CHECK(fdb->records.at(FindDbKey(p[0])) ==
        std::vector<db::FindDbEntry>{
            {"TunaDirectTiled", 0.10f, 512, "miopenConvolutionFwdAlgoDirect"},
            {"TunaFft", 0.15f, 0, "miopenConvolutionFwdAlgoFFT"},
            {"TunaIgemm", 0.2f, 0, "miopenConvolutionFwdAlgoImplicitGEMM"},
            {"ConvDirectNaiveConvFwd", 0.5f, 0, "miopenConvolutionFwdAlgoDirect"}});
  CHECK(fdb->records.at(FindDbKey(p[1])).size() == 4);
  CHECK(fdb->records.at(FindDbKey(p[2])).size() == 1);

  CHECK(report->perf.merged);
  CHECK(report->perf.merge.added == 1);
  CHECK(report->perf.merge.improved == 1);
  CHECK(report->perf.merge.unchanged == 1);
  CHECK(report->perf.merge.kept == 1);  // config 1's TunaIgemm
  CHECK(report->perf.merge.replaced_untimed == 0);
  auto pdb = db::PerfDbReader::Open(dir + "/gfx90a68.db");
  REQUIRE(pdb.ok());
  auto l0 = pdb->Lookup(ToPerfDbConfig(p[0]));
  REQUIRE(l0.ok());
  std::sort(l0->begin(), l0->end(),
            [](const auto& x, const auto& y) { return x.solver < y.solver; });
  CHECK(*l0 == std::vector<db::SolverParams>{
                   {"TunaDirectTiled", "16,4,1"}, {"TunaIgemm", "64,32"}, {"TunaWinograd", "2,2"}});
  auto l1 = pdb->Lookup(ToPerfDbConfig(p[1]));
  REQUIRE(l1.ok());
  CHECK(*l1 == std::vector<db::SolverParams>{{"TunaIgemm", "32,32"}});

  CHECK(report->kernel.merged);
  CHECK(report->kernel.merge.replaced == 1);  // same name and args, new code object
  CHECK(report->kernel.merge.kept == 1);      // config 1's igemm kernel
  CHECK(report->kernel.merge.added == 0);
  auto kdb = db::KernelDbReader::Open(dir + "/gfx90a68.kdb");
  REQUIRE(kdb.ok());
  auto blob = kdb->Find("tuna_direct_tiled.cu.o", " -DTILE=8 -DN=2 -mcpu=gfx90a");
  REQUIRE(blob.ok());
  CHECK(*blob == "better tiled");

  // Merging the same session again changes nothing.
  const std::string before = Slurp(dir + "/gfx90a68.HIP.fdb.txt");
  auto again = ExportSession(db(), o);
  REQUIRE(again.ok());
  CHECK(again->find.merge.added == 0);
  CHECK(again->find.merge.improved == 0);
  CHECK(again->perf.merge.unchanged == 3);
  CHECK(Slurp(dir + "/gfx90a68.HIP.fdb.txt") == before);
}

TEST_CASE_METHOD(MariadbTest, "a perf row without a known existing time is replaced",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t a = InsertSessionData(db(), kTarget, {}, {{0, 2, "8,8,2", 0.12}});
  const std::string dir = TmpDir("untimed");
  ExportOptions first = Options(a, dir);
  first.formats = {exporter::ExportFormat::kPerfDb};
  REQUIRE(ExportSession(db(), first).ok());
  const int64_t b = InsertSessionData(db(), kTarget, {}, {{0, 2, "4,4,4", 0.5}});
  ExportOptions o = Options(b, dir);
  o.formats = {exporter::ExportFormat::kPerfDb};
  o.merge_dir = dir;
  auto report = ExportSession(db(), o);
  REQUIRE(report.ok());
  CHECK(report->perf.merge.replaced_untimed == 1);
  CHECK_FALSE(std::filesystem::exists(dir + "/gfx90a68.HIP.fdb.txt"));
  auto pdb = db::PerfDbReader::Open(dir + "/gfx90a68.db");
  REQUIRE(pdb.ok());
  auto rows = pdb->ReadAll();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].params == "4,4,4");
}

TEST_CASE_METHOD(MariadbTest, "unfinished jobs: partial export, or refusal when required",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t s = InsertSessionData(db(), kTarget, FindsA(), PerfsA(),
                                      {{2, 2, "find", "new"},
                                       {2, 6, "find", "new"},
                                       {2, 7, "perf", "eval_start"},
                                       {2, 7, "find", "failed"}});
  const std::string dir = TmpDir("partial");
  auto report = ExportSession(db(), Options(s, dir));
  REQUIRE(report.ok());
  CHECK(report->unfinished_jobs == 3);
  int64_t find_new = 0, perf_eval = 0, failed = 0;
  for (const auto& j : report->jobs) {
    if (j.kind == "find" && j.state == "new") find_new = j.count;
    if (j.kind == "perf" && j.state == "eval_start") perf_eval = j.count;
    if (j.state == "failed") failed = j.count;
  }
  CHECK(find_new == 2);
  CHECK(perf_eval == 1);
  CHECK(failed == 1);
  CHECK(report->find.keys == 3);  // what is done is exported
  CHECK(std::filesystem::exists(dir + "/gfx90a68.HIP.fdb.txt"));

  const std::string refused = TmpDir("refused");
  ExportOptions o = Options(s, refused);
  o.require_complete = true;
  auto r = ExportSession(db(), o);
  REQUIRE_FALSE(r.ok());
  CHECK(absl::IsFailedPrecondition(r.status()));
  CHECK(std::string(r.status().message()).find("3 unfinished jobs") != std::string::npos);
  CHECK(std::filesystem::is_empty(refused));
}

TEST_CASE_METHOD(MariadbTest, "unverified results are never exported", "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t s = InsertSessionData(db(), kTarget, {{0, 2, 0.1, 0, false}, {1, 3, 0.2, 0, false}},
                                      {{0, 2, "8,8,2", 0.1, false}});
  const std::string dir = TmpDir("unverified");
  auto report = ExportSession(db(), Options(s, dir));
  REQUIRE(report.ok());
  CHECK(report->find_results.total == 2);
  CHECK(report->find_results.exportable == 0);
  CHECK(report->perf_results.exportable == 0);
  CHECK(Slurp(dir + "/gfx90a68.HIP.fdb.txt").empty());
  auto pdb = db::PerfDbReader::Open(dir + "/gfx90a68.db");
  REQUIRE(pdb.ok());
  CHECK(*pdb->CountRows() == 0);

  // Marking them verified (what the eval step does after the reference check) exports them.
  REQUIRE(db().Execute("UPDATE find_result SET verified = TRUE WHERE session_id = ?", {s}).ok());
  auto again = ExportSession(db(), Options(s, dir));
  REQUIRE(again.ok());
  CHECK(again->find.keys == 2);
}

TEST_CASE_METHOD(MariadbTest, "names, overrides and errors", "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t cpu = InsertSessionData(db(), {"cpu-avx2", 16, "CPU", ""}, {{0, 1, 2.0}}, {});
  const std::string dir = TmpDir("names");
  ExportOptions o = Options(cpu, dir);
  o.formats = {exporter::ExportFormat::kFindDb};
  auto report = ExportSession(db(), o);
  REQUIRE(report.ok());
  CHECK(report->basename == "cpu-avx2_16");
  CHECK(std::filesystem::exists(dir + "/cpu-avx2_16.CPU.fdb.txt"));
  CHECK_FALSE(std::filesystem::exists(dir + "/cpu-avx2_16.db"));

  o.arch = "gfx942";
  o.num_cu = 304;
  report = ExportSession(db(), o);
  REQUIRE(report.ok());
  CHECK(report->basename == "gfx942130");
  CHECK(std::filesystem::exists(dir + "/gfx942130.CPU.fdb.txt"));

  CHECK(absl::IsNotFound(ExportSession(db(), Options(cpu + 100, dir)).status()));
  ExportOptions none = Options(cpu, dir);
  none.formats.clear();
  CHECK(absl::IsInvalidArgument(ExportSession(db(), none).status()));
  CHECK(DbArchId("gfx90a:sramecc+:xnack+") == "gfx90a_xnack");
  CHECK(BareArch("gfx90a:sramecc+:xnack+") == "gfx90a");
}

TEST_CASE_METHOD(MariadbTest, "one writer per output directory; stale temps are removed",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t session = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const std::string dir = TmpDir("locked");
  // Leftovers of a killed earlier export.
  for (const char* stale : {"gfx90a68.db.tmp", "gfx90a68.db.tmp-journal", "gfx90a68.kdb.tuna-new",
                            "gfx90a68.kdb.tuna-new.tmp-journal", "gfx90a68.HIP.fdb.txt.tuna-new.tmp"}) {
    std::ofstream(dir + "/" + stale) << "junk";
  }
  {
    // Another writer holds the directory (flock conflicts between two descriptors as between
    // two processes): the export fails at once, naming the holder, and writes nothing.
    auto held = OutputDirLock::Acquire(dir);
    REQUIRE(held.ok());
    auto refused = ExportSession(db(), Options(session, dir));
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == absl::StatusCode::kFailedPrecondition);
    const std::string msg(refused.status().message());
    INFO(msg);
    CHECK(msg.find("is being written by another tuna process (pid " +
                   std::to_string(getpid()) + ",") != std::string::npos);
    CHECK(msg.find(dir + "/.tuna.lock") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir + "/gfx90a68.db"));
    CHECK(std::filesystem::exists(dir + "/gfx90a68.db.tmp"));  // not touched without the lock
  }
  auto report = ExportSession(db(), Options(session, dir));
  REQUIRE(report.ok());
  CHECK(report->perf.path == dir + "/gfx90a68.db");
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{".tuna.lock", "gfx90a68.HIP.fdb.txt", "gfx90a68.db",
                                          "gfx90a68.kdb"});
  // The lock was released: the next writer gets it.
  CHECK(OutputDirLock::Acquire(dir).ok());
}

TEST_CASE_METHOD(MariadbTest, "a failure while writing the second file leaves the old set",
                 "[mariadb][exporter]") {
  InsertSolvers(db());
  const int64_t session = InsertSessionData(db(), kTarget, FindsA(), PerfsA());
  const std::string dir = TmpDir("set");
  REQUIRE(ExportSession(db(), Options(session, dir)).ok());
  const std::string perf = DumpPerfDb(dir + "/gfx90a68.db");
  const std::string find = Slurp(dir + "/gfx90a68.HIP.fdb.txt");
  const std::string kdb = DumpKernelDb(dir + "/gfx90a68.kdb");

  // New results, and the find db's temp cannot be created (a non-empty directory in its way).
  REQUIRE(db().Execute("UPDATE perf_result SET params = '4,4,1' WHERE session_id = ?", {session})
              .ok());
  REQUIRE(db().Execute("UPDATE find_result SET kernel_time = kernel_time / 2 WHERE session_id = ?",
                       {session})
              .ok());
  const std::string blocker = dir + "/gfx90a68.HIP.fdb.txt.tuna-new.tmp";
  std::filesystem::create_directories(blocker);
  std::ofstream(blocker + "/x") << "x";
  auto failed = ExportSession(db(), Options(session, dir));
  REQUIRE_FALSE(failed.ok());
  INFO(failed.status().message());
  // The perf db was written first, but nothing was renamed: the old set is intact.
  CHECK(DumpPerfDb(dir + "/gfx90a68.db") == perf);
  CHECK(Slurp(dir + "/gfx90a68.HIP.fdb.txt") == find);
  CHECK(DumpKernelDb(dir + "/gfx90a68.kdb") == kdb);
  CHECK_FALSE(std::filesystem::exists(dir + "/gfx90a68.db.tuna-new"));

  std::filesystem::remove_all(blocker);
  REQUIRE(ExportSession(db(), Options(session, dir)).ok());
  CHECK(DumpPerfDb(dir + "/gfx90a68.db") != perf);
  CHECK(Slurp(dir + "/gfx90a68.HIP.fdb.txt") != find);
}

}  // namespace tuna::exporter::test
