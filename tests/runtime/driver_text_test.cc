// MIOpenDriver's result lines (tuner_core/runtime/driver_text.h) against lines worked out by hand
// from MIOpen's driver/conv_driver.hpp printf formats.
#include "tuner_core/runtime/driver_text.h"

#include "catch2/catch.hpp"
#include "tuner_core/problem/driver_line.h"

namespace tuna::runtime {
namespace {

Problem One(const std::string& line) {
  auto p = ParseDriverLine(line);
  REQUIRE(p.ok());
  REQUIRE(p->size() == 1);
  return p->front();
}

TEST_CASE("MIOpenDriver's average leaves out the first run") {
  CHECK(MiopenAverageTime({}) == 0);
  CHECK(MiopenAverageTime({3.0}) == 3.0);
  CHECK(MiopenAverageTime({9.0, 1.0, 2.0}) == 1.5);
}

TEST_CASE("forward, backward-data and backward-weights time and stats lines, 2D") {
  const std::string shape = "-n 32 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1";
  CHECK(MiopenTimeLines(One("conv " + shape + " -F 1"), 0.5) ==
        "GPU Kernel Time Forward Conv. Elapsed: 0.500000 ms (average)\n"
        "stats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, "
        "timeMs\n"
        "stats: fwd-conv1x1u1, 32, 64, 56, 56, 1, 1, 256,  3288334336, 25755648, 102760448, 6577, "
        "257, 0.500000\n");
  // Backward data: MIOpen prints x, y, k, ho, wo under the "ho, wo, x, y, k" header and counts
  // n*c*k input bytes.
  CHECK(MiopenTimeLines(One("conv " + shape + " -F 2"), 0.5) ==
        "GPU Kernel Time Backward Data Conv. Elapsed: 0.500000 ms (average)\n"
        "stats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, "
        "timeMs\n"
        "stats: bwdd-conv1x1u1, 32, 64, 1, 1, 256, 56, 56,  3288334336, 2162688, 102760448, 6577, "
        "210, 0.500000\n");
  CHECK(MiopenTimeLines(One("conv " + shape + " -F 4"), 0.5) ==
        "GPU Kernel Time Backward Weights Conv. Elapsed: 0.500000 ms (average)\n"
        "stats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, GB/s, "
        "timeMs\n"
        "stats: bwdw-conv1x1u1, 32, 64, 56, 56, 1, 1, 256,  3288334336, 0, 0, 6577, 0, "
        "0.500000\n");
}

TEST_CASE("3D backward-data stats keep MIOpen's missing comma") {
  const Problem p = One(
      "conv -n 2 -c 4 --in_d 8 -H 8 -W 8 -k 8 --fil_d 3 -y 3 -x 3 --spatial_dim 3 -F 2");
  CHECK(MiopenTimeLines(p, 0.25) ==
        "GPU Kernel Time Backward Data Conv. Elapsed: 0.250000 ms (average)\n"
        "stats: name, n, c, do, ho, wo, z, x, y, k, flopCnt, bytesRead, bytesWritten, GFLOPs, "
        "GB/s, timeMs\n"
        "stats: bwdd-conv3x3x3u1, 2, 4, 3, 3, 3, 8, 6, 6, 6  746496, 3712, 13824, 3, 0, "
        "0.250000\n");
}

TEST_CASE("verification sentences") {
  const std::string shape = "-n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3";
  CHECK(MiopenVerifyLine(One("conv " + shape + " -F 1"), true, 1.25e-07, 1.5e-06, 0) ==
        "Forward Convolution Verifies OK on CPU reference (1.25e-07 < 1.5e-06)\n");
  CHECK(MiopenVerifyLine(One("conv " + shape + " -F 2"), true, 0.001, 0.0082, 0) ==
        "Backward Convolution Data Verifies OK on CPU reference (0.001 < 0.0082)\n");
  CHECK(MiopenVerifyLine(One("conv " + shape + " -F 4"), false, 0.5, 1.5e-06, 40) ==
        "Backward Convolution Weights FAILED: 0.5 > 1.5e-06\n");
  CHECK(MiopenVerifyLine(One("conv " + shape + " -F 1"), false, 1e-07, 1.5e-06, 3) ==
        "Forward Convolution FAILED: 3 elements outside tolerance (rms 1e-07 < 1.5e-06)\n");
}

}  // namespace
}  // namespace tuna::runtime
