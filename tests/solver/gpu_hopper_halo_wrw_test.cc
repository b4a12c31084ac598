// TunaHopperHaloWrw (1030): planning everywhere, NVRTC builds for
// sm_90a, and (tag gpu) the CPU reference on an sm_90 device.
#include <algorithm>
#include <cstdio>
#include <random>

#include "catch2/catch.hpp"
#include "tests/solver/gpu_solver_check.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/backend/cuda/cuda_backend.h"
#include "tuner_core/solver/conv/gpu_hopper_halo_wrw.h"

namespace tuna {
namespace {

using solver::PerfConfig;
using solver::Target;
using testing::AllValid;
using testing::NhwcWrw;

// Stride-1 shapes the halo walk must get right: tails of the pixel tiles in both directions,
// padding, dilation, groups, partial chunks, R from 1 to 4.
std::vector<Problem> HaloWrwEdgeProblems() {
  return {
      NhwcWrw(2, 64, 64, 7, 7, 3, 3, 1, 1, 1, 1, 1),       // 7x7: one 8x8 tile with a zero row and column
      NhwcWrw(3, 72, 200, 13, 11, 3, 3, 1, 1, 1, 1, 1),    // tails everywhere, C = 72 (a partial chunk), K = 200
      NhwcWrw(2, 64, 64, 19, 19, 3, 3, 2, 2, 1, 2, 1),     // dilation 2: halo rows 8 + 4
      NhwcWrw(2, 96, 64, 9, 9, 3, 3, 1, 1, 1, 1, 2),       // groups 2 (C/G 48: the next group's channels)
      NhwcWrw(2, 48, 64, 17, 17, 1, 7, 0, 3, 1, 1, 1),     // 1x7: R = 1, seven filter columns
      NhwcWrw(2, 48, 64, 17, 17, 4, 1, 2, 0, 1, 1, 1),     // 4x1, asymmetric padding
      NhwcWrw(1, 80, 192, 13, 13, 3, 3, 0, 0, 1, 1, 1),    // valid padding, C = 80
      NhwcWrw(2, 64, 64, 30, 40, 2, 2, 1, 0, 1, 1, 1),     // even filter, wide rows (TILE_W 32, 64)
      NhwcWrw(2, 64, 128, 15, 15, 1, 1, 0, 0, 2, 1, 1),    // 1x1 stride 2 on odd sizes: the strided view of x
      NhwcWrw(3, 96, 64, 28, 28, 1, 1, 0, 0, 2, 1, 1),     // ResNet's shortcut shape, C = 96 (a partial chunk)
      NhwcWrw(2, 64, 64, 15, 13, 3, 3, 1, 1, 2, 1, 1),     // 3x3 stride 2: two row classes (rows 0, 2 and row 1), odd sizes
      NhwcWrw(2, 64, 128, 16, 16, 3, 3, 0, 0, 2, 1, 1),    // stride 2 unpadded: class 0 starts on an even row
      NhwcWrw(2, 64, 64, 19, 19, 3, 3, 2, 2, 2, 2, 1),     // stride 2, dilation 2: one class, rows one box row apart
      NhwcWrw(2, 64, 64, 18, 18, 4, 2, 1, 0, 2, 1, 2),     // 4x2 stride 2, groups 2: two classes of two rows
  };
}

TEST_CASE("hopper halo wrw: applicability, defaults, pruning and launches", "[solver]") {
  absl::StatusOr<Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  solver::HopperHaloWrwSolver s;
  const std::vector<Problem> layers = testing::ResNet50Layers();
  int applicable = 0;
  for (const Problem& layer : layers) {
    const Problem h = testing::With(layer, Direction::kBackwardWeights, DataType::kFp16, Layout::kNHWC);
    INFO(h.Canonical());
    const bool pointwise = h.fil[1] == 1 && h.fil[2] == 1 && h.pad[1] == 0 && h.pad[2] == 0;
    const bool expect = (h.stride[1] <= 2 || pointwise) && h.fil[1] <= 4 && h.c % 8 == 0;
    CHECK(s.IsApplicable(*sm90, h).ok() == expect);
    if (!expect) continue;
    ++applicable;
    CHECK(s.IsValid(*sm90, h, s.DefaultConfig(*sm90, h)).ok());
    CHECK(AllValid(s, *sm90, h).size() >= 4);
  }
  CHECK(applicable >= 20);  // every layer but the 7x7 stem
  for (const Problem& p : HaloWrwEdgeProblems()) {
    INFO(p.Canonical());
    REQUIRE(s.IsApplicable(*sm90, p).ok());
    CHECK(s.IsValid(*sm90, p, s.DefaultConfig(*sm90, p)).ok());
  }
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 64, 64, 15, 15, 3, 3, 1, 1, 3, 1, 1)).ok());  // stride 3
  CHECK(s.IsApplicable(*sm90, NhwcWrw(2, 64, 64, 15, 15, 1, 1, 1, 1, 2, 1, 1)).ok());        // 1x1 s2 padded: traversal
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 64, 64, 15, 15, 1, 1, 1, 1, 3, 1, 1)).ok());  // 1x1 s3 padded
  CHECK(s.IsApplicable(*sm90, NhwcWrw(2, 64, 64, 15, 15, 1, 1, 0, 0, 3, 1, 1)).ok());        // 1x1 s3: a view
  {  // 1x1 stride 2, 14x14 -> 7x7: x through the (7, 7) view whose pixels step 2 columns and 2 rows
    const Problem sc = NhwcWrw(32, 1024, 2048, 14, 14, 1, 1, 0, 0, 2, 1, 1);
    absl::StatusOr<solver::Solution> ss = s.GetSolution(*sm90, sc, s.DefaultConfig(*sm90, sc));
    REQUIRE(ss.ok());
    const backend::TensorMapSpec& xm = ss->launches[0].args[0].tensor_map;
    CHECK(xm.dims[1] == 7);
    CHECK(xm.dims[2] == 7);
    CHECK(xm.strides_bytes[0] == 2 * 1024 * 2);
    CHECK(xm.strides_bytes[1] == 2 * 14 * 1024 * 2);
    CHECK(xm.strides_bytes[2] == 14 * 14 * 1024 * 2);
  }
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 64, 64, 15, 15, 5, 5, 2, 2, 1, 1, 1)).ok());  // R = 5
  CHECK_FALSE(s.IsApplicable(*sm90, NhwcWrw(2, 32, 40, 8, 8, 3, 3, 1, 1, 1, 1, 2)).ok());    // K/G % 8 != 0
  // The 7x7 3x3 layer: 8x8 tiles, a 10-row halo, N = 3 x 64 per (s, chunk) tile.
  const Problem late = NhwcWrw(32, 512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 1);
  absl::StatusOr<solver::Solution> sol = s.GetSolution(*sm90, late, PerfConfig{{128, 2, 6, 1, 8}});
  REQUIRE(sol.ok());
  const std::vector<std::string>& o = sol->kernels[0].options;
  for (const char* want : {"-DTB_N=192", "-DHALO=1", "-DTILE_W=8", "-DHALO_ROWS=10"}) {
    CHECK(std::find(o.begin(), o.end(), want) != o.end());
  }
  const solver::Launch& l = sol->launches[0];
  CHECK(l.grid.x == 96);  // 4 M-tiles x 3 filter columns x 8 chunks
  CHECK(l.args[0].tensor_map.box[1] == 8);
  CHECK(l.args[0].tensor_map.box[2] == 10);
  CHECK(l.args[1].tensor_map.box[2] == 8);
  CHECK(l.shared_bytes == solver::HopperHaloWrwSolver::SharedBytes(128, 8, 10, 1, 6));
  {  // 3x3 stride 2 at 14x14 -> 7x7: rows 0 and 2 in a 9-row box (N 128), row 1 in its own (N 64)
    const Problem s2 = NhwcWrw(32, 512, 512, 14, 14, 3, 3, 1, 1, 2, 1, 1);
    absl::StatusOr<solver::Solution> ss = s.GetSolution(*sm90, s2, PerfConfig{{128, 2, 5, 1, 8}});
    REQUIRE(ss.ok());
    const std::vector<std::string>& so = ss->kernels[0].options;
    for (const char* want : {"-DTB_N=192", "-DHALO_N0=128", "-DHALO_N1=64", "-DHALO_ROWS=9"}) {
      CHECK(std::find(so.begin(), so.end(), want) != so.end());
    }
    const backend::TensorMapSpec& xm = ss->launches[0].args[0].tensor_map;
    CHECK(xm.element_strides == std::array<uint32_t, 5>{1, 2, 2, 1, 1});
    CHECK(xm.box[1] == 16);  // 8 columns, every second one
    CHECK(xm.box[2] == 18);  // 9 rows, every second one
    CHECK(xm.dims[1] == 14);
    CHECK(ss->launches[0].args[9].i == 2);  // stride_h
    CHECK(ss->launches[0].shared_bytes == solver::HopperHaloWrwSolver::SharedBytes(128, 8, 9, 2, 5));
  }
  CHECK_FALSE(s.IsValid(*sm90, late, PerfConfig{{256, 1, 3, 1, 8}}).ok());  // 4 m64 slabs x 96 accumulators
}

