#include "tuner_core/problem/keys.h"

#include <sqlite3.h>

#include <map>
#include <sstream>

#include "catch2/catch.hpp"
#include "tests/fixtures/bunzip2.h"
#include "tests/problem/test_util.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna {

std::ostream& operator<<(std::ostream& os, const PerfDbConfig& c) {
  return os << c.layout << "|" << c.data_type << "|" << c.direction << "|" << c.spatial_dim << "|"
            << c.in_channels << "|" << c.in_h << "|" << c.in_w << "|" << c.in_d << "|" << c.fil_h
            << "|" << c.fil_w << "|" << c.fil_d << "|" << c.out_channels << "|" << c.batchsize
            << "|" << c.pad_h << "|" << c.pad_w << "|" << c.pad_d << "|" << c.conv_stride_h << "|"
            << c.conv_stride_w << "|" << c.conv_stride_d << "|" << c.dilation_h << "|"
            << c.dilation_w << "|" << c.dilation_d << "|" << c.bias << "|" << c.group_count;
}

namespace {

using testing::DataPath;

Problem Key(const std::string& key) {
  auto r = ParseFindDbKey(key);
  INFO(key);
  INFO((r.ok() ? std::string("ok") : std::string(r.status().message())));
  REQUIRE(r.ok());
  CHECK(FindDbKey(*r) == key);
  return *r;
}

// A `config` row written as in the doc: id|layout|type|dir|spatial|in_c|in_h|in_w|in_d|...
PerfDbConfig Row(const std::string& bars) {
  std::vector<std::string> f;
  std::stringstream ss(bars);
  for (std::string x; std::getline(ss, x, '|');) f.push_back(x);
  REQUIRE(f.size() == 25);
  PerfDbConfig c;
  c.layout = f[1], c.data_type = f[2], c.direction = f[3];
  int64_t* ints[] = {&c.spatial_dim, &c.in_channels, &c.in_h, &c.in_w, &c.in_d, &c.fil_h,
                     &c.fil_w, &c.fil_d, &c.out_channels, &c.batchsize, &c.pad_h, &c.pad_w,
                     &c.pad_d, &c.conv_stride_h, &c.conv_stride_w, &c.conv_stride_d,
                     &c.dilation_h, &c.dilation_w, &c.dilation_d, &c.bias, &c.group_count};
  for (int i = 0; i < 21; ++i) *ints[i] = std::stoll(f[4 + i]);
  return c;
}

TEST_CASE("worked mapping from MIOPEN_DB_FORMATS.md section 6") {
  auto r = ParseDriverLine(
      "conv -n 128 -c 1024 -H 14 -W 14 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -g 1");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  const Problem& f = (*r)[0];
  const Problem& b = (*r)[1];
  const Problem& w = (*r)[2];
  CHECK(FindDbKey(f) == "1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F");
  CHECK(FindDbKey(b) == "2048-7-7-1x1-1024-14-14-128-0x0-2x2-1x1-0-NCHW-FP32-B");
  CHECK(FindDbKey(w) == "2048-7-7-1x1-1024-14-14-128-0x0-2x2-1x1-0-NCHW-FP32-W");
  CHECK(PerfDbTextKey(f) == "2x1024x14x14x1x1x1x1x2048x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xF");
  CHECK(PerfDbTextKey(b) == "2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xB");
  CHECK(PerfDbTextKey(w) == "2x2048x7x7x1x1x1x1x1024x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xW");
  for (const Problem& p : *r) CHECK(Key(FindDbKey(p)) == p);

  // §1.3: the W row of this layer in gfx906_60.db.
  const PerfDbConfig wrow = Row("0|NCHW|FP32|W|2|2048|7|7|1|1|1|1|1024|128|0|0|0|2|2|0|1|1|0|0|1");
  CHECK(ToPerfDbConfig(w) == wrow);
  auto back = FromPerfDbConfig(wrow);
  REQUIRE(back.ok());
  CHECK(*back == w);  // forward input 14 recovered (largest input giving 7)
}

TEST_CASE("perf-db rows and text keys from the doc") {
  const PerfDbConfig r1 = Row("1|NCHW|FP32|F|2|128|28|28|1|3|3|1|128|128|1|1|0|1|1|0|1|1|0|0|1");
  auto p1 = FromPerfDbConfig(r1);
  REQUIRE(p1.ok());
  CHECK(ToPerfDbConfig(*p1) == r1);
  CHECK(PerfDbTextKey(*p1) == "2x128x28x28x1x3x3x1x128x128x1x1x0x1x1x0x1x1x0x0x1xNCHWxFP32xF");
  CHECK(FindDbKey(*p1) == "128-28-28-3x3-128-28-28-128-1x1-1x1-1x1-0-NCHW-FP32-F");

  const PerfDbConfig r5 = Row("5|NCHW|FP32|F|2|1024|7|7|1|3|3|1|1024|32|1|1|0|1|1|0|1|1|0|0|32");
  auto p5 = FromPerfDbConfig(r5);
  REQUIRE(p5.ok());
  CHECK(p5->groups == 32);
  CHECK(PerfDbTextKey(*p5) == "2x1024x7x7x1x3x3x1x1024x32x1x1x0x1x1x0x1x1x0x0x32xNCHWxFP32xF");

  const PerfDbConfig r3d = Row("5020|NCDHW|FP32|F|3|256|56|56|16|1|1|1|512|4|0|0|0|2|2|2|1|1|1|0|1");
  auto p3d = FromPerfDbConfig(r3d);
  REQUIRE(p3d.ok());
  CHECK(p3d->spatial_dims == 3);
  CHECK(p3d->in == Dhw{16, 56, 56});
  CHECK(p3d->Out() == Dhw{8, 28, 28});
  CHECK(ToPerfDbConfig(*p3d) == r3d);
  CHECK(FindDbKey(*p3d) == "256-16-56-56-1x1x1-512-8-28-28-4-0x0x0-2x2x2-1x1x1-0-NCDHW-FP32-F");

  // Rows MIOpen would never write are refused with the reason.
  PerfDbConfig bad = r1;
  bad.conv_stride_d = 1;
  CHECK_THAT(std::string(FromPerfDbConfig(bad).status().message()), Catch::Contains("2D row"));
  bad = r1, bad.layout = "CHWN";
  CHECK_THAT(std::string(FromPerfDbConfig(bad).status().message()), Catch::Contains("CHWN"));
  bad = r1, bad.data_type = "FP8INT8INT32";
  CHECK_THAT(std::string(FromPerfDbConfig(bad).status().message()), Catch::Contains("data_type"));
  bad = r1, bad.bias = 1;
  CHECK_FALSE(FromPerfDbConfig(bad).ok());
  bad = r1, bad.conv_stride_h = 0;
  CHECK_FALSE(FromPerfDbConfig(bad).ok());
  bad = r1, bad.in_h = int64_t{1} << 40;
  CHECK_FALSE(FromPerfDbConfig(bad).ok());
  bad = r1, bad.direction = "B", bad.pad_h = 5, bad.in_h = 1, bad.fil_h = 1;
  CHECK_THAT(std::string(FromPerfDbConfig(bad).status().message()),
             Catch::Contains("no forward input"));
}

TEST_CASE("3D, group and layout keys") {
  const Problem d3 = Key("256-16-56-56-1x1x1-64-16-56-56-4-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-F");
  CHECK(d3.spatial_dims == 3);
  CHECK(d3.c == 256);
  CHECK(d3.k == 64);
  CHECK(d3.in == Dhw{16, 56, 56});
  CHECK(d3.n == 4);

  const Problem b3 = Key("1-1-1-1-1x4x4-512-1-4-4-128-0x0x0-1x1x1-1x1x1-0-NCDHW-FP32-B");
  CHECK(b3.direction == Direction::kBackwardData);
  CHECK(b3.c == 512);
  CHECK(b3.k == 1);
  CHECK(b3.in == Dhw{1, 4, 4});
  CHECK(b3.fil == Dhw{1, 4, 4});

  const Problem g = Key("1024-14-14-3x3-1024-14-14-16-1x1-1x1-1x1-0-NCHW-FP16-F_g32");
  CHECK(g.groups == 32);
  CHECK(g.data_type == DataType::kFp16);
  CHECK(Key("1024-14-14-3x3-1024-14-14-16-1x1-1x1-1x1-0-NCHW-FP16-W_g32").direction ==
        Direction::kBackwardWeights);

  const Problem nhwc = Key("1-19-19-1x1-64-19-19-1024-0x0-1x1-1x1-0-NHWC-NHWC-NHWC-FP32-B");
  CHECK(nhwc.c == 64);
  CHECK(nhwc.k == 1);
  CHECK(nhwc.in_layout == Layout::kNHWC);

  // Mixed layouts: the key lists in-wei-out in MIOpen's roles (dy first for B and W).
  auto r = ParseDriverLine("conv -n 8 -c 576 -H 4 -W 4 -k 192 -y 1 -x 1 -I NHWC -F 6");
  REQUIRE(r.ok());
  CHECK(FindDbKey((*r)[0]) == "192-4-4-1x1-576-4-4-8-0x0-1x1-1x1-0-NCHW-NCHW-NHWC-FP32-B");
  CHECK(FindDbKey((*r)[1]) == "192-4-4-1x1-576-4-4-8-0x0-1x1-1x1-0-NCHW-NCHW-NHWC-FP32-W");
  CHECK(ToPerfDbConfig((*r)[0]).layout == "NCHW");
  for (const Problem& p : *r) CHECK(Key(FindDbKey(p)) == p);
  auto f = ParseDriverLine("conv -n 8 -c 576 -H 4 -W 4 -k 192 -y 1 -x 1 -I NHWC -F 1");
  REQUIRE(f.ok());
  CHECK(FindDbKey(f->front()) == "576-4-4-1x1-192-4-4-8-0x0-1x1-1x1-0-NHWC-NCHW-NCHW-FP32-F");
  CHECK(ToPerfDbConfig(f->front()).layout == "NHWC");
  const Problem d3l = Key("8-2-4-4-1x1x1-8-2-4-4-2-0x0x0-1x1x1-1x1x1-0-NDHWC-NCDHW-NDHWC-BF16-W");
  CHECK(d3l.fil_layout == Layout::kNCDHW);
}

TEST_CASE("transpose problems are filed as MIOpen does") {
  auto t = ParseDriverLine("conv -n 2 -c 8 -H 7 -W 7 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -m trans");
  REQUIRE(t.ok());
  REQUIRE(t->size() == 3);
  // Forward of a transpose conv = backward data of the conv whose dy is x.
  CHECK(FindDbKey((*t)[0]) == "8-7-7-3x3-4-13-13-2-1x1-2x2-1x1-0-NCHW-FP32-B");
  CHECK(FindDbKey((*t)[1]) == "4-13-13-3x3-8-7-7-2-1x1-2x2-1x1-0-NCHW-FP32-F");
  CHECK(FindDbKey((*t)[2]) == "8-7-7-3x3-4-13-13-2-1x1-2x2-1x1-0-NCHW-FP32-W");
  // The conv problem it is equivalent to has exactly that key.
  auto c = ParseDriverLine("conv -n 2 -c 4 -H 13 -W 13 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 2");
  REQUIRE(c.ok());
  CHECK(FindDbKey(c->front()) == FindDbKey((*t)[0]));
  CHECK(ParseFindDbKey(FindDbKey((*t)[0])).value() == c->front());
}

TEST_CASE("malformed keys are rejected with the field") {
  auto msg = [](const std::string& k) {
    auto r = ParseFindDbKey(k);
    INFO(k);
    REQUIRE_FALSE(r.ok());
    return std::string(r.status().message());
  };
  const std::string good = "1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F";
  REQUIRE(ParseFindDbKey(good).ok());
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-8-128-0x0-2x2-1x1-0-NCHW-FP32-F"),
             Catch::Contains("does not match"));
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-1-NCHW-FP32-F"), Catch::Contains("bias"));
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NHWC-FP32-F"), Catch::Contains("layout"));
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-NCHW-NCHW-FP32-F"),
             Catch::Contains("written as NCHW"));
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP64-F"), Catch::Contains("FP64"));
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-X"),
             Catch::Contains("direction"));
  CHECK_THAT(msg(good + "_g1"), Catch::Contains("_g1"));
  CHECK_THAT(msg(good + "_ciFP8"), Catch::Contains("suffix"));
  CHECK_THAT(msg("01024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F"),
             Catch::Contains("01024"));
  CHECK_THAT(msg("1024-14-14-1x1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F"),
             Catch::Contains("filter"));
  CHECK_THAT(msg("1024-14-14"), Catch::Contains("filter"));
  CHECK_THAT(msg(""), Catch::Contains("empty"));
  CHECK_THAT(msg("1024-14-14-1x1-2048-7-7-128-0x0-2x2-1x1-0-NCHW-FP32-F_g3"),
             Catch::Contains("groups 3"));
}

