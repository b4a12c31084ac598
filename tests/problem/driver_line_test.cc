#include "tuner_core/problem/driver_line.h"

#include <set>
#include <sstream>

#include "catch2/catch.hpp"
#include "tests/problem/test_util.h"

namespace tuna {
namespace {

using testing::DataPath;

Problem One(const std::string& line) {
  auto r = ParseDriverLine(line);
  INFO(line);
  INFO((r.ok() ? std::string("ok") : std::string(r.status().message())));
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return r->front();
}

std::string Error(const std::string& line) {
  auto r = ParseDriverLine(line);
  INFO(line);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(r.status().message());
}

TEST_CASE("resnet50_n32.txt expands to 69 problems, every layer in all three directions") {
  auto file = ParseDriverFile(DataPath("resnet50_n32.txt"));
  REQUIRE(file.ok());
  CHECK(file->errors.empty());
  REQUIRE(file->lines.size() == 23);
  size_t total = 0;
  std::set<Problem, bool (*)(const Problem&, const Problem&)> unique(
      [](const Problem& a, const Problem& b) { return ToDriverLine(a) < ToDriverLine(b); });
  for (const DriverFileLine& l : file->lines) {
    REQUIRE(l.problems.size() == 3);
    CHECK(l.problems[0].direction == Direction::kForward);
    CHECK(l.problems[1].direction == Direction::kBackwardData);
    CHECK(l.problems[2].direction == Direction::kBackwardWeights);
    for (const Problem& p : l.problems) {
      CHECK(p.n == 32);
      CHECK(p.data_type == DataType::kFp32);
      CHECK(p.in_layout == Layout::kNCHW);
      unique.insert(p);
    }
    total += l.problems.size();
  }
  CHECK(total == 69);
  CHECK(unique.size() == 69);
  CHECK(file->lines[0].line_number == 2);  // line 1 is a comment
}

TEST_CASE("the driver files agree with the resnet50 layer table") {
  auto fp32 = ParseDriverFile(DataPath("resnet50_n32.txt"));
  auto fp16 = ParseDriverFile(DataPath("resnet50_n32_fwd_fp16_nhwc.txt"));
  REQUIRE(fp32.ok());
  REQUIRE(fp16.ok());
  CHECK(fp16->errors.empty());
  REQUIRE(fp16->lines.size() == 23);
  std::istringstream table(testing::ReadFile(DataPath("resnet50_layers.txt")));
  std::string row;
  size_t i = 0;
  while (std::getline(table, row)) {
    if (row.empty() || row[0] == '#') continue;
    std::istringstream f(row);
    std::string name;
    int64_t c, h, w, k, r, s, pad, stride;
    REQUIRE(bool(f >> name >> c >> h >> w >> k >> r >> s >> pad >> stride));
    REQUIRE(i < 23);
    for (const Problem& p : {fp32->lines[i].problems[0], fp16->lines[i].problems[0]}) {
      INFO(name);
      CHECK(p.c == c);
      CHECK(p.in == Dhw{1, h, w});
      CHECK(p.k == k);
      CHECK(p.fil == Dhw{1, r, s});
      CHECK(p.pad == Dhw{0, pad, pad});
      CHECK(p.stride == Dhw{1, stride, stride});
    }
    const Problem& h16 = fp16->lines[i].problems[0];
    CHECK(h16.data_type == DataType::kFp16);
    CHECK(h16.in_layout == Layout::kNHWC);
    CHECK(h16.fil_layout == Layout::kNHWC);
    CHECK(h16.out_layout == Layout::kNHWC);
    CHECK(fp16->lines[i].problems.size() == 1);
    ++i;
  }
  CHECK(i == 23);
}

TEST_CASE("MIOpen defaults apply to flags not given") {
  const Problem p = One("conv -F 1");
  CHECK(p.n == 100);
  CHECK(p.c == 3);
  CHECK(p.in == Dhw{1, 32, 32});
  CHECK(p.k == 32);
  CHECK(p.fil == Dhw{1, 3, 3});
  CHECK(p.pad == Dhw{0, 0, 0});
  CHECK(p.stride == Dhw{1, 1, 1});
  CHECK(p.dilation == Dhw{1, 1, 1});
  CHECK(p.groups == 1);
  CHECK(p.mode == ConvMode::kConv);
  CHECK(p.spatial_dims == 2);

  const Problem q = One("conv --spatial_dim 3 -F 1");
  CHECK(q.spatial_dims == 3);
  CHECK(q.in == Dhw{32, 32, 32});
  CHECK(q.fil == Dhw{3, 3, 3});
  CHECK(q.in_layout == Layout::kNCDHW);
  CHECK(q.fil_layout == Layout::kNCDHW);
  CHECK(q.out_layout == Layout::kNCDHW);

  auto all = ParseDriverLine("conv");
  REQUIRE(all.ok());
  CHECK(all->size() == 3);  // -F defaults to 0
}

TEST_CASE("-F is a direction bit mask") {
  auto dirs = [](const std::string& f) {
    auto r = ParseDriverLine("conv -F " + f);
    REQUIRE(r.ok());
    std::string s;
    for (const Problem& p : *r) s += std::string(DirectionName(p.direction));
    return s;
  };
  CHECK(dirs("0") == "FBW");
  CHECK(dirs("1") == "F");
  CHECK(dirs("2") == "B");
  CHECK(dirs("4") == "W");
  CHECK(dirs("3") == "FB");
  CHECK(dirs("5") == "FW");
  CHECK(dirs("6") == "BW");
  CHECK(dirs("7") == "FBW");
  CHECK_THAT(Error("conv -F 8"), Catch::Contains("-F/--forw") && Catch::Contains("8"));
  CHECK_THAT(Error("conv -F -1"), Catch::Contains("-F/--forw"));
}

TEST_CASE("driver path and log prefixes are accepted") {
  const std::string args = " -n 2 -c 16 -H 32 -W 32 -k 16 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1";
  const Problem ref = One("convfp16" + args);
  CHECK(ref.data_type == DataType::kFp16);
  CHECK(One("./bin/MIOpenDriver convfp16" + args) == ref);
  CHECK(One("/opt/rocm/bin/MIOpenDriver convfp16" + args) == ref);
  CHECK(One("MIOpenDriver.exe convfp16" + args) == ref);
  CHECK(One("C:\\rocm\\bin\\MIOpenDriver.exe convfp16" + args) == ref);
  CHECK(One("MIOpen(HIP): Command [LogCmdFindConvolution] ./bin/MIOpenDriver convfp16" + args) ==
        ref);
  CHECK(One("MIOpen(HIP): Command [LogCmdConvolution] MIOpenDriver.exe convfp16" + args) == ref);
  CHECK(One("miopenConvolutionForward: ./bin/MIOpenDriver convfp16" + args) == ref);
  CHECK(One("miopenConvolutionForward: convfp16" + args) == ref);
  CHECK(One("  \tconvfp16" + args + "  \r") == ref);
  CHECK(One("conv" + args).data_type == DataType::kFp32);
  CHECK(One("convbfp16" + args).data_type == DataType::kBf16);
  CHECK(One("convint8" + args).data_type == DataType::kInt8);
  CHECK_THAT(Error("./bin/MIOpenDriver pool -n 1"), Catch::Contains("pool"));
  CHECK_THAT(Error("./bin/MIOpenDriver"), Catch::Contains("missing"));
}

TEST_CASE("the pytorch log form from MITuna resnet50_pytorch.txt parses") {
  auto r = ParseDriverLine(
      "miopenConvolutionForward: ./bin/MIOpenDriver conv -n 64 -c 3 -H 224 -W 224 -k 64 -y 7 -x "
      "7 -p 3 -q 3 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -t 1");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);  // no -F: all directions
  CHECK((*r)[0].Out() == Dhw{1, 112, 112});
}

TEST_CASE("long and short flags are equivalent") {
  // rocm-libraries PR #2734 form: 3D flags given with --spatial_dim 2 are ignored, so
  // --conv_stride_d 0 is fine there.
  const Problem l = One(
      "./bin/MIOpenDriver convbfp16 --batchsize 2 --spatial_dim 2 --pad_h 0 --pad_w 0 --pad_d 0 "
      "--conv_stride_h 1 --conv_stride_w 1 --conv_stride_d 0 --dilation_h 1 --dilation_w 1 "
      "--dilation_d 0 --group_count 1 --mode conv --pad_mode default --trans_output_pad_h 0 "
      "--trans_output_pad_w 0 --trans_output_pad_d 0 --out_layout NCHW --in_layout NCHW "
      "--fil_layout NCHW --in_d 1 --in_h 14 --in_w 14 --fil_d 1 --fil_h 1 --fil_w 1 "
      "--in_channels 1664 --out_channels 128 --forw 2");
  const Problem s = One(
      "convbfp16 -n 2 -_ 2 -p 0 -q 0 -$ 0 -u 1 -v 1 -# 0 -l 1 -j 1 -^ 0 -g 1 -m conv -z default "
      "-Y 0 -X 0 -% 0 -O NCHW -I NCHW -f NCHW -! 1 -H 14 -W 14 -@ 1 -y 1 -x 1 -c 1664 -k 128 -F 2");
  CHECK(l == s);
  CHECK(l.direction == Direction::kBackwardData);
  CHECK(l.c == 1664);
  CHECK(l.k == 128);
  CHECK(l.in == Dhw{1, 14, 14});

  const Problem d3 = One(
      "conv -n 4 -c 256 --in_d 16 -H 56 -W 56 -k 512 --fil_d 1 -y 1 -x 1 --pad_d 0 -p 0 -q 0 "
      "--conv_stride_d 2 -u 2 -v 2 --dilation_d 1 -l 1 -j 1 --spatial_dim 3 -m conv -g 1 -F 1");
  const Problem d3s = One(
      "conv -n 4 -c 256 -! 16 -H 56 -W 56 -k 512 -@ 1 -y 1 -x 1 -$ 0 -p 0 -q 0 -# 2 -u 2 -v 2 "
      "-^ 1 -l 1 -j 1 -_ 3 -m conv -g 1 -F 1");
  CHECK(d3 == d3s);
  CHECK(d3.spatial_dims == 3);
  CHECK(d3.in == Dhw{16, 56, 56});
  CHECK(d3.stride == Dhw{2, 2, 2});
  CHECK(d3.Out() == Dhw{8, 28, 28});
}

TEST_CASE("flags that do not shape the problem are ignored") {
  const Problem ref = One("conv -n 8 -c 16 -k 16 -F 1");
  CHECK(One("conv -n 8 -c 16 -k 16 -F 1 -t 1 -i 10 -V 0 -s 1 -w 2 -P 0 -o 1 -S 0 -G 1 -C x "
            "-d in.bin -e w.bin -b 0 -a 0 -D dy.bin -r 0 -Z 0 -L 1 -U -1 -T -1 -R -1") == ref);
  CHECK(One("conv -n 8 -c 16 -k 16 -F 1 --time 1 --iter 5 --verify 0 --search 1 --solution "
            "ConvDirectNaiveConvFwd --gpualloc 1 --verification_cache /tmp/x --wall 1") == ref);
  // Trans output padding means nothing for -m conv.
  CHECK(One("conv -n 8 -c 16 -k 16 -F 1 -Y 1 -X 1") == ref);
  // Repeated flags: the last value wins, as in MIOpen's InputFlags.
  CHECK(One("conv -n 3 -c 16 -k 16 -F 1 -n 8") == ref);
}

TEST_CASE("layouts") {
  const Problem p = One("conv -F 1 --in_layout NHWC");
  CHECK(p.in_layout == Layout::kNHWC);
  CHECK(p.fil_layout == Layout::kNCHW);  // each defaults on its own (conv_driver.hpp)
  CHECK(p.out_layout == Layout::kNCHW);
  const Problem q = One("conv -F 1 -_ 3 -I NHWC -f NDHWC -O NCHW");
  CHECK(q.in_layout == Layout::kNDHWC);
  CHECK(q.fil_layout == Layout::kNDHWC);
  CHECK(q.out_layout == Layout::kNCDHW);
  CHECK_THAT(Error("conv -F 1 --in_layout NCDHW"), Catch::Contains("spatial_dim 3"));
  CHECK_THAT(Error("conv -F 1 --out_layout CHWN"), Catch::Contains("CHWN"));
  CHECK_THAT(Error("conv -F 1 --fil_layout NCHWc4"), Catch::Contains("--fil_layout"));
}

TEST_CASE("groups and transpose mode") {
  const Problem g = One("conv -n 16 -c 1024 -H 14 -W 14 -k 1024 -y 3 -x 3 -p 1 -q 1 -g 32 -F 1");
  CHECK(g.groups == 32);
  CHECK(g.WDesc().dims[1] == 32);
  CHECK_THAT(Error("conv -c 64 -k 64 -g 3 -F 1"), Catch::Contains("groups 3 does not divide c 64"));
  CHECK_THAT(Error("conv -c 63 -k 64 -g 3 -F 1"), Catch::Contains("does not divide k 64"));

  const Problem t = One("conv -n 2 -c 8 -H 7 -W 7 -k 4 -y 3 -x 3 -u 2 -v 2 -m trans -Y 1 -X 0 -F 1");
  CHECK(t.mode == ConvMode::kTrans);
  CHECK(t.trans_output_pad == Dhw{0, 1, 0});
  CHECK(t.Out() == Dhw{1, 16, 15});
  CHECK_THAT(Error("conv -m deconv"), Catch::Contains("-m/--mode") && Catch::Contains("deconv"));
  CHECK_THAT(Error("conv -u 2 -v 2 -m trans -Y 2 -F 1"), Catch::Contains("trans_output_pad_h"));
}

TEST_CASE("pad_mode same and valid are applied or refused") {
  const Problem v = One("conv -H 32 -W 32 -y 3 -x 3 -p 1 -q 1 -z valid -F 1");
  CHECK(v.pad == Dhw{0, 0, 0});
  const Problem s = One("conv -H 32 -W 32 -y 3 -x 3 -z same -F 1");
  CHECK(s.pad == Dhw{0, 1, 1});
  CHECK(s.Out() == Dhw{1, 32, 32});
  const Problem s2 = One("conv -H 56 -W 56 -y 1 -x 1 -u 2 -v 2 -z same -F 1");
  CHECK(s2.pad == Dhw{0, 0, 0});
  CHECK(s2.Out() == Dhw{1, 28, 28});
  CHECK(s.pad_mode == PadMode::kDefault);  // MIOpenDriver's pads give the "same" size
  // 224 with a 7x7 stride-2 filter: MIOpen's "same" is 112, which symmetric padding cannot give
  // (MIOpenDriver's pads 2 give 111): the problem keeps the mode, as MIOpen's API does.
  const Problem s3 = One("conv -H 224 -W 224 -y 7 -x 7 -u 2 -v 2 -z same -F 1");
  CHECK(s3.pad == Dhw{0, 2, 2});
  CHECK(s3.pad_mode == PadMode::kSame);
  CHECK(s3.Out() == Dhw{1, 112, 112});
  CHECK(s3.ReadsPastPaddedInput());
  // Its canonical line prints the pads and the mode and parses back to it.
  CHECK_THAT(ToDriverLine(s3), Catch::Contains("-p 2 -q 2") && Catch::Contains("-m conv -z same"));
  CHECK(One(ToDriverLine(s3)) == s3);
  // MIOpen's API shape of the shipped dbs' keys: 10x10, 3x3 stride 2, MIOpenDriver's pads 0,
  // output 5x5 (the default rule gives 4x4); -p given on the line is replaced, as MIOpenDriver does.
  const Problem api = One("conv -H 10 -W 10 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -z same -F 1");
  CHECK(api.pad == Dhw{0, 0, 0});
  CHECK(api.Out() == Dhw{1, 5, 5});
  CHECK(One(ToDriverLine(api)) == api);
  // "valid" never changes the size for pad 0 (it is the default rule): written as default.
  CHECK(One("conv -H 10 -W 10 -y 3 -x 3 -z valid -F 1").pad_mode == PadMode::kDefault);
  // A dilation other than 1 with a filter larger than 1: MIOpenDriver ignores -z.
  CHECK(One("conv -H 10 -W 10 -y 3 -x 3 -l 2 -j 2 -z same -F 1").pad == Dhw{0, 0, 0});
  CHECK_THAT(Error("conv -z full -F 1"), Catch::Contains("pad_mode"));
  // Transposed mode: MIOpenDriver sets no pads for -z and keeps the given ones.
  const Problem t = One("conv -H 10 -W 10 -y 3 -x 3 -p 1 -q 2 -u 2 -v 2 -z same -m trans -F 1");
  CHECK(t.pad == Dhw{0, 1, 2});
  CHECK(t.pad_mode == PadMode::kDefault);
  CHECK(t == One("conv -H 10 -W 10 -y 3 -x 3 -p 1 -q 2 -u 2 -v 2 -m trans -F 1"));
}

TEST_CASE("a filter larger than the padded input gives one output row, as in MIOpen") {
  // MIOpen's GetForwardOutputTensor: max(1, (in - (1 + d(f-1)) + 2p) / s + 1).
  const Problem p = One("conv -n 1 -c 256 -H 1 -W 1 -k 1024 -y 7 -x 7 -F 2");
  CHECK(p.Out() == Dhw{1, 1, 1});
  CHECK(p.ReadsPastPaddedInput());
  CHECK(One("conv -H 4 -W 4 -y 7 -x 7 -F 1").Out() == Dhw{1, 1, 1});
  CHECK_FALSE(One("conv -H 8 -W 8 -y 7 -x 7 -F 1").ReadsPastPaddedInput());
}

TEST_CASE("bad flags and values are named in the error") {
  CHECK_THAT(Error("conv -n"), Catch::Contains("-n/--batchsize") && Catch::Contains("missing"));
  CHECK_THAT(Error("conv -n abc"), Catch::Contains("-n/--batchsize") && Catch::Contains("abc"));
  CHECK_THAT(Error("conv -n 12x"), Catch::Contains("12x"));
  CHECK_THAT(Error("conv -n 99999999999999999999"), Catch::Contains("99999999999999999999"));
  CHECK_THAT(Error("conv -n 0"), Catch::Contains("n 0"));
  CHECK_THAT(Error("conv -n -5"), Catch::Contains("n -5"));
  CHECK_THAT(Error("conv -H 4 -y 7 -m trans -p 9 -F 1"), Catch::Contains("empty output"));
  CHECK_THAT(Error("conv -p -1 -F 1"), Catch::Contains("pad_h -1"));
  CHECK_THAT(Error("conv -u 0 -F 1"), Catch::Contains("stride_h 0"));
  CHECK_THAT(Error("conv -Q 1"), Catch::Contains("unknown flag '-Q'"));
  CHECK_THAT(Error("conv --frobnicate 1"), Catch::Contains("--frobnicate"));
  CHECK_THAT(Error("conv 12"), Catch::Contains("unexpected argument '12'"));
  CHECK_THAT(Error("conv -_ 4"), Catch::Contains("-_/--spatial_dim"));
  CHECK_THAT(Error("conv -n 1048576 -c 1048576 -H 4096 -W 4096 -F 1"), Catch::Contains("exceeds"));
  CHECK_THAT(Error(""), Catch::Contains("empty"));
}

TEST_CASE("ParseDriverText reports every bad line with its number") {
  const std::string text =
      "# header\n"
      "\n"
      "conv -n 1 -F 1\n"
      "conv -n x -F 1\n"
      "   # indented comment\n"
      "convfp16 -n 2 -F 6\r\n"
      "pool -n 1\n"
      "conv -g 5 -F 1\n";
  const DriverFile f = ParseDriverText(text);
  REQUIRE(f.lines.size() == 2);
  CHECK(f.lines[0].line_number == 3);
  CHECK(f.lines[0].problems.size() == 1);
  CHECK(f.lines[1].line_number == 6);
  CHECK(f.lines[1].problems.size() == 2);
  CHECK(f.lines[1].text == "convfp16 -n 2 -F 6");
  REQUIRE(f.errors.size() == 3);
  CHECK(f.errors[0].line_number == 4);
  CHECK_THAT(f.errors[0].reason, Catch::Contains("-n/--batchsize"));
  CHECK(f.errors[1].line_number == 7);
  CHECK(f.errors[2].line_number == 8);
  CHECK_THAT(f.errors[2].reason, Catch::Contains("groups 5"));
}

TEST_CASE("ParseDriverFile errors for unreadable paths") {
  auto missing = ParseDriverFile("/nonexistent/dir/problems.txt");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  auto dir = ParseDriverFile("tests");
  CHECK_FALSE(dir.ok());
}

TEST_CASE("canonical lines") {
  const Problem p = One(
      "MIOpen(HIP): Command [LogCmdConvolution] MIOpenDriver.exe conv -n 32 -c 64 -H 256 -W 256 "
      "-k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC --fil_layout NHWC "
      "--out_layout NHWC -m conv -g 1 -F 1 -t 1");
  CHECK(ToDriverLine(p) ==
        "./bin/MIOpenDriver conv -n 32 -c 64 -H 256 -W 256 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 "
        "-l 1 -j 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -m conv -g 1 -F 1 -t 1");
  CHECK(p.Canonical() == ToDriverLine(p));

  auto r = ParseDriverLine(
      "./bin/MIOpenDriver conv -n 128 -c 1024 -H 14 -W 14 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 "
      "-l 1 -j 1 -m conv -g 1 -F 0 -t 1");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  CHECK(ToDriverLine((*r)[1]) ==
        "./bin/MIOpenDriver conv -n 128 -c 1024 -H 14 -W 14 -k 2048 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 "
        "-l 1 -j 1 -m conv -g 1 -F 2 -t 1");

  const Problem d3 = One("convfp16 -n 4 -c 8 -! 5 -H 6 -W 7 -k 16 -@ 3 -y 3 -x 3 -$ 1 -p 1 -q 1 "
                         "-# 1 -^ 2 -_ 3 -g 2 -F 4");
  CHECK(ToDriverLine(d3) ==
        "./bin/MIOpenDriver convfp16 -n 4 -c 8 --in_d 5 -H 6 -W 7 -k 16 --fil_d 3 -y 3 -x 3 "
        "--pad_d 1 -p 1 -q 1 --conv_stride_d 1 -u 1 -v 1 --dilation_d 2 -l 1 -j 1 --spatial_dim 3 "
        "-m conv -g 2 -F 4 -t 1");

  const Problem t = One("convint8 -n 2 -c 8 -H 7 -W 7 -k 4 -u 2 -v 2 -m trans -Y 1 -F 1");
  CHECK(ToDriverLine(t) ==
        "./bin/MIOpenDriver convint8 -n 2 -c 8 -H 7 -W 7 -k 4 -y 3 -x 3 -p 0 -q 0 -u 2 -v 2 -l 1 "
        "-j 1 -m trans -Y 1 -X 0 -g 1 -F 1 -t 1");
}

}  // namespace
}  // namespace tuna
