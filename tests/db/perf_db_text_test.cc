#include "tuner_core/db/perf_db_text.h"

#include "catch2/catch.hpp"
#include "tests/db/test_util.h"

namespace tuna::db {
namespace {

using test::Slurp;
using test::MiopenData;
using test::TestData;
using test::TmpPath;

TEST_CASE("text perf db writer matches the golden file; read back gives the same records") {
  PerfDbText db;
  db["2x128x28x28x1x3x3x1x128x128x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF"] = {
      {"ConvHipImplicitGemmFwdXdlops",
       "DeviceConv2dFwdXdl_Input_N_Hi_Wi_C_Weight_K_Y_X_C_Output_N_Ho_Wo_K<256, 128, 64, 4, "
       "Default, 4, 32, 32, 2, 1, 4, 4, 4, 4>"},
      {"ConvAsm3x3U", "7,8,4"}};
  db["2x1024x7x7x1x3x3x1x1024x32x1x1x0x1x1x0x1x1x0x0x32xNCHWxFP32xF"] = {
      {"ConvHipImplicitGemmV4R1Fwd", "8,32,8,2,2,2,2,2,4,4,8,1,8,1,2,32"},
      {"ConvBinWinogradRxSf2x3", "3"},
      {"ConvAsm3x3U", "4,2,7"}};
  const std::string golden = Slurp(TestData("small.db.txt"));
  auto text = SerializePerfDbText(db);
  REQUIRE(text.ok());
  CHECK(*text == golden);
  std::string path = TmpPath("small.db.txt");
  REQUIRE(WritePerfDbTextFile(path, db).ok());
  CHECK(Slurp(path) == golden);
  auto back = ReadPerfDbTextFile(path);
  REQUIRE(back.ok());
  CHECK(back->warnings.empty());
  CHECK(back->records == db);
}

TEST_CASE("text perf db reader: first key and first solver win, bad lines reported") {
  PerfDbTextReadResult r = ParsePerfDbText(
      "k1=A:1,2;B:3;A:9\n"
      "garbage\n"
      "k1=C:5\n"
      "k2=D:\n");
  CHECK(r.lines == 4);
  CHECK(r.records.size() == 2);
  CHECK(r.records.at("k1") == std::map<std::string, std::string>{{"A", "1,2"}, {"B", "3"}});
  CHECK(r.records.at("k2") == std::map<std::string, std::string>{{"D", ""}});
  std::vector<size_t> lines;
  for (const auto& w : r.warnings) lines.push_back(w.line);
  CHECK(lines == std::vector<size_t>{1, 2, 3});
  PerfDbText bad;
  bad["k"] = {{"A", "x;y"}};
  CHECK_FALSE(SerializePerfDbText(bad).ok());
}

TEST_CASE("text key of a config row is sqlite2txt's (research doc §1.5/§6 examples)") {
  PerfDbConfig c{.layout = "NCHW", .data_type = "FP32", .direction = "B", .spatial_dim = 2,
                 .in_channels = 2048, .in_h = 7, .in_w = 7, .in_d = 1, .fil_h = 1, .fil_w = 1,
                 .fil_d = 1, .out_channels = 1024, .batchsize = 128, .pad_h = 0, .pad_w = 0,
                 .pad_d = 0, .conv_stride_h = 2, .conv_stride_w = 2, .conv_stride_d = 0,
                 .dilation_h = 1, .dilation_w = 1, .dilation_d = 0, .bias = 0, .group_count = 1};
  CHECK(PerfDbTextKey(c) == "2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xB");
  PerfDbText t = PerfDbRowsToText({{c, "ConvAsm1x1U", "4,8"}, {c, "GemmX", "1"}});
  CHECK(t.size() == 1);
  CHECK(t.begin()->second.size() == 2);
}

TEST_CASE("the real gfx942130 perf db converts to a text db that reads back") {
  auto r = PerfDbReader::Open(MiopenData("gfx942130.db"));
  REQUIRE(r.ok());
  auto rows = r->ReadAll();
  REQUIRE(rows.ok());
  PerfDbText t = PerfDbRowsToText(*rows);
  CHECK(t.size() == 9393);
  auto text = SerializePerfDbText(t);
  REQUIRE(text.ok());
  PerfDbTextReadResult back = ParsePerfDbText(*text);
  CHECK(back.warnings.empty());
  CHECK(back.records == t);
}

}  // namespace
}  // namespace tuna::db
