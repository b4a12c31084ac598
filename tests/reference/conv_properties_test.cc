// Properties of the storage-type entry points: layout and thread-count invariance (bit-exact),
// FP16/BF16 against FP32/FP64, FP64 accumulation, output overwriting and argument errors.
#include <cstring>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/reference/conv_test_util.h"
#include "tuner_core/numeric/fp16.h"
#include "tuner_core/numeric/round_to_odd.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"

namespace tuna {
namespace {

using namespace reference;

const Direction kDirections[] = {Direction::kForward, Direction::kBackwardData,
                                 Direction::kBackwardWeights};

// Random inputs for `dir` of p (in p's layouts and type) and an output of the right size.
struct Buffers {
  std::vector<std::byte> x, w, y, out;
};

Buffers MakeBuffers(const Problem& p, Direction dir, uint64_t seed) {
  const ElementType t = StorageType(p.data_type);
  Buffers b;
  b.x = RandomBuffer(t, p.XDesc().ElementCount(), seed);
  b.w = RandomBuffer(t, p.WDesc().ElementCount(), seed + 1);
  b.y = RandomBuffer(t, p.YDesc().ElementCount(), seed + 2);
  b.out.assign(OutputDesc(p, dir).ElementCount() * OutputElementSize(p, dir), std::byte{0x7f});
  return b;
}

absl::Status Run(const Problem& p, Direction dir, Buffers& b, ConvOptions o = {}) {
  Problem q = p;
  q.direction = dir;
  return RunConv(q, ConvTensors{b.x.data(), b.w.data(), b.y.data(), b.out.data()}, o);
}

Problem GroupedStrided() {
  Problem p = testing::Make2D(3, 6, 9, 8, 4, 3, 3);
  p.groups = 2, p.pad = {0, 1, 2}, p.stride = {1, 2, 1}, p.dilation = {1, 1, 2};
  return p;
}

Problem Small3D() {
  Problem p = testing::Make3D(2, 4, 4, 5, 6, 6, 2, 3, 3);
  p.groups = 2, p.pad = {1, 1, 0}, p.stride = {1, 2, 1}, p.dilation = {2, 1, 1};
  return p;
}

TEST_CASE("thread count does not change a single bit") {
  for (Problem p : {GroupedStrided(), Small3D()}) {
    for (DataType t : {DataType::kFp32, DataType::kFp16, DataType::kBf16}) {
      p.data_type = t;
      for (Direction dir : kDirections) {
        INFO(testing::Describe(p) << " type " << DataTypeName(t) << " dir "
                                  << DirectionName(dir));
        Buffers one = MakeBuffers(p, dir, 7);
        REQUIRE(Run(p, dir, one, {.threads = 1}).ok());
        for (int threads : {2, 3, 8}) {
          Buffers many = MakeBuffers(p, dir, 7);
          REQUIRE(Run(p, dir, many, {.threads = threads}).ok());
          CHECK(std::memcmp(one.out.data(), many.out.data(), one.out.size()) == 0);
        }
      }
    }
  }
}

TEST_CASE("layouts give the same logical results, bit for bit") {
  for (const Problem& base : {GroupedStrided(), Small3D()}) {
    const Layout first = testing::ChannelsFirst(base), last = testing::ChannelsLast(base);
    // Logical tensors fixed in channels-first form; every layout combination must agree.
    Problem cf = base;
    cf.in_layout = cf.fil_layout = cf.out_layout = first;
    const std::vector<double> x0 = RandomDoubles(ElementType::kFp32, cf.XDesc().ElementCount(), 1);
    const std::vector<double> w0 = RandomDoubles(ElementType::kFp32, cf.WDesc().ElementCount(), 2);
    const std::vector<double> y0 = RandomDoubles(ElementType::kFp32, cf.YDesc().ElementCount(), 3);
    for (Direction dir : kDirections) {
      std::vector<float> expected;
      for (int combo = 0; combo < 8; ++combo) {
        Problem p = base;
        p.in_layout = combo & 1 ? last : first;
        p.fil_layout = combo & 2 ? last : first;
        p.out_layout = combo & 4 ? last : first;
        INFO(testing::Describe(p) << " dir " << DirectionName(dir));
        auto to_float = [](const std::vector<double>& v) {
          return std::vector<float>(v.begin(), v.end());
        };
        const std::vector<float> x = to_float(testing::Relayout(cf.XDesc(), p.XDesc(), x0));
        const std::vector<float> w = to_float(testing::Relayout(cf.WDesc(), p.WDesc(), w0));
        const std::vector<float> y = to_float(testing::Relayout(cf.YDesc(), p.YDesc(), y0));
        const TensorDesc od = OutputDesc(p, dir);
        std::vector<float> out(od.ElementCount());
        Problem q = p;
        q.direction = dir;
        REQUIRE(RunConv(q, {x.data(), w.data(), y.data(), out.data()}, {.threads = 2}).ok());
        // Back to channels-first for comparison.
        const std::vector<float> logical =
            testing::Relayout(od, OutputDesc(cf, dir), out);
        if (combo == 0) expected = logical;
        else CHECK(logical == expected);
      }
    }
  }
}

TEST_CASE("FP64 accumulation matches the F64 API rounded once") {
  for (int seed = 1; seed <= 6; ++seed) {
    Problem p = testing::RandomProblem(1000 + seed);
    for (DataType t : {DataType::kFp32, DataType::kFp16, DataType::kBf16}) {
      p.data_type = t;
      const ElementType et = StorageType(t);
      for (Direction dir : kDirections) {
        INFO(testing::Describe(p) << " type " << DataTypeName(t) << " dir "
                                  << DirectionName(dir));
        Buffers b = MakeBuffers(p, dir, seed * 10);
        REQUIRE(Run(p, dir, b, {.threads = 2, .accumulation = Accumulation::kFp64}).ok());
        const std::vector<double> x = ToDoubles(et, b.x.data(), p.XDesc().ElementCount());
        const std::vector<double> w = ToDoubles(et, b.w.data(), p.WDesc().ElementCount());
        const std::vector<double> y = ToDoubles(et, b.y.data(), p.YDesc().ElementCount());
        std::vector<double> ref(OutputDesc(p, dir).ElementCount());
        if (dir == Direction::kForward) REQUIRE(ConvForwardF64(p, x, w, ref).ok());
        if (dir == Direction::kBackwardData) REQUIRE(ConvBackwardDataF64(p, y, w, ref).ok());
        if (dir == Direction::kBackwardWeights) REQUIRE(ConvBackwardWeightsF64(p, x, y, ref).ok());
        std::vector<std::byte> rounded(b.out.size());
        for (size_t i = 0; i < ref.size(); ++i) StoreFromDouble(et, rounded.data(), i, ref[i]);
        CHECK(std::memcmp(rounded.data(), b.out.data(), rounded.size()) == 0);
      }
    }
  }
}

TEST_CASE("FP16 and BF16 results are within tolerance of the FP64 result") {
  for (Problem p : {GroupedStrided(), Small3D(), testing::RandomProblem(77)}) {
    for (DataType t : {DataType::kFp16, DataType::kBf16, DataType::kFp32}) {
      p.data_type = t;
      for (Direction dir : kDirections) {
        INFO(testing::Describe(p) << " type " << DataTypeName(t) << " dir "
                                  << DirectionName(dir));
        Buffers b = MakeBuffers(p, dir, 99);
        REQUIRE(Run(p, dir, b, {.threads = 2}).ok());
        const ElementType et = StorageType(t);
        const std::vector<double> x = ToDoubles(et, b.x.data(), p.XDesc().ElementCount());
        const std::vector<double> w = ToDoubles(et, b.w.data(), p.WDesc().ElementCount());
        const std::vector<double> y = ToDoubles(et, b.y.data(), p.YDesc().ElementCount());
        std::vector<double> ref(OutputDesc(p, dir).ElementCount());
        if (dir == Direction::kForward) REQUIRE(ConvForwardF64(p, x, w, ref).ok());
        if (dir == Direction::kBackwardData) REQUIRE(ConvBackwardDataF64(p, y, w, ref).ok());
        if (dir == Direction::kBackwardWeights) REQUIRE(ConvBackwardWeightsF64(p, x, y, ref).ok());
        absl::StatusOr<VerifyReport> r =
            VerifyConvOutput(p, dir, b.out.data(), ref.data(), /*expected_is_f64=*/true);
        REQUIRE(r.ok());
        INFO(r->Summary());
        CHECK(r->ok);
        // Tighter than the default tolerance: one output rounding plus FP32 sums.
        const double unit = t == DataType::kFp16 ? 0x1.0p-11 : t == DataType::kBf16 ? 0x1.0p-8
                                                                                    : 0x1.0p-24;
        CHECK(r->max_rel_error <= 2 * unit + 1e-6);
      }
    }
  }
}

TEST_CASE("FP16 reference on a ResNet-like reduction stays accurate") {
  // Forward with C=64, 3x3 (reduction 576): FP16 inputs in [-0.5, 0.5], FP32 sums.
  Problem p = testing::Make2D(1, 64, 8, 8, 8, 3, 3);
  p.pad = {0, 1, 1};
  p.data_type = DataType::kFp16;
  Buffers b = MakeBuffers(p, Direction::kForward, 5);
  REQUIRE(Run(p, Direction::kForward, b).ok());
  const std::vector<double> x = ToDoubles(ElementType::kFp16, b.x.data(), p.XDesc().ElementCount());
  const std::vector<double> w = ToDoubles(ElementType::kFp16, b.w.data(), p.WDesc().ElementCount());
  std::vector<double> ref(p.YDesc().ElementCount());
  REQUIRE(ConvForwardF64(p, x, w, ref).ok());
  const absl::StatusOr<VerifyReport> v =
      VerifyConvOutput(p, Direction::kForward, b.out.data(), ref.data(), true);
  REQUIRE(v.ok());
  INFO(v->Summary());
  CHECK(v->ok);
  CHECK(v->scale > 0.5);  // the sums are not trivially small
}

TEST_CASE("INT8 forward matches the naive definition exactly") {
  Problem p = GroupedStrided();
  p.data_type = DataType::kInt8;
  Buffers b = MakeBuffers(p, Direction::kForward, 3);
  REQUIRE(Run(p, Direction::kForward, b, {.threads = 2}).ok());
  const std::vector<double> x = ToDoubles(ElementType::kInt8, b.x.data(), p.XDesc().ElementCount());
  const std::vector<double> w = ToDoubles(ElementType::kInt8, b.w.data(), p.WDesc().ElementCount());
  const std::vector<double> ref = testing::NaiveForward(p, x, w);
  const std::vector<double> got =
      ToDoubles(ElementType::kInt32, b.out.data(), p.YDesc().ElementCount());
  CHECK(got == ref);
}

TEST_CASE("MIOpen's output rules: a filter larger than its input, pad mode same (INT8, exact)") {
  // MIOpen clamps the output to 1 row (2x2 input, 3x3 filter, pad 0) and pad mode same gives
  // ceil(in / stride) (10x10, 3x3 stride 2, pads 0 -> 5x5): reads past the input are zeros.
  Problem clamp = testing::Make2D(1, 4, 2, 2, 4, 3, 3);
  clamp.pad = {0, 0, 0};
  Problem same = testing::Make2D(2, 4, 10, 10, 4, 3, 3);
  same.pad = {0, 0, 0};
  same.stride = {1, 2, 2};
  same.pad_mode = PadMode::kSame;
  REQUIRE(clamp.Out() == Dhw{1, 1, 1});
  REQUIRE(same.Out() == Dhw{1, 5, 5});
  for (Problem p : {clamp, same}) {
    p.data_type = DataType::kInt8;
    Buffers b = MakeBuffers(p, Direction::kForward, 5);
    REQUIRE(Run(p, Direction::kForward, b).ok());
    const std::vector<double> x =
        ToDoubles(ElementType::kInt8, b.x.data(), p.XDesc().ElementCount());
    const std::vector<double> w =
        ToDoubles(ElementType::kInt8, b.w.data(), p.WDesc().ElementCount());
    CHECK(ToDoubles(ElementType::kInt32, b.out.data(), p.YDesc().ElementCount()) ==
          testing::NaiveForward(p, x, w));
  }
}

TEST_CASE("outputs are overwritten, not accumulated") {
  Problem p = GroupedStrided();
  for (Direction dir : kDirections) {
    Buffers a = MakeBuffers(p, dir, 11);
    Buffers b = MakeBuffers(p, dir, 11);
    std::fill(b.out.begin(), b.out.end(), std::byte{0x3f});  // ~0.75 in every float
    REQUIRE(Run(p, dir, a).ok());
    REQUIRE(Run(p, dir, b).ok());
    REQUIRE(Run(p, dir, b).ok());  // twice: no accumulation
    CHECK(a.out == b.out);
  }
}

TEST_CASE("argument errors") {
  Problem p = testing::Make2D(1, 4, 5, 5, 4, 3, 3);
  std::vector<float> buf(1000);
  const ConvTensors t{buf.data(), buf.data(), buf.data(), buf.data()};
  SECTION("transposed convolution is unimplemented") {
    p.mode = ConvMode::kTrans;
    CHECK(RunConv(p, t).code() == absl::StatusCode::kUnimplemented);
  }
  SECTION("groups must divide channels") {
    p.groups = 3;
    CHECK(RunConv(p, t).code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("empty output") {  // pad mode valid with a filter larger than the input
    p.pad_mode = PadMode::kValid;
    p.pad = {0, 0, 0};
    p.in = {1, 2, 2};
    CHECK(RunConv(p, t).code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("2D with depth padding") {
    p.pad = {1, 0, 0};
    CHECK(RunConv(p, t).code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("null buffer") {
    CHECK(ConvForward(p, nullptr, buf.data(), buf.data()).code() ==
          absl::StatusCode::kInvalidArgument);
    // backward data does not read x, so a null x is fine there
    CHECK(ConvBackwardData(p, buf.data(), buf.data(), buf.data()).ok());
  }
  SECTION("negative threads") {
    CHECK(RunConv(p, t, {.threads = -1}).code() == absl::StatusCode::kInvalidArgument);
  }
  SECTION("F64 spans too small") {
    std::vector<double> small(3), big(1000);
    CHECK(ConvForwardF64(p, small, big, big).code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace tuna