TEST_CASE("every key of the gfx942130 find db parses and prints back byte-identical") {
  const std::string text = testing::ReadFile(DataPath("miopen/gfx942130.HIP.fdb.txt"));
  REQUIRE(text.size() > 3000000);
  std::istringstream in(text);
  size_t count = 0, failed = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string key = line.substr(0, line.find('='));
    auto p = ParseFindDbKey(key);
    if (!p.ok() || FindDbKey(*p) != key) {
      if (++failed <= 5) {
        FAIL_CHECK(key << ": " << (p.ok() ? FindDbKey(*p) : std::string(p.status().message())));
      }
    } else {
      // The problem is also a valid driver problem that prints and parses back.
      auto again = ParseDriverLine(ToDriverLine(*p));
      REQUIRE(again.ok());
      REQUIRE(again->size() == 1);
      CHECK(again->front() == *p);
    }
    ++count;
  }
  CHECK(count == 9600);
  CHECK(failed == 0);
}

// Every key of `text` (find-db lines) parses; those MIOpen prints today print back
// byte-identical, the older spellings as their current form; every problem prints as a driver
// line that parses back to it. Returns the number of keys.
size_t CheckAllKeys(const std::string& text, size_t* older) {
  std::istringstream in(text);
  size_t count = 0, failed = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const std::string key = line.substr(0, line.find('='));
    ++count;
    auto p = ParseFindDbKey(key);
    if (!p.ok()) {
      if (++failed <= 5) FAIL_CHECK(key << ": " << p.status().message());
      continue;
    }
    const std::string back = FindDbKey(*p);
    if (back != key) {
      ++*older;
      // An older spelling: the current form is one problem with the same key again.
      auto q = ParseFindDbKey(back);
      if (!q.ok() || !(*q == *p) || FindDbKey(*q) != back) {
        if (++failed <= 5) FAIL_CHECK(key << " -> " << back);
      }
    }
    auto again = ParseDriverLine(ToDriverLine(*p));
    if (!again.ok() || again->size() != 1 || !(again->front() == *p)) {
      if (++failed <= 5) FAIL_CHECK(key << ": driver line " << ToDriverLine(*p));
    }
  }
  CHECK(failed == 0);
  return count;
}

