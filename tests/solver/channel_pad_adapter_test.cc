// ChannelPadAdapter (conv/channel_pad_adapter.h) and tuna_pad_rows: the cpu twin pads and unpads
// rows of 2- and 4-byte elements exactly; the adapter runs channels-last problems whose C/G or K/G
// is off 16-byte rows (groups, FP32, FP16, BF16, 3-D) in every direction through a TunaCpuGemmConv
// that takes whole rows only (the inner solver), and the results match the reference; applicability;
// the TunaHopperTma{Fwd,Bwd,Wrw}Pad candidates plan R(2+1)D's 230- and 45-channel layers on sm_90.
#include <cstring>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tuner_core/problem/validate.h"
#include "tuner_core/solver/conv/channel_pad_adapter.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"
#include "tuner_core/solver/conv/solver_sets.h"

namespace tuna {
namespace {

using solver::BufferRole;
using solver::ChannelPadAdapter;
using solver::KernelArg;
using solver::PerfConfig;
using solver::Solution;

constexpr Direction kDirs[] = {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};

// TunaCpuGemmConv taking channels-last problems whose C/G and K/G fill 16-byte rows only, as the
// TMA solvers do.
class AlignedCpuGemm : public solver::CpuGemmConvSolver {
 public:
  absl::Status IsApplicable(const solver::Target& target, const Problem& p) const override {
    const int64_t unit = 16 / static_cast<int64_t>(DataTypeSize(p.data_type));
    const bool cl = p.in_layout == Layout::kNHWC || p.in_layout == Layout::kNDHWC;
    if (!cl || (p.c / p.groups) % unit != 0 || (p.k / p.groups) % unit != 0) {
      return solver::NotApplicable(Name(), "channels-last, whole 16-byte channel rows only (test inner)");
    }
    return CpuGemmConvSolver::IsApplicable(target, p);
  }
};

ChannelPadAdapter GemmAdapter() { return ChannelPadAdapter("TestCpuGemmPad", std::make_unique<AlignedCpuGemm>()); }

Problem Nhwc(DataType type, int64_t c, int64_t k, int64_t groups, int64_t fil, int64_t stride = 1) {
  Problem p;
  p.n = 2, p.c = c, p.k = k, p.groups = groups;
  p.in = {1, 7, 6}, p.fil = {1, fil, fil}, p.pad = {0, fil / 2, fil / 2}, p.stride = {1, stride, stride};
  p.in_layout = p.fil_layout = p.out_layout = Layout::kNHWC;
  p.data_type = type;
  REQUIRE(ValidateProblem(p).ok());
  return p;
}

TEST_CASE("layout kernel on the cpu backend: rows padded with zeros and cut back exactly") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  backend::Backend& be = h.backend();
  backend::Device& dev = h.device();
  for (int bytes : {2, 4}) {
    for (auto [cols, padded] : {std::pair{5, 8}, std::pair{8, 5}, std::pair{230, 232}}) {
      INFO(bytes << "-byte elements, rows of " << cols << " to " << padded);
      const int64_t rows = 37;
      std::vector<unsigned char> src(static_cast<size_t>(rows * cols * bytes));
      for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 7 + i / 251 + 1);
      solver::Solution sol;
      sol.kernels.push_back({"cpu_conv/layout_transpose.cc", {"tuna_pad_rows"}, {"-DTUNA_ELEM_BYTES=" + std::to_string(bytes)}});
      solver::Launch l;
      l.entry = "tuna_pad_rows";
      l.grid = {3, 1, 1};  // a grid-stride loop over more elements than 3 x 256 threads
      l.block = {256, 1, 1};
      l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kY), KernelArg::I64(rows),
                KernelArg::I32(cols), KernelArg::I32(padded)};
      sol.launches = {l};
      const size_t out = static_cast<size_t>(rows * padded * bytes);
      const std::vector<unsigned char> got = testing::RunOnCpu(be, dev, sol, src, out + 64);
      int64_t wrong = 0;
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < padded; ++c) {
          const unsigned char* at = &got[static_cast<size_t>((r * padded + c) * bytes)];
          if (c < cols) {
            wrong += std::memcmp(at, &src[static_cast<size_t>((r * cols + c) * bytes)], bytes) != 0;
          } else {
            for (int b = 0; b < bytes; ++b) wrong += at[b] != 0;
          }
        }
      }
      for (size_t i = out; i < out + 64; ++i) wrong += got[i] != 0xab;  // nothing past the rows
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("channel-pad adapter: C/G or K/G off 16-byte rows, every direction, matches the reference") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const ChannelPadAdapter s = GemmAdapter();
  Problem cube = Nhwc(DataType::kBf16, 10, 16, 1, 3);  // 3-D, C = 10
  cube.spatial_dims = 3, cube.in = {3, 5, 6}, cube.fil = {3, 3, 3}, cube.pad = {1, 1, 1};
  cube.in_layout = cube.fil_layout = cube.out_layout = Layout::kNDHWC;
  REQUIRE(ValidateProblem(cube).ok());
  const std::vector<Problem> problems = {
      Nhwc(DataType::kFp16, 16, 20, 1, 3),     // K = 20: dy, w's rows and y padded to 24
      Nhwc(DataType::kFp16, 12, 16, 2, 3, 2),  // C/G = 6, groups 2, stride 2
      Nhwc(DataType::kFp32, 8, 6, 1, 1),       // FP32: K = 6 to 8
      Nhwc(DataType::kFp16, 32, 40, 4, 3),     // K/G = 10, groups 4
      cube,
  };
  int runs = 0;
  for (const Problem& base : problems) {
    for (Direction dir : kDirs) {
      Problem p = base;
      p.direction = dir;
      INFO(p.Canonical() << " dir " << DirectionName(dir));
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      const PerfConfig config = s.DefaultConfig(h.target(), p);
      absl::StatusOr<Solution> sol = s.GetSolution(h.target(), p, config);
      REQUIRE(sol.ok());
      // w and one of x and y move, each by one pad launch; a written tensor that grew comes back last.
      int pads = 0;
      for (const solver::Launch& l : sol->launches) pads += l.entry == "tuna_pad_rows";
      CHECK(pads == 2);
      const int64_t unit = 16 / static_cast<int64_t>(DataTypeSize(p.data_type));
      const bool written_grows = dir == Direction::kBackwardWeights                ? true
                                 : dir == Direction::kForward                      ? (p.k / p.groups) % unit != 0
                                                                                   : (p.c / p.groups) % unit != 0;
      CHECK((sol->launches.back().entry == "tuna_pad_rows") == written_grows);
      testing::CheckMatchesReference(h, s, p, config);
      ++runs;
    }
  }
  CHECK(runs == 15);
}

