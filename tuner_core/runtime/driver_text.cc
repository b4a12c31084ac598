#include "tuner_core/runtime/driver_text.h"

#include <sstream>

#include "fmt/format.h"
#include "tuner_core/problem/named_values.h"
#include "tuner_core/reference/element.h"

namespace tuna::runtime {
namespace {

// std::ostream's default formatting of a double (what MIOpenDriver's `<<` prints).
std::string Stream(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

// What MIOpenDriver's verify and timing lines call each direction.
constexpr NamedValue<Direction> kVerifySubjects[] = {{Direction::kForward, "Forward Convolution"},
                                                     {Direction::kBackwardData, "Backward Convolution Data"},
                                                     {Direction::kBackwardWeights, "Backward Convolution Weights"}};
constexpr NamedValue<Direction> kTimeSubjects[] = {
    {Direction::kForward, "Forward"}, {Direction::kBackwardData, "Backward Data"},
    {Direction::kBackwardWeights, "Backward Weights"}};

// The MIOpenDriver tensors: x (N, C, [D,] H, W), w (K, C/G, ...), y (N, K, ...), their lengths
// and element sizes; the row's counts in MIOpen's size_t arithmetic.
struct Stats {
  int64_t n, c, k, wc;  // wc: the filter's C/G
  Dhw in, fil, out;
  int64_t x_size, w_size, y_size;
};

Stats MakeStats(const Problem& p) {
  Stats s{p.n, p.c, p.k, p.c / p.groups, p.in, p.fil, p.Out(), 0, 0, 0};
  s.x_size = static_cast<int64_t>(DataTypeSize(p.data_type));
  s.w_size = s.x_size;
  s.y_size = static_cast<int64_t>(
      reference::ElementSize(reference::OutputType(p, Direction::kForward)));
  return s;
}

}  // namespace

double MiopenAverageTime(const std::vector<double>& run_ms) {
  if (run_ms.empty()) return 0;
  if (run_ms.size() == 1) return run_ms[0];
  double rest = 0;
  for (size_t i = 1; i < run_ms.size(); ++i) rest += run_ms[i];
  return rest / static_cast<double>(run_ms.size() - 1);
}

std::string MiopenTimeLines(const Problem& p, double t) {
  const Stats s = MakeStats(p);
  const bool is3d = p.spatial_dims == 3;
  const int64_t depth = is3d ? s.in[0] : 1, out_depth = is3d ? s.out[0] : 1;
  const int64_t fil_depth = is3d ? s.fil[0] : 1;
  const uint64_t flop = uint64_t{2} * s.n * s.c * fil_depth * s.fil[1] * s.fil[2] * s.k *
                        out_depth * s.out[1] * s.out[2] / p.groups;
  const uint64_t y_bytes = s.n * s.k * out_depth * s.out[1] * s.out[2] * s.y_size;
  const uint64_t w_bytes = s.k * s.wc * fil_depth * s.fil[1] * s.fil[2] * s.w_size;
  uint64_t read = 0, written = 0;
  std::string name, header, values;
  const int64_t stride0 = p.stride[is3d ? 0 : 1];
  const std::string shape =
      is3d ? fmt::format("{}x{}x{}u{}", s.fil[0], s.fil[1], s.fil[2], stride0)
           : fmt::format("{}x{}u{}", s.fil[1], s.fil[2], stride0);
  switch (p.direction) {
    case Direction::kForward:
      name = "fwd-conv";
      read = s.n * s.c * depth * s.in[1] * s.in[2] * s.x_size + w_bytes;
      written = y_bytes;
      header = is3d ? "stats: name  , n, c, do, ho, wo, z, y, x, k, "
                    : "stats: name, n, c, ho, wo, x, y, k, ";
      values = is3d ? fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {},  ", s.n, s.c, s.out[0],
                                  s.out[1], s.out[2], s.fil[0], s.fil[1], s.fil[2], s.k)
                    : fmt::format("{}, {}, {}, {}, {}, {}, {},  ", s.n, s.c, s.out[1], s.out[2],
                                  s.fil[1], s.fil[2], s.k);
      break;
    case Direction::kBackwardData:
      name = "bwdd-conv";
      read = s.n * s.c * s.k * s.x_size + w_bytes;
      written = y_bytes;
      header = is3d ? "stats: name, n, c, do, ho, wo, z, x, y, k, "
                    : "stats: name, n, c, ho, wo, x, y, k, ";
      values = is3d ? fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {}  ", s.n, s.c, s.fil[0],
                                  s.fil[1], s.fil[2], s.k, s.out[0], s.out[1], s.out[2])
                    : fmt::format("{}, {}, {}, {}, {}, {}, {},  ", s.n, s.c, s.fil[1], s.fil[2],
                                  s.k, s.out[1], s.out[2]);
      break;
    case Direction::kBackwardWeights:
      name = "bwdw-conv";
      header = is3d ? "stats: name, n, c, do, ho, wo, z, x, y, k, "
                    : "stats: name, n, c, ho, wo, x, y, k, ";
      values = is3d ? fmt::format("{}, {}, {}, {}, {}, {}, {}, {}, {},  ", s.n, s.c, s.out[0],
                                  s.out[1], s.out[2], s.fil[0], s.fil[1], s.fil[2], s.k)
                    : fmt::format("{}, {}, {}, {}, {}, {}, {},  ", s.n, s.c, s.out[1], s.out[2],
                                  s.fil[1], s.fil[2], s.k);
      break;
  }
  std::string out = fmt::format("GPU Kernel Time {} Conv. Elapsed: {:f} ms (average)\n",
                                NameIn(kTimeSubjects, p.direction, ""), t);
  out += header + "flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, timeMs\n";
  out += fmt::format("stats: {}{}, {}{}, {}, {}, {:.0f}, {:.0f}, {:f}\n", name, shape, values,
                     flop, read, written, static_cast<double>(flop) / t / 1e6,
                     static_cast<double>(read + written) / t / 1e6, t);
  return out;
}

std::string MiopenVerifyLine(const Problem& p, bool ok, double error, double tolerance,
                             int64_t mismatches) {
  const std::string_view what = NameIn(kVerifySubjects, p.direction, "Convolution");
  if (ok) {
    return fmt::format("{} Verifies OK on CPU reference ({} < {})\n", what, Stream(error),
                       Stream(tolerance));
  }
  if (!(error <= tolerance)) {
    return fmt::format("{} FAILED: {} > {}\n", what, Stream(error), Stream(tolerance));
  }
  return fmt::format("{} FAILED: {} elements outside tolerance (rms {} < {})\n", what,
                     mismatches, Stream(error), Stream(tolerance));
}

}  // namespace tuna::runtime