TEST_CASE("every key of MIOpen's MI100 find db (gfx90878, 183,610 keys) parses and prints back") {
  const std::string text =
      testing::Bunzip2(testing::ReadFile(DataPath("miopen/gfx90878.HIP.fdb.txt.bz2")));
  REQUIRE_FALSE(text.empty());
  size_t older = 0;
  CHECK(CheckAllKeys(text, &older) == 183610);
  CHECK(older == 48);  // the INT8 keys, written INT8INT8INT32 today
}

TEST_CASE("the odd keys of every shipped MIOpen find db parse") {
  // shipped_special_keys.txt: the keys of the 11 find dbs of MIOpen develop 2d1fd997 that are not
  // plain default-padding problems under 2^32 elements (README.md of testdata).
  const std::string text = testing::ReadFile(DataPath("miopen/shipped_special_keys.txt"));
  size_t older = 0;
  CHECK(CheckAllKeys(text, &older) == 810);
  CHECK(older == 48 + 96);  // INT8; 3D keys of older releases (84 with PHxPW pads, 12 more NCHW)
}

TEST_CASE("MIOpen's output-size rules: the clamp to 1 and pad mode same") {
  // Backward data, dy 1024x1x1, dx 256x1x1, 7x7 filter, pad 0: MIOpen clamps the forward output
  // to 1 (a filter larger than its input).
  const Problem b = Key("1024-1-1-7x7-256-1-1-1-0x0-1x1-1x1-0-NCHW-FP32-B");
  CHECK(b.direction == Direction::kBackwardData);
  CHECK(b.c == 256);
  CHECK(b.k == 1024);
  CHECK(b.pad_mode == PadMode::kDefault);
  CHECK(b.Out() == Dhw{1, 1, 1});
  // 10x10, 3x3 stride 2, pad 0 -> 5x5: miopenPaddingSame (the default rule gives 4x4).
  const Problem s = Key("128-10-10-3x3-256-5-5-100-0x0-2x2-1x1-0-NCHW-BF16-F");
  CHECK(s.pad_mode == PadMode::kSame);
  CHECK(s.Out() == Dhw{1, 5, 5});
  CHECK(s.ReadsPastPaddedInput());
  CHECK_THAT(ToDriverLine(s), Catch::Contains(" -z same"));
  const Problem sb = Key("256-5-5-3x3-128-10-10-100-0x0-2x2-1x1-0-NCHW-BF16-B");
  CHECK(sb.pad_mode == PadMode::kSame);
  CHECK(sb.in == Dhw{1, 10, 10});
}