TEST_CASE("hopper halo wrw: every valid FP16 config of two problems builds for sm_90a", "[solver][nvrtc]") {
  std::unique_ptr<backend::Backend> be = testing::NvrtcBackendOrSkip();
  if (be == nullptr) return;
  absl::StatusOr<Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  solver::HopperHaloWrwSolver s;
  testing::Sm90aBuilds builds(*be, s, *target);
  for (const Problem& p : {NhwcWrw(32, 256, 256, 14, 14, 3, 3, 1, 1, 1, 1, 1),
                           NhwcWrw(2, 64, 64, 19, 19, 3, 3, 2, 2, 1, 2, 1, DataType::kBf16),
                           NhwcWrw(32, 256, 256, 28, 28, 3, 3, 1, 1, 2, 1, 1)}) {  // two row classes
    for (const PerfConfig& c : AllValid(s, *target, p)) builds.Build(p, c);
  }
  std::printf("%zu distinct sm_90a builds\n", builds.distinct());
  CHECK(builds.distinct() >= 8);
}

TEST_CASE("hopper halo wrw matches the CPU reference on an sm_90 device", "[gpu]") {
  std::optional<testing::CudaDeviceForTest> cuda = testing::OpenCudaDeviceOrSkip(90, 90);
  if (!cuda) return;
  const Target target = cuda->target;
  solver::HopperHaloWrwSolver s;
  std::vector<Problem> layers;
  for (const Problem& layer : testing::ResNet50Layers()) {
    if (layer.fil[1] == 3 || (layer.stride[1] == 2 && layer.fil[1] == 1)) layers.push_back(layer);
  }
  const std::vector<Problem> problems = testing::HopperDeviceProblems(
      Direction::kBackwardWeights, layers, HaloWrwEdgeProblems(), [](size_t i) { return i % 2 == 0 ? 1 : 2; });
  std::mt19937_64 rng(1030);
  testing::ConvChecker checker(*cuda->backend, *cuda->device, target);
  testing::DeviceTally tally;
  testing::CheckOnDevice(checker, s, target, problems, rng, 3, tally);  // axis 3: SPLIT_K
  std::printf("%d runs, %d failures\n", tally.runs, tally.failures);
  CHECK(tally.runs >= 40);
  CHECK(tally.failures == 0);
}

}  // namespace
}  // namespace tuna
