#include "tuner_core/db/perf_db.h"

#include <algorithm>
#include <set>

#include <sqlite3.h>

#include "catch2/catch.hpp"
#include "tuner_core/db/miopen_sql.h"
#include "tests/db/test_util.h"

namespace tuna::db {
namespace {

using test::Slurp;
using test::MiopenData;
using test::TestData;
using test::TmpPath;

PerfDbConfig Fwd128() {
  // gfx906_60.db config 1 (research doc §1.3).
  return PerfDbConfig{.layout = "NCHW", .data_type = "FP32", .direction = "F", .spatial_dim = 2,
                      .in_channels = 128, .in_h = 28, .in_w = 28, .in_d = 1, .fil_h = 3,
                      .fil_w = 3, .fil_d = 1, .out_channels = 128, .batchsize = 128, .pad_h = 1,
                      .pad_w = 1, .pad_d = 0, .conv_stride_h = 1, .conv_stride_w = 1,
                      .conv_stride_d = 0, .dilation_h = 1, .dilation_w = 1, .dilation_d = 0,
                      .bias = 0, .group_count = 1};
}

PerfDbConfig Wrw3d() {
  return PerfDbConfig{.layout = "NCDHW", .data_type = "FP16", .direction = "W", .spatial_dim = 3,
                      .in_channels = 256, .in_h = 56, .in_w = 56, .in_d = 16, .fil_h = 1,
                      .fil_w = 1, .fil_d = 1, .out_channels = 512, .batchsize = 4, .pad_h = 0,
                      .pad_w = 0, .pad_d = 0, .conv_stride_h = 2, .conv_stride_w = 2,
                      .conv_stride_d = 2, .dilation_h = 1, .dilation_w = 1, .dilation_d = 1,
                      .bias = 0, .group_count = 4};
}

PerfDbWriter SmallWriter() {
  PerfDbWriter w;
  w.Add(Fwd128(), "ConvOclDirectFwd", "32,8,32,32,1,4,8,4,2");
  w.Add(Fwd128(), "ConvAsm3x3U", "1,1,1");  // replaced below (INSERT OR REPLACE semantics)
  w.Add(Wrw3d(), "ConvHipImplicitGemm3DGroupWrwXdlops",
        "DeviceGroupedConvBwdWeight_Xdl_CShuffle<256, 128, 128, 4, Default, 8, 2, 1>");
  w.Add(Fwd128(), "ConvAsm3x3U", "7,8,4");
  return w;
}

// Every row of both tables as text, in id order: the golden comparison for SQLite files.
std::string Dump(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  std::string out;
  for (const char* sql : {"SELECT 'config', * FROM config ORDER BY id;",
                          "SELECT 'perf_db', id, solver, config, params, typeof(config) FROM "
                          "perf_db ORDER BY id;"}) {
    sqlite3_stmt* st = nullptr;
    REQUIRE(sqlite3_prepare_v2(db, sql, -1, &st, nullptr) == SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
      for (int i = 0; i < sqlite3_column_count(st); ++i) {
        if (i) out += '|';
        out += reinterpret_cast<const char*>(sqlite3_column_text(st, i));
      }
      out += '\n';
    }
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return out;
}

TEST_CASE("perf db rows match the hand-written golden dump; ids follow sorted configs") {
  PerfDbWriter w = SmallWriter();
  CHECK(w.config_count() == 2);
  CHECK(w.row_count() == 3);
  std::string path = TmpPath("small.db");
  REQUIRE(w.Write(path).ok());
  CHECK(Dump(path) == Slurp(TestData("small_perf_db.dump")));
}

TEST_CASE("perf db files are byte-identical for the same rows, whatever the Add order") {
  std::string a = TmpPath("a.db"), b = TmpPath("b.db"), c = TmpPath("c.db");
  REQUIRE(SmallWriter().Write(a).ok());
  REQUIRE(SmallWriter().Write(b).ok());  // second write of the same rows
  PerfDbWriter reordered;
  reordered.Add(Fwd128(), "ConvAsm3x3U", "7,8,4");
  reordered.Add(Wrw3d(), "ConvHipImplicitGemm3DGroupWrwXdlops",
                "DeviceGroupedConvBwdWeight_Xdl_CShuffle<256, 128, 128, 4, Default, 8, 2, 1>");
  reordered.Add(Fwd128(), "ConvOclDirectFwd", "32,8,32,32,1,4,8,4,2");
  REQUIRE(reordered.Write(c).ok());
  const std::string bytes = Slurp(a);
  CHECK(bytes.size() % 4096 == 0);
  CHECK(bytes.substr(0, 16) == std::string("SQLite format 3\0", 16));
  CHECK(static_cast<unsigned char>(bytes[16]) == 0x10);  // page size 4096, big-endian
  CHECK(static_cast<unsigned char>(bytes[17]) == 0x00);
  CHECK(bytes[18] == 1);  // write version 1: rollback journal, not WAL
  CHECK(bytes[19] == 1);
  CHECK(Slurp(b) == bytes);
  CHECK(Slurp(c) == bytes);
  // Rewriting over an existing file replaces it.
  REQUIRE(SmallWriter().Write(a).ok());
  CHECK(Slurp(a) == bytes);
}

TEST_CASE("perf db write -> read gives the same rows; lookup uses MIOpen's SQL") {
  std::string path = TmpPath("rt.db");
  REQUIRE(SmallWriter().Write(path).ok());
  auto r = PerfDbReader::Open(path);
  REQUIRE(r.ok());
  auto rows = r->ReadAll();
  REQUIRE(rows.ok());
  std::vector<PerfDbRow> expected = {
      {Wrw3d(), "ConvHipImplicitGemm3DGroupWrwXdlops",
       "DeviceGroupedConvBwdWeight_Xdl_CShuffle<256, 128, 128, 4, Default, 8, 2, 1>"},
      {Fwd128(), "ConvAsm3x3U", "7,8,4"},
      {Fwd128(), "ConvOclDirectFwd", "32,8,32,32,1,4,8,4,2"}};
  CHECK(*rows == expected);
  auto found = r->Lookup(Fwd128());
  REQUIRE(found.ok());
  std::vector<SolverParams> sorted = *found;
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.solver < b.solver; });
  CHECK(sorted == std::vector<SolverParams>{{"ConvAsm3x3U", "7,8,4"},
                                            {"ConvOclDirectFwd", "32,8,32,32,1,4,8,4,2"}});
  PerfDbConfig other = Fwd128();
  other.group_count = 2;
  auto none = r->Lookup(other);
  REQUIRE(none.ok());
  CHECK(none->empty());
  CHECK(sql::PerfDbLookup().rfind(
            "SELECT solver, params FROM perf_db INNER JOIN config ON perf_db.config = config.id "
            "WHERE ( (layout = ? ) AND (data_type = ? ) AND (direction = ? ) AND (spatial_dim = ? "
            ") AND (in_channels = ? )",
            0) == 0);
  CHECK(sql::PerfDbLookup().ends_with("AND (bias = ? ) AND (group_count = ? ) );"));
}

TEST_CASE("ForEachByConfig streams ReadAll's rows grouped by config row") {
  auto r = PerfDbReader::Open(MiopenData("gfx942130.db"));
  REQUIRE(r.ok());
  auto all = r->ReadAll();
  REQUIRE(all.ok());
  std::vector<PerfDbRow> streamed;
  std::vector<int64_t> ids;
  REQUIRE(r->ForEachByConfig([&](int64_t id, PerfDbRow&& row) {
               ids.push_back(id);
               streamed.push_back(std::move(row));
               return absl::OkStatus();
             }).ok());
  CHECK(std::is_sorted(ids.begin(), ids.end()));
  CHECK(std::set<int64_t>(ids.begin(), ids.end()).size() == 9393);
  auto key = [](const PerfDbRow& x) { return std::make_pair(x.solver, x.params); };
  REQUIRE(streamed.size() == all->size());
  std::multiset<std::pair<std::string, std::string>> a, b;
  for (const auto& x : *all) a.insert(key(x));
  for (const auto& x : streamed) b.insert(key(x));
  CHECK(a == b);
}

TEST_CASE("the real gfx942130 perf db") {
  auto r = PerfDbReader::Open(MiopenData("gfx942130.db"));
  REQUIRE(r.ok());
  CHECK(*r->CountConfigs() == 9393);
  CHECK(*r->CountRows() == 21058);
  auto rows = r->ReadAll();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 21058);
  // perf_db ids 1..3 (sqlite3 CLI): config 1 = NCHW FP16 B 1000x13x13 1x1 -> 512, N=16.
  PerfDbConfig c1{.layout = "NCHW", .data_type = "FP16", .direction = "B", .spatial_dim = 2,
                  .in_channels = 1000, .in_h = 13, .in_w = 13, .in_d = 1, .fil_h = 1, .fil_w = 1,
                  .fil_d = 1, .out_channels = 512, .batchsize = 16, .pad_h = 0, .pad_w = 0,
                  .pad_d = 0, .conv_stride_h = 1, .conv_stride_w = 1, .conv_stride_d = 0,
                  .dilation_h = 1, .dilation_w = 1, .dilation_d = 0, .bias = 0, .group_count = 1};
  CHECK((*rows)[0] == PerfDbRow{c1, "ConvBinWinogradRxSf3x2", "215"});
  CHECK((*rows)[1].solver == "ConvAsmImplicitGemmGTCDynamicBwdXdlopsNHWC");
  CHECK((*rows)[1].params ==
        "bwd,nhwc,fp16,0,1,128,128,16,32,32,4,1,1,2,2,1,0,2,1,0,1,1,8,1,1,16,1,16,1,1,8,1,1,16,1,"
        "16,152[2]");
  PerfDbConfig c2 = c1;
  c2.direction = "W";
  CHECK((*rows)[2] == PerfDbRow{c2, "ConvBinWinogradRxSf3x2", "257"});
  auto found = r->Lookup(c1);
  REQUIRE(found.ok());
  CHECK(found->size() == 2);

  // Re-writing the real rows and reading them back gives the same set of rows.
  PerfDbWriter w;
  for (const PerfDbRow& row : *rows) w.Add(row);
  CHECK(w.row_count() == 21058);
  CHECK(w.config_count() == 9393);
  std::string path = TmpPath("gfx942130_rewritten.db");
  REQUIRE(w.Write(path).ok());
  auto back = PerfDbReader::Open(path);
  REQUIRE(back.ok());
  auto back_rows = back->ReadAll();
  REQUIRE(back_rows.ok());
  auto key = [](const PerfDbRow& a, const PerfDbRow& b) {
    if (PerfDbConfigLess()(a.config, b.config)) return true;
    if (PerfDbConfigLess()(b.config, a.config)) return false;
    return a.solver < b.solver;
  };
  std::vector<PerfDbRow> want = *rows;
  std::sort(want.begin(), want.end(), key);
  CHECK(*back_rows == want);  // the writer's id order is exactly this sort order
}

}  // namespace
}  // namespace tuna::db