TEST_CASE("channel-pad adapter: applicability") {
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu");
  REQUIRE(cpu.ok());
  const ChannelPadAdapter s = GemmAdapter();
  auto why = [&](const Problem& p) { return std::string(s.IsApplicable(*cpu, p).message()); };
  CHECK_THAT(why(Nhwc(DataType::kFp16, 16, 24, 1, 3)), Catch::Contains("whole 16-byte rows already"));
  CHECK_THAT(why(Nhwc(DataType::kFp16, 12, 20, 1, 3)), Catch::Contains("not both"));
  Problem nchw = Nhwc(DataType::kFp16, 16, 20, 1, 3);
  nchw.in_layout = nchw.fil_layout = nchw.out_layout = Layout::kNCHW;
  CHECK_THAT(why(nchw), Catch::Contains("channels-last"));
  CHECK(s.IsApplicable(*cpu, Nhwc(DataType::kFp32, 16, 20, 1, 3)).message().find("already") != std::string::npos);
}

TEST_CASE("channel-pad candidates: TunaHopperTma{Fwd,Bwd,Wrw}Pad on R(2+1)D's odd channel counts") {
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  // The 1x3x3 layer 64 -> 230 (backward data and weights: K/G = 230) and the 3x1x1 layer 230 -> 128
  // (forward: C/G = 230), as 2-D problems of N*D images (FP16 NHWC).
  Problem spatial = Nhwc(DataType::kFp16, 64, 230, 1, 3);
  spatial.n = 8 * 16, spatial.in = {1, 56, 56};
  Problem temporal = Nhwc(DataType::kFp16, 230, 128, 1, 1);
  temporal.n = 8, temporal.in = {1, 16, 28 * 28}, temporal.fil = {1, 3, 1}, temporal.pad = {0, 1, 0};
  REQUIRE(ValidateProblem(temporal).ok());
  int found = 0;
  const solver::SolverList all = solver::GpuTunableSolvers();  // 1052-1054
  for (const auto& [id, s] : all) {
    if (dynamic_cast<const ChannelPadAdapter*>(s.get()) == nullptr) continue;
    INFO(id << " " << s->Name());
    const Direction dir = s->Directions().front();
    Problem p = dir == Direction::kForward ? temporal : spatial;
    p.direction = dir;
    REQUIRE(s->IsApplicable(*sm90, p).ok());
    absl::StatusOr<Solution> sol = s->GetSolution(*sm90, p, s->DefaultConfig(*sm90, p));
    REQUIRE(sol.ok());
    CHECK(sol->kernels.back().source == "conv/layout_transpose.cu");
    CHECK(sol->launches.front().entry == "tuna_pad_rows");
    ++found;
  }
  CHECK(found == 3);
}

}  // namespace
}  // namespace tuna