TEST_CASE("tensors above 2^32 elements and INT8 keys") {
  // dy 1024x512x111x111 = 6.5e9 elements: batch 1024 ResNet stride-2 1x1 backward data.
  const Problem big = Key("1024-56-56-1x1-512-111-111-1024-0x0-2x2-1x1-0-NCHW-FP16-B");
  CHECK(big.XDesc().ElementCount() == int64_t{1024} * 512 * 111 * 111);
  CHECK(big.XDesc().ElementCount() > (int64_t{1} << 32));
  // INT8: MIOpen writes the INT32 output into the key today; the older "INT8" is read too.
  const Problem i8 = Key("1024-14-14-1x1-2048-7-7-1-0x0-2x2-1x1-0-NCHW-INT8INT8INT32-F");
  CHECK(i8.data_type == DataType::kInt8);
  auto legacy = ParseFindDbKey("1024-14-14-1x1-2048-7-7-1-0x0-2x2-1x1-0-NCHW-INT8-F");
  REQUIRE(legacy.ok());
  CHECK(*legacy == i8);
  CHECK(ToPerfDbConfig(i8).data_type == "INT8INT8INT32");
  auto from_line = ParseDriverLine("convint8 -n 1 -c 1024 -H 14 -W 14 -k 2048 -y 1 -x 1 -u 2 -v 2 -F 1");
  REQUIRE(from_line.ok());
  CHECK(FindDbKey(from_line->front()) ==
        "1024-14-14-1x1-2048-7-7-1-0x0-2x2-1x1-0-NCHW-INT8INT8INT32-F");
  // 3D keys of older releases: pads PHxPW and layout NCHW.
  auto old3d = ParseFindDbKey("1024-4-14-14-1x1x1-2048-2-7-7-4-0x0-2x2x2-1x1x1-0-NCHW-FP32-F");
  REQUIRE(old3d.ok());
  CHECK(old3d->in_layout == Layout::kNCDHW);
  CHECK(FindDbKey(*old3d) == "1024-4-14-14-1x1x1-2048-2-7-7-4-0x0x0-2x2x2-1x1x1-0-NCDHW-FP32-F");
}

