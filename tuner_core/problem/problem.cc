#include "tuner_core/problem/problem.h"

#include <algorithm>
#include <functional>

#include "tuner_core/problem/named_values.h"

namespace tuna {
namespace {

// Strides for dims (N, C, D, H, W) stored channels-first or channels-last.
TensorDesc MakeDesc(std::array<int64_t, 5> dims, Layout layout) {
  TensorDesc d;
  d.dims = dims;
  const int64_t c = dims[1], D = dims[2], h = dims[3], w = dims[4];
  if (IsChannelsLast(layout)) {
    d.strides = {D * h * w * c, 1, h * w * c, w * c, c};
  } else {
    d.strides = {c * D * h * w, D * h * w, h * w, w, 1};
  }
  return d;
}

// Ceiling of a / b for b > 0 and any sign of a (MIOpen's integer_division_ceil).
int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

}  // namespace

Dhw Problem::DefaultOut() const {
  Dhw out{};
  for (int i = 0; i < 3; ++i) {
    if (mode == ConvMode::kTrans) {
      out[i] = (in[i] - 1) * stride[i] - 2 * pad[i] + dilation[i] * (fil[i] - 1) + 1 +
               trans_output_pad[i];
    } else {
      // MIOpen: max(1, (in - (1 + d(f-1)) + 2p) / s + 1) with C++'s truncating division.
      const int64_t num = in[i] + 2 * pad[i] - dilation[i] * (fil[i] - 1) - 1;
      out[i] = num < 0 ? 1 : num / stride[i] + 1;
    }
  }
  return out;
}

Dhw Problem::Out() const {
  if (pad_mode == PadMode::kDefault || mode != ConvMode::kConv) return DefaultOut();
  Dhw out{};
  for (int i = 0; i < 3; ++i) {
    if (stride[i] <= 0) return DefaultOut();  // invalid; ValidateProblem reports it
    out[i] = pad_mode == PadMode::kSame ? CeilDiv(in[i], stride[i])
                                        : CeilDiv(in[i] - fil[i] + 1, stride[i]);
  }
  return out;
}

bool Problem::ReadsPastPaddedInput() const {
  if (mode != ConvMode::kConv) return false;
  const Dhw o = Out();
  for (int i = 0; i < 3; ++i) {
    if ((o[i] - 1) * stride[i] + dilation[i] * (fil[i] - 1) + 1 > in[i] + 2 * pad[i]) return true;
  }
  return false;
}

TensorDesc Problem::XDesc() const { return MakeDesc({n, c, in[0], in[1], in[2]}, in_layout); }

TensorDesc Problem::WDesc() const {
  return MakeDesc({k, c / groups, fil[0], fil[1], fil[2]}, fil_layout);
}

TensorDesc Problem::YDesc() const {
  const Dhw o = Out();
  return MakeDesc({n, k, o[0], o[1], o[2]}, out_layout);
}

double Problem::Flops() const {
  // Every filter tap meets every element of the smaller side: the output in convolution mode,
  // the input in transposed mode (which scatters each input element through the filter).
  const Dhw o = mode == ConvMode::kTrans ? in : Out();
  return 2.0 * double(n) * double(k) * double(c / groups) * double(fil[0] * fil[1] * fil[2]) *
         double(o[0] * o[1] * o[2]);
}

namespace {

constexpr NamedValue<Direction> kDirectionNames[] = {
    {Direction::kForward, "F"}, {Direction::kBackwardData, "B"}, {Direction::kBackwardWeights, "W"}};
constexpr NamedValue<DataType> kDataTypeNames[] = {
    {DataType::kFp32, "FP32"}, {DataType::kFp16, "FP16"}, {DataType::kBf16, "BF16"}, {DataType::kInt8, "INT8"}};
constexpr NamedValue<Layout> kLayoutNames[] = {
    {Layout::kNCHW, "NCHW"}, {Layout::kNHWC, "NHWC"}, {Layout::kNCDHW, "NCDHW"}, {Layout::kNDHWC, "NDHWC"}};
constexpr NamedValue<PadMode> kPadModeNames[] = {
    {PadMode::kDefault, "default"}, {PadMode::kSame, "same"}, {PadMode::kValid, "valid"}};

}  // namespace

std::string_view DirectionName(Direction d) { return NameIn(kDirectionNames, d); }
std::string_view DataTypeName(DataType t) { return NameIn(kDataTypeNames, t); }
bool IsChannelsLast(Layout l) { return l == Layout::kNHWC || l == Layout::kNDHWC; }

std::string_view LayoutName(Layout l) { return NameIn(kLayoutNames, l); }
std::string_view PadModeName(PadMode m) { return NameIn(kPadModeNames, m); }

PadMode NormalizedPadMode(const Problem& p) {
  if (p.pad_mode == PadMode::kDefault || p.mode != ConvMode::kConv) return PadMode::kDefault;
  for (int i = 0; i < 3; ++i) {
    if (p.dilation[i] != 1) return PadMode::kDefault;  // MIOpen falls back to the default rule
  }
  return p.Out() == p.DefaultOut() ? PadMode::kDefault : p.pad_mode;
}

Dhw SamePads(const Problem& p) {
  Dhw pads{0, 0, 0};
  for (int i = p.spatial_dims == 3 ? 0 : 1; i < 3; ++i) {
    const int64_t in = p.in[i], s = p.stride[i], f = p.fil[i];
    if (s <= 0) continue;
    const int64_t rem = in % s;
    pads[i] = std::max<int64_t>(f - (rem == 0 ? s : rem), 0) / 2;
  }
  return pads;
}

size_t DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kFp32: return 4;
    case DataType::kFp16: return 2;
    case DataType::kBf16: return 2;
    case DataType::kInt8: return 1;
  }
  return 0;
}

size_t ProblemHash::operator()(const Problem& p) const {
  size_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) { h = (h ^ std::hash<int64_t>{}(v)) * 1099511628211ull; };
  mix(p.spatial_dims), mix(p.n), mix(p.c), mix(p.k), mix(p.groups);
  for (const Dhw* a : {&p.in, &p.fil, &p.pad, &p.stride, &p.dilation, &p.trans_output_pad})
    for (int64_t v : *a) mix(v);
  mix(int(p.mode)), mix(int(p.pad_mode)), mix(int(p.direction)), mix(int(p.data_type));
  mix(int(p.in_layout)), mix(int(p.fil_layout)), mix(int(p.out_layout));
  return h;
}

}  // namespace tuna
