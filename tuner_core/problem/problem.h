// The convolution problem: an immutable value type shared by every module.
//
// Fields are stored in forward terms, exactly as MIOpenDriver takes them: x is the forward
// input (N, C, D, H, W), w the filter (K, C/G, FD, FH, FW), y the forward output. A backward
// problem keeps the same fields and only changes `direction`; the MIOpen serialized forms
// (find-db key, perf-db columns) swap tensor roles for B and W as MIOpen does (see keys.h).
//
// 2D problems have spatial_dims == 2 and their depth fields normalised to in_d = fil_d = 1,
// pad_d = 0, stride_d = dilation_d = 1, so two equal 2D problems compare equal.
//
// Output size (Out()) follows MIOpen's ConvolutionDescriptor::GetForwardOutputTensor:
//   default: max(1, (in + 2p - d(f-1) - 1) / s + 1)   (MIOpen clamps to 1: a filter larger
//            than the padded input gives one output row, reading zeros past the input's end);
//   same:    ceil(in / s)            (conv mode, every dilation 1);
//   valid:   ceil((in - f + 1) / s)  (conv mode, every dilation 1).
// The pads of a non-default mode are MIOpenDriver's for it (SamePads; 0 for valid), so that the
// MIOpenDriver line `-z same` names exactly one problem.
// Inputs outside [0, in) read as zero in every mode. pad_mode is normalised: it is kDefault
// unless the mode changes the output size (ValidateProblem refuses anything else), so a problem
// has one value and MIOpen's keys (which do not record the mode) map to one problem.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tuna {

enum class Direction { kForward, kBackwardData, kBackwardWeights };
enum class DataType { kFp32, kFp16, kBf16, kInt8 };
enum class Layout { kNCHW, kNHWC, kNCDHW, kNDHWC };
enum class ConvMode { kConv, kTrans };
// MIOpen's miopenPaddingMode_t: how the output size follows from the input (see above).
enum class PadMode { kDefault, kSame, kValid };

// Index 0 = depth, 1 = height, 2 = width.
using Dhw = std::array<int64_t, 3>;

// Dimensions (N, C, D, H, W order) and element strides of one tensor in its memory layout.
struct TensorDesc {
  std::array<int64_t, 5> dims{};
  std::array<int64_t, 5> strides{};
  int64_t ElementCount() const { return dims[0] * dims[1] * dims[2] * dims[3] * dims[4]; }
  int64_t Offset(int64_t n, int64_t c, int64_t d, int64_t h, int64_t w) const {
    return n * strides[0] + c * strides[1] + d * strides[2] + h * strides[3] + w * strides[4];
  }
  bool operator==(const TensorDesc&) const = default;
};

struct Problem {
  int spatial_dims = 2;
  int64_t n = 1;  // batch
  int64_t c = 1;  // input channels (all groups)
  int64_t k = 1;  // output channels (all groups)
  Dhw in{1, 1, 1};
  Dhw fil{1, 1, 1};
  Dhw pad{0, 0, 0};
  Dhw stride{1, 1, 1};
  Dhw dilation{1, 1, 1};
  Dhw trans_output_pad{0, 0, 0};  // only meaningful for ConvMode::kTrans
  int64_t groups = 1;
  ConvMode mode = ConvMode::kConv;
  PadMode pad_mode = PadMode::kDefault;
  Direction direction = Direction::kForward;
  DataType data_type = DataType::kFp32;
  Layout in_layout = Layout::kNCHW;
  Layout fil_layout = Layout::kNCHW;
  Layout out_layout = Layout::kNCHW;

  bool operator==(const Problem&) const = default;

  // Forward output spatial size per dimension (see the rule above; trans mode:
  // (in - 1)s - 2p + d(f-1) + 1 + trans_output_pad).
  Dhw Out() const;
  // The output size the default pad mode would give (Out() when pad_mode is kDefault).
  Dhw DefaultOut() const;
  // True when the last output's window ends past the input plus its end padding (MIOpen's
  // clamp to 1, pad mode same): kernels must bound-check reads on that side too.
  bool ReadsPastPaddedInput() const;
  // x (forward input), w (filter) and y (forward output) in their layouts. For 2D the D
  // extent is 1. Filter dims are (K, C/G, FD, FH, FW).
  TensorDesc XDesc() const;
  TensorDesc WDesc() const;
  TensorDesc YDesc() const;
  // Multiply-adds * 2 of the direct convolution (same for every direction).
  double Flops() const;
  // The canonical MIOpenDriver line of this single-direction problem (see driver_line.h).
  std::string Canonical() const;
};

std::string_view DirectionName(Direction d);  // "F", "B", "W" (MIOpen's key letters)
std::string_view DataTypeName(DataType t);    // "FP32", "FP16", "BF16", "INT8"
std::string_view LayoutName(Layout l);        // "NCHW", ...
bool IsChannelsLast(Layout l);                // NHWC or NDHWC
std::string_view PadModeName(PadMode m);      // "default", "same", "valid" (MIOpenDriver -z)
// kDefault when the mode gives the default output size for every dimension (or cannot apply:
// trans mode, a dilation other than 1); otherwise `p.pad_mode` is kept.
PadMode NormalizedPadMode(const Problem& p);
// MIOpenDriver's pads for -z same (conv_driver.hpp): (f - (in % s ? in % s : s)) / 2, at least 0,
// per dimension (2D: depth 0).
Dhw SamePads(const Problem& p);
size_t DataTypeSize(DataType t);

struct ProblemHash {
  size_t operator()(const Problem& p) const;
};

}  // namespace tuna
