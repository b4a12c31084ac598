// The convolution problem: an immutable value type shared by every module.
//
// Fields are stored in forward terms, exactly as MIOpenDriver takes them: x is the forward
// input (N, C, D, H, W), w the filter (K, C/G, FD, FH, FW), y the forward output. A backward
// problem keeps the same fields and only changes `direction`; the MIOpen serialized forms
// (find-db key, perf-db columns) swap tensor roles for B and W as MIOpen does (see keys.h).
//
// 2D problems have spatial_dims == 2 and their depth fields normalised to in_d = fil_d = 1,
// pad_d = 0, stride_d = dilation_d = 1, so two equal 2D problems compare equal.
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
  Direction direction = Direction::kForward;
  DataType data_type = DataType::kFp32;
  Layout in_layout = Layout::kNCHW;
  Layout fil_layout = Layout::kNCHW;
  Layout out_layout = Layout::kNCHW;

  bool operator==(const Problem&) const = default;

  // Forward output spatial size: (in + 2p - d(f-1) - 1) / s + 1 per dimension (conv mode).
  Dhw Out() const;
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
size_t DataTypeSize(DataType t);

struct ProblemHash {
  size_t operator()(const Problem& p) const;
};

}  // namespace tuna
