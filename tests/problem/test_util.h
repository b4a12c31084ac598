// Helpers shared by the tests/problem tests: data paths and a seeded random problem source.
#pragma once

#include <cstdlib>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

#include "tests/fixtures/read_file.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/problem/validate.h"

namespace tuna {
// Catch prints problems by their canonical line (found through ADL).
inline std::ostream& operator<<(std::ostream& os, const Problem& p) {
  return os << ToDriverLine(p) << " (dir " << DirectionName(p.direction) << ")";
}
}  // namespace tuna

namespace tuna::testing {

// `rel` under $TUNA_SHARED_DATA when set, else under the checked-in copy (Bazel runfiles,
// cwd = workspace root).
inline std::string DataPath(const std::string& rel) {
  if (const char* env = std::getenv("TUNA_SHARED_DATA"); env != nullptr && *env != '\0') {
    return std::string(env) + "/" + rel;
  }
  return "tests/problem/testdata/" + rel;
}

// A random problem that passes ValidateProblem: 2D and 3D, groups, all layouts, directions,
// types, both modes. Sizes stay small so the tensor caps are never the reason to redraw.
inline Problem RandomValidProblem(std::mt19937_64& rng, bool allow_trans = true) {
  auto pick = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  while (true) {
    Problem p;
    p.spatial_dims = pick(0, 3) == 0 ? 3 : 2;
    const bool is3d = p.spatial_dims == 3;
    p.groups = pick(0, 2) == 0 ? pick(2, 8) : 1;
    p.n = pick(1, 64);
    p.c = p.groups * pick(1, 64);
    p.k = p.groups * pick(1, 64);
    for (int i = is3d ? 0 : 1; i < 3; ++i) {
      p.in[i] = pick(1, is3d ? 40 : 300);
      p.fil[i] = pick(1, 7);
      p.pad[i] = pick(0, 3);
      p.stride[i] = pick(1, 4);
      p.dilation[i] = pick(0, 3) == 0 ? pick(2, 3) : 1;
    }
    p.mode = allow_trans && pick(0, 7) == 0 ? ConvMode::kTrans : ConvMode::kConv;
    if (p.mode == ConvMode::kTrans) {
      for (int i = is3d ? 0 : 1; i < 3; ++i)
        p.trans_output_pad[i] = pick(0, std::max(p.stride[i], p.dilation[i]) - 1);
    }
    p.direction = static_cast<Direction>(pick(0, 2));
    p.data_type = static_cast<DataType>(pick(0, 3));
    const Layout cf = is3d ? Layout::kNCDHW : Layout::kNCHW;
    const Layout cl = is3d ? Layout::kNDHWC : Layout::kNHWC;
    switch (pick(0, 3)) {
      case 0:
      case 1: p.in_layout = p.fil_layout = p.out_layout = cf; break;
      case 2: p.in_layout = p.fil_layout = p.out_layout = cl; break;
      default:
        p.in_layout = pick(0, 1) ? cf : cl;
        p.fil_layout = pick(0, 1) ? cf : cl;
        p.out_layout = pick(0, 1) ? cf : cl;
    }
    if (ValidateProblem(p).ok()) return p;
  }
}

}  // namespace tuna::testing
