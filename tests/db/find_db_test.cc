#include "tuner_core/db/find_db.h"

#include "catch2/catch.hpp"
#include "tests/db/test_util.h"

namespace tuna::db {
namespace {

using test::Slurp;
using test::MiopenData;
using test::TestData;
using test::TmpPath;

constexpr const char* kFwd = "miopenConvolutionFwdAlgoDirect";

TEST_CASE("times print like std::ostream << float") {
  CHECK(FormatFindDbTime(0.051639f) == "0.051639");
  CHECK(FormatFindDbTime(17.2271f) == "17.2271");
  CHECK(FormatFindDbTime(1e-05f) == "1e-05");
  CHECK(FormatFindDbTime(0.73341f) == "0.73341");
  CHECK(FormatFindDbTime(123456.7f) == "123457");
  CHECK(FormatFindDbTime(1234567.f) == "1.23457e+06");
  CHECK(FormatFindDbTime(2.f) == "2");
  CHECK(FormatFindDbTime(-1.f) == "-1");
}

TEST_CASE("writer output matches the hand-written golden file byte for byte") {
  FindDb db;
  // Deliberately out of order: the writer sorts keys and entries.
  db["2048-7-7-1x1-1024-14-14-128-0x0-2x2-1x1-0-NCHW-FP32-W"] = {
      {"ConvAsmBwdWrW1x1", 0.051639f, 13714688, "miopenConvolutionBwdWeightsAlgoDirect"}};
  db["128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F"] = {
      {"ConvC", 123456.7f, 0, kFwd},
      {"GemmFwdRest", 17.2271f, UINT64_MAX, "miopenConvolutionFwdAlgoGEMM"},
      {"ConvB", 1e-05f, 16, kFwd},
      {"ConvA", 1e-05f, 0, kFwd}};
  db["1024-14-14-3x3-1024-14-14-16-1x1-1x1-1x1-0-NCHW-FP16-F_g32"] = {
      {"GemmFwdRest", 0.73341f, 3612672, "miopenConvolutionFwdAlgoGEMM"},
      {"ConvDirectNaiveConvFwd", 0.693796f, 0, kFwd},
      {"ConvBinWinogradRxSf3x2", 0.058414f, 0, "miopenConvolutionFwdAlgoWinograd"},
      {"ConvBinWinogradRxSf2x3", 0.044061f, 0, "miopenConvolutionFwdAlgoWinograd"}};
  db["no-entries-key"] = {};
  const std::string golden = Slurp(TestData("small.fdb.txt"));
  auto text = SerializeFindDb(db);
  REQUIRE(text.ok());
  CHECK(*text == golden);

  std::string path = TmpPath("small.fdb.txt");
  REQUIRE(WriteFindDbFile(path, db).ok());
  CHECK(Slurp(path) == golden);

  // Read back: same entries (in writer order), no warnings.
  auto back = ReadFindDbFile(path);
  REQUIRE(back.ok());
  CHECK(back->warnings.empty());
  FindDb expected = db;
  expected.erase("no-entries-key");
  for (auto& [k, v] : expected) SortFindDbEntries(v);
  // Six significant digits is all the format keeps (MIOpen's too): 123456.7 comes back as 123457.
  expected.at("128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F").back().time_ms = 123457.f;
  CHECK(back->records == expected);
}

TEST_CASE("truncation keeps the N fastest entries") {
  FindDb db;
  db["k"] = {{"D", 4.f, 0, kFwd}, {"A", 1.f, 0, kFwd}, {"C", 3.f, 0, kFwd},
             {"E", 5.f, 0, kFwd}, {"B", 2.f, 0, kFwd}};
  auto text = SerializeFindDb(db, {.max_entries_per_key = 4});
  REQUIRE(text.ok());
  CHECK(*text ==
        "k=A:1,0,miopenConvolutionFwdAlgoDirect;B:2,0,miopenConvolutionFwdAlgoDirect;"
        "C:3,0,miopenConvolutionFwdAlgoDirect;D:4,0,miopenConvolutionFwdAlgoDirect\n");
}

TEST_CASE("writer refuses fields that would break the line grammar") {
  FindDb db;
  db["k=1"] = {{"A", 1.f, 0, kFwd}};
  CHECK_FALSE(SerializeFindDb(db).ok());
  db.clear();
  db["k"] = {{"A;B", 1.f, 0, kFwd}};
  CHECK_FALSE(SerializeFindDb(db).ok());
  db["k"] = {{"A", 1.f, 0, "alg:x"}};
  CHECK_FALSE(SerializeFindDb(db).ok());
  db["k"] = {{"A", std::numeric_limits<float>::infinity(), 0, kFwd}};
  CHECK_FALSE(SerializeFindDb(db).ok());
}

TEST_CASE("legacy algorithm-keyed entries, bad lines, duplicates") {
  auto r = ReadFindDbFile(TestData("legacy.fdb.txt"));
  REQUIRE(r.ok());
  CHECK(r->lines == 5);
  REQUIRE(r->records.size() == 2);
  // Legacy line from the research doc (gfx906_60.HIP.fdb.txt), rewritten to the current form.
  const auto& fwd = r->records.at("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F");
  REQUIRE(fwd.size() == 2);
  CHECK(fwd[0] == FindDbEntry{"ConvHipImplicitGemmV4R4Fwd", 2.75856f, 0,
                              "miopenConvolutionFwdAlgoImplicitGEMM"});
  CHECK(fwd[1] == FindDbEntry{"GemmFwd1x1_0_2", 3.06272f, 77070336, "miopenConvolutionFwdAlgoGEMM"});
  // Duplicate solver in a line: the first is kept; the bad entry is dropped.
  const auto& bwd = r->records.at("2048-7-7-1x1-1024-14-14-128-0x0-2x2-1x1-0-NCHW-FP32-B");
  REQUIRE(bwd.size() == 1);
  CHECK(bwd[0].time_ms == 1.5f);
  // Warnings: line 2 (no '='), line 4 twice (duplicate solver, bad time), line 5 (duplicate key).
  std::vector<size_t> lines;
  for (const auto& w : r->warnings) lines.push_back(w.line);
  CHECK(lines == std::vector<size_t>{2, 4, 4, 5});

  auto one = ParseFindDbLine(
      "k=miopenConvolutionBwdDataAlgoGEMM:GemmBwdRest,0.5,7,miopenConvolutionBwdDataAlgoGEMM,"
      "<unused>");
  REQUIRE(one.ok());
  CHECK(one->entries ==
        std::vector<FindDbEntry>{{"GemmBwdRest", 0.5f, 7, "miopenConvolutionBwdDataAlgoGEMM"}});
  CHECK_FALSE(ParseFindDbLine("k=Solver:1,2").ok());
  CHECK_FALSE(ParseFindDbLine("k=Solver:1,-2,alg").ok());
  CHECK_FALSE(ParseFindDbLine("=Solver:1,2,alg").ok());
}

TEST_CASE("streaming a find db gives ParseFindDb's records and warnings, in file order") {
  for (const std::string& path : {TestData("legacy.fdb.txt"), MiopenData("gfx942130.HIP.fdb.txt")}) {
    auto whole = ReadFindDbFile(path);
    REQUIRE(whole.ok());
    FindDb streamed;
    std::vector<std::string> order;
    std::vector<size_t> warning_lines;
    auto st = ForEachFindDbRecord(
        path,
        [&](FindDbRecord&& rec) {
          order.push_back(rec.key);
          CHECK(streamed.emplace(rec.key, std::move(rec.entries)).second);
          return absl::OkStatus();
        },
        [&](const ReadWarning& w) { warning_lines.push_back(w.line); });
    REQUIRE(st.ok());
    CHECK(streamed == whole->records);
    std::vector<size_t> whole_lines;
    for (const auto& w : whole->warnings) whole_lines.push_back(w.line);
    CHECK(warning_lines == whole_lines);
  }
  // An error of the callback stops the stream and is returned.
  int calls = 0;
  auto stopped = ForEachFindDbRecord(
      MiopenData("gfx942130.HIP.fdb.txt"),
      [&](FindDbRecord&&) {
        return ++calls == 3 ? absl::CancelledError("stop") : absl::OkStatus();
      },
      [](const ReadWarning&) {});
  CHECK(stopped.code() == absl::StatusCode::kCancelled);
  CHECK(calls == 3);
  CHECK(ForEachFindDbRecord("no/such/file", [](FindDbRecord&&) { return absl::OkStatus(); },
                            [](const ReadWarning&) {})
            .code() == absl::StatusCode::kNotFound);
}

TEST_CASE("the real gfx942130 find db: 9,600 lines, canonical, byte-identical round trip") {
  const std::string original = Slurp(MiopenData("gfx942130.HIP.fdb.txt"));
  FindDbReadResult r = ParseFindDb(original);
  CHECK(r.lines == 9600);
  CHECK(r.records.size() == 9600);
  CHECK(r.warnings.empty());
  size_t entries = 0, max_entries = 0;
  for (const auto& [k, v] : r.records) {
    entries += v.size();
    max_entries = std::max(max_entries, v.size());
  }
  CHECK(max_entries == 6);
  const auto& first = r.records.begin();
  CHECK(first->first == "1000-13-13-1x1-512-13-13-16-0x0-1x1-1x1-0-NCHW-FP16-B");
  REQUIRE(first->second.size() == 4);
  CHECK(first->second[0] == FindDbEntry{"ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC", 0.051639f,
                                        13714688, "miopenConvolutionBwdDataAlgoImplicitGEMM"});
  // The shipped file is already canonical (keys sorted, entries by (time, solver), %g times),
  // so writing it again reproduces it exactly.
  auto text = SerializeFindDb(r.records);
  REQUIRE(text.ok());
  CHECK(text->size() == original.size());
  CHECK(*text == original);
  FindDbReadResult again = ParseFindDb(*text);
  CHECK(again.records == r.records);
}

TEST_CASE("merge keeps the faster entry per key and solver and counts what it did") {
  FindDb existing, incoming;
  existing["a"] = {{"S1", 2.f, 0, kFwd}, {"S2", 3.f, 0, kFwd}};
  existing["b"] = {{"S1", 1.f, 0, kFwd}};           // untouched key
  incoming["a"] = {{"S1", 1.5f, 64, kFwd},          // faster: improves
                   {"S2", 3.f, 8, kFwd},            // tie: existing kept
                   {"S3", 0.5f, 0, kFwd}};          // new solver
  incoming["c"] = {{"S9", 9.f, 0, kFwd}, {"S8", 8.f, 0, kFwd}};  // new key
  FindDbMergeResult m = MergeFindDb(existing, incoming);
  CHECK(m.report == MergeReport{.added_keys = 1, .kept_keys = 1, .added_entries = 3,
                                .improved_entries = 1, .unchanged_entries = 1});
  CHECK(m.db.size() == 3);
  CHECK(m.db.at("a") == std::vector<FindDbEntry>{{"S3", 0.5f, 0, kFwd},
                                                 {"S1", 1.5f, 64, kFwd},
                                                 {"S2", 3.f, 0, kFwd}});
  CHECK(m.db.at("b") == existing.at("b"));
  CHECK(m.db.at("c") == std::vector<FindDbEntry>{{"S8", 8.f, 0, kFwd}, {"S9", 9.f, 0, kFwd}});
  // Merging a db with itself changes nothing.
  FindDbMergeResult same = MergeFindDb(m.db, m.db);
  CHECK(same.db == m.db);
  CHECK(same.report.unchanged_entries == 6);
  CHECK(same.report.improved_entries == 0);
}

}  // namespace
}  // namespace tuna::db
