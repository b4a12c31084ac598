// Problems for the GPU solver tests: the ResNet-50 layers of testdata/resnet50_n32.txt (the 23
// unique convolutions) re-typed, re-laid-out and re-batched, plus small edge-case problems.
#pragma once

#include <array>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/problem.h"

namespace tuna::testing {

inline Layout Layout3(Layout l, int dims) {
  if (dims == 3) return l == Layout::kNHWC ? Layout::kNDHWC : Layout::kNCDHW;
  return l;
}

inline Problem With(Problem p, Direction dir, DataType type, Layout layout) {
  p.direction = dir;
  p.data_type = type;
  p.in_layout = p.fil_layout = p.out_layout = Layout3(layout, p.spatial_dims);
  return p;
}

// 3x3 stride-1 problems at the Winograd solvers' edges (direction, type and layout left to the
// caller): odd sizes and tile tails, padding 0-2 (also unequal), 1x1 and 2x2 images, one channel,
// batches whose tiles cross images, large C.
inline std::vector<Problem> WinogradEdgeProblems() {
  std::vector<Problem> out;
  for (auto [n, c, k, h, w, ph, pw] : std::vector<std::array<int64_t, 7>>{
           {2, 5, 7, 9, 11, 1, 1}, {1, 3, 6, 8, 5, 0, 0},   {3, 9, 4, 7, 7, 2, 2},   {1, 16, 16, 1, 1, 1, 1},
           {2, 8, 12, 2, 3, 2, 2}, {1, 33, 17, 13, 6, 0, 0}, {2, 6, 10, 11, 9, 0, 2}, {3, 4, 5, 10, 14, 1, 1},
           {2, 1, 1, 10, 10, 1, 1}, {1, 2048, 8, 5, 6, 1, 1}}) {
    Problem b;
    b.n = n, b.c = c, b.k = k;
    b.in = {1, h, w};
    b.fil = {1, 3, 3};
    b.pad = {0, ph, pw};
    out.push_back(b);
  }
  return out;
}

// A 2D forward problem in NHWC: square stride and dilation, padding per dimension.
inline Problem NhwcForward(int64_t n, int64_t c, int64_t k, int64_t h, int64_t w, int64_t fy, int64_t fx,
                           int64_t pad_h, int64_t pad_w, int64_t stride, int64_t dil, int64_t groups,
                           DataType type = DataType::kFp16) {
  Problem p;
  p.n = n, p.c = c, p.k = k;
  p.in = {1, h, w};
  p.fil = {1, fy, fx};
  p.pad = {0, pad_h, pad_w};
  p.stride = {1, stride, stride};
  p.dilation = {1, dil, dil};
  p.groups = groups;
  return With(p, Direction::kForward, type, Layout::kNHWC);
}

// The same problem's backward weights (NHWC x, dy and dw).
inline Problem NhwcWrw(int64_t n, int64_t c, int64_t k, int64_t h, int64_t w, int64_t fy, int64_t fx, int64_t pad_h,
                       int64_t pad_w, int64_t stride, int64_t dil, int64_t groups, DataType type = DataType::kFp16) {
  return With(NhwcForward(n, c, k, h, w, fy, fx, pad_h, pad_w, stride, dil, groups), Direction::kBackwardWeights, type,
              Layout::kNHWC);
}

// Forward problems with thin inputs (C/G <= 8), NHWC FP16 until re-typed, at the small-C solvers'
// edges: C = 1..8, strides 1-3, dilation, padding per dimension, 1x7 / 7x1 / 5x5 / 7x7 / 1x1
// filters, groups and depthwise, K tails, odd sizes, a 1x1 output.
inline std::vector<Problem> ThinInputProblems() {
  return {
      NhwcForward(2, 3, 32, 29, 29, 3, 3, 0, 0, 2, 1, 1),   // the Inception-v3 stem, smaller
      NhwcForward(2, 1, 8, 17, 13, 3, 3, 1, 1, 1, 1, 1),    // C = 1
      NhwcForward(1, 2, 12, 11, 11, 5, 5, 2, 2, 1, 1, 1),   // C = 2, 5x5, K = 12 (a channel-tile tail)
      NhwcForward(2, 4, 16, 20, 20, 7, 7, 3, 3, 2, 1, 1),   // 7x7 stride 2 (ResNet's stem, 4 channels)
      NhwcForward(1, 8, 24, 9, 10, 3, 3, 1, 1, 3, 1, 1),    // C = 8, stride 3
      NhwcForward(2, 3, 16, 12, 13, 3, 3, 2, 2, 1, 2, 1),   // dilation 2
      NhwcForward(1, 4, 8, 10, 17, 1, 7, 0, 3, 1, 1, 1),    // 1x7, padding per dimension
      NhwcForward(1, 4, 8, 17, 10, 7, 1, 3, 0, 1, 1, 1),    // 7x1
      NhwcForward(2, 8, 16, 9, 9, 3, 3, 1, 1, 1, 1, 2),     // groups 2 (C/G = 4, K/G = 8)
      NhwcForward(1, 16, 48, 7, 7, 3, 3, 1, 1, 2, 1, 4),    // groups 4 (C/G = 4, K/G = 12), stride 2
      NhwcForward(2, 6, 6, 8, 8, 3, 3, 1, 1, 1, 1, 6),      // depthwise
      NhwcForward(1, 4, 12, 9, 7, 3, 3, 1, 1, 1, 1, 4),     // C/G = 1, K/G = 3
      NhwcForward(3, 5, 7, 5, 6, 3, 3, 1, 1, 1, 1, 1),      // C = 5, K = 7, a 5x6 image: tails everywhere
      NhwcForward(2, 8, 10, 6, 7, 1, 1, 0, 0, 1, 1, 1),     // 1x1
      NhwcForward(1, 3, 8, 16, 16, 3, 3, 1, 1, 3, 2, 1),    // stride 3 with dilation 2
      NhwcForward(2, 3, 5, 3, 3, 3, 3, 0, 0, 1, 1, 1),      // a 1x1 output
      NhwcForward(2, 3, 160, 15, 13, 3, 3, 1, 1, 1, 1, 1),  // K = 160: several channel tiles
      NhwcForward(1, 8, 256, 9, 9, 3, 3, 1, 1, 2, 1, 2),    // groups 2 with K/G = 128
  };
}

// ThinInputProblems() re-typed and re-laid-out for a device or cpu-backend check: problem i in
// variants i % n and (i + second) % n of `variants` (problem 0, the stem, in all of them), then
// two mixed-layout problems (x NHWC / w, y NCHW; x, w NCHW / y NHWC).
inline std::vector<Problem> ThinInputChecks(const std::vector<std::pair<DataType, Layout>>& variants, size_t second) {
  std::vector<Problem> out;
  const std::vector<Problem> edge = ThinInputProblems();
  for (size_t i = 0; i < edge.size(); ++i) {
    for (size_t v = 0; v < variants.size(); ++v) {
      if (i == 0 || v == i % variants.size() || v == (i + second) % variants.size()) {
        out.push_back(With(edge[i], Direction::kForward, variants[v].first, variants[v].second));
      }
    }
  }
  Problem mixed = edge[8];
  mixed.fil_layout = mixed.out_layout = Layout::kNCHW;
  out.push_back(mixed);
  mixed = edge[2];
  mixed.in_layout = mixed.fil_layout = Layout::kNCHW;
  out.push_back(mixed);
  return out;
}

// Forward problems of the ResNet-50 file (cwd = runfiles root under bazel test); empty when the
// file cannot be read or parsed (callers REQUIRE non-empty).
inline std::vector<Problem> ResNet50Layers() {
  std::ifstream in("tests/solver/testdata/resnet50_n32.txt");
  std::stringstream ss;
  ss << in.rdbuf();
  std::vector<Problem> out;
  DriverFile file = ParseDriverText(ss.str());
  if (!file.errors.empty()) return {};
  for (const DriverFileLine& line : file.lines) {
    for (const Problem& p : line.problems) {
      if (p.direction == Direction::kForward) out.push_back(p);
    }
  }
  return out;
}

// The Hopper device checks' problems in `dir`: `layers` 2.. (ResNet50Layers) in FP16 NHWC at
// batch `batch(i)` (layer i, 0-based), every fourth of them (i % 4 == 1) also in BF16, then each
// of `edge` (problems of `dir` already) as it is and in BF16.
inline std::vector<Problem> HopperDeviceProblems(Direction dir, const std::vector<Problem>& layers,
                                                 const std::vector<Problem>& edge,
                                                 const std::function<int64_t(size_t)>& batch) {
  std::vector<Problem> out;
  for (size_t i = 1; i < layers.size(); ++i) {
    Problem b = layers[i];
    b.n = batch(i);
    out.push_back(With(b, dir, DataType::kFp16, Layout::kNHWC));
    if (i % 4 == 1) out.push_back(With(b, dir, DataType::kBf16, Layout::kNHWC));
  }
  for (const Problem& p : edge) {
    out.push_back(p);
    out.push_back(With(p, dir, DataType::kBf16, Layout::kNHWC));
  }
  return out;
}

// Small problems that exercise edges: odd sizes, padding, stride > filter, dilation, groups,
// depthwise, 3D, channel counts below every tile.
inline std::vector<Problem> EdgeProblems() {
  std::vector<Problem> v;
  auto make = [&](int64_t n, int64_t c, int64_t k, int64_t h, int64_t w, int64_t fy, int64_t fx, int64_t pad,
                  int64_t stride, int64_t dil, int64_t groups) {
    Problem p;
    p.n = n, p.c = c, p.k = k;
    p.in = {1, h, w};
    p.fil = {1, fy, fx};
    p.pad = {0, pad, pad};
    p.stride = {1, stride, stride};
    p.dilation = {1, dil, dil};
    p.groups = groups;
    v.push_back(p);
  };
  make(1, 1, 1, 5, 5, 3, 3, 1, 1, 1, 1);       // single channel
  make(2, 3, 5, 7, 9, 3, 3, 1, 2, 1, 1);       // odd, stride 2
  make(2, 8, 12, 11, 10, 1, 1, 0, 2, 1, 1);    // 1x1 stride 2: stride classes without taps (Bwd)
  make(1, 6, 10, 9, 9, 3, 3, 2, 1, 2, 1);      // dilation 2
  make(2, 8, 8, 8, 8, 3, 3, 1, 1, 1, 2);       // groups 2
  make(2, 16, 16, 9, 9, 3, 3, 1, 1, 1, 16);    // depthwise
  make(1, 4, 6, 12, 12, 5, 5, 2, 3, 1, 1);     // stride 3, 5x5
  make(3, 20, 36, 6, 6, 2, 3, 0, 1, 1, 1);     // asymmetric filter, no padding
  make(2, 16, 24, 14, 14, 3, 3, 1, 2, 1, 1);   // ResNet-like downsampling
  Problem p3;                                  // 3D
  p3.spatial_dims = 3;
  p3.n = 2, p3.c = 4, p3.k = 6;
  p3.in = {5, 6, 7};
  p3.fil = {3, 3, 3};
  p3.pad = {1, 1, 1};
  p3.stride = {2, 1, 2};
  v.push_back(p3);
  return v;
}

}  // namespace tuna::testing