TEST_CASE("perf-db rows of an older MIOpen with unclamped negative dy sizes (gfx1030_36.db)") {
  // gfx1030_36.db config 915: B, dy 1024x-5x-5, 7x7 filter, pad 0: x is 1x1 (an older MIOpen's
  // (1 - 7) / 1 + 1 = -5); today's row says 1x1.
  PerfDbConfig c = Row("915|NCHW|FP32|B|2|1024|-5|-5|1|7|7|1|256|400|0|0|0|1|1|0|1|1|0|0|1");
  auto p = FromPerfDbConfig(c);
  INFO((p.ok() ? std::string() : std::string(p.status().message())));
  REQUIRE(p.ok());
  CHECK(p->in == Dhw{1, 1, 1});
  CHECK(p->Out() == Dhw{1, 1, 1});
  CHECK(FindDbKey(*p) == "1024-1-1-7x7-256-1-1-400-0x0-1x1-1x1-0-NCHW-FP32-B");
  c.in_h = c.in_w = 1;
  CHECK(ToPerfDbConfig(*p) == c);
  c.direction = "F", c.in_h = -5;  // a forward row's input is never negative
  CHECK_FALSE(FromPerfDbConfig(c).ok());
}

struct Db {
  sqlite3* db = nullptr;
  ~Db() { sqlite3_close(db); }
};

std::vector<PerfDbConfig> ReadConfigRows(const std::string& path) {
  Db db;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db.db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  const char* sql =
      "SELECT layout, data_type, direction, spatial_dim, in_channels, in_h, in_w, in_d, fil_h, "
      "fil_w, fil_d, out_channels, batchsize, pad_h, pad_w, pad_d, conv_stride_h, conv_stride_w, "
      "conv_stride_d, dilation_h, dilation_w, dilation_d, bias, group_count FROM config ORDER BY "
      "id";
  REQUIRE(sqlite3_prepare_v2(db.db, sql, -1, &st, nullptr) == SQLITE_OK);
  std::vector<PerfDbConfig> rows;
  while (sqlite3_step(st) == SQLITE_ROW) {
    PerfDbConfig c;
    c.layout = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    c.data_type = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
    c.direction = reinterpret_cast<const char*>(sqlite3_column_text(st, 2));
    int64_t* ints[] = {&c.spatial_dim, &c.in_channels, &c.in_h, &c.in_w, &c.in_d, &c.fil_h,
                       &c.fil_w, &c.fil_d, &c.out_channels, &c.batchsize, &c.pad_h, &c.pad_w,
                       &c.pad_d, &c.conv_stride_h, &c.conv_stride_w, &c.conv_stride_d,
                       &c.dilation_h, &c.dilation_w, &c.dilation_d, &c.bias, &c.group_count};
    for (int i = 0; i < 21; ++i) *ints[i] = sqlite3_column_int64(st, 3 + i);
    rows.push_back(c);
  }
  sqlite3_finalize(st);
  return rows;
}

TEST_CASE("every config row of the gfx942130 perf db maps to a problem and back") {
  const std::vector<PerfDbConfig> rows = ReadConfigRows(DataPath("miopen/gfx942130.db"));
  REQUIRE(rows.size() == 9393);
  std::map<std::string, Problem> by_text_key;
  size_t failed = 0;
  for (const PerfDbConfig& row : rows) {
    auto p = FromPerfDbConfig(row);
    if (!p.ok() || !(ToPerfDbConfig(*p) == row)) {
      if (++failed <= 5) {
        FAIL_CHECK(row << ": "
                       << (p.ok() ? std::string("round trip differs")
                                  : std::string(p.status().message())));
      }
      continue;
    }
    by_text_key.emplace(PerfDbTextKey(*p), *p);
  }
  CHECK(failed == 0);
  CHECK(by_text_key.size() == rows.size());

  // Cross-check with the find db: the same problem gives the same row, and the row gives the
  // same problem unless the forward input of a strided B/W problem is not the recovered one.
  const std::string text = testing::ReadFile(DataPath("miopen/gfx942130.HIP.fdb.txt"));
  std::istringstream in(text);
  size_t shared = 0, identical = 0, ambiguous = 0, wrong = 0;
  std::string line;
  while (std::getline(in, line)) {
    auto p = ParseFindDbKey(line.substr(0, line.find('=')));
    REQUIRE(p.ok());
    auto it = by_text_key.find(PerfDbTextKey(*p));
    if (it == by_text_key.end()) continue;
    ++shared;
    CHECK(ToPerfDbConfig(it->second) == ToPerfDbConfig(*p));
    if (it->second == *p) {
      ++identical;
    } else if (p->direction != Direction::kForward &&
               (p->stride[1] > 1 || p->stride[2] > 1)) {
      ++ambiguous;  // another of the s inputs that give the same output
    } else {
      ++wrong;
      FAIL_CHECK(FindDbKey(*p) << " came back as " << FindDbKey(it->second));
    }
  }
  WARN("shared " << shared << " identical " << identical << " ambiguous " << ambiguous);
  CHECK(shared > 8000);
  CHECK(wrong == 0);
  CHECK(ambiguous * 20 < shared / 10);  // well under 0.5% of the shared problems
}

}  // namespace
}  // namespace tuna
