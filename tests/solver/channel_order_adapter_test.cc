// ChannelsLastAdapter and ChannelsFirstAdapter (conv/channel_order_adapter.h) and their layout
// kernels: the cpu backend's twin of kernels/conv/layout_transpose.cu moves 1-, 2- and 4-byte
// elements exactly, element by element and packed in 32-bit words, and zeroes a region and nothing
// else; the channels-last adapter runs NCHW, NCDHW and mixed-layout problems of every direction
// through TunaCpuGemmConv restricted to channels-last tensors (here playing the inner one), the
// channels-first adapter NHWC, NDHWC and mixed ones through it restricted to channels-first (split-K
// configs use the inner workspace), and the results match the reference; a solution moves exactly
// the tensors out of the inner's order, remaps every buffer and tensor-map argument and zeroes what
// the inner solution zeroes; applicability, planning, the registered adapters and the candidates.
#include <cstring>
#include <numeric>
#include <tuple>

#include "catch2/catch.hpp"
#include "tests/solver/cpu_solver_harness.h"
#include "tests/solver/gpu_test_problems.h"
#include "tuner_core/solver/conv/channel_order_adapter.h"
#include "tuner_core/solver/conv/cpu_gemm_solver.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/flattening_solver.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using solver::BufferRole;
using solver::ChannelsLastAdapter;
using solver::KernelArg;
using solver::PerfConfig;
using solver::Solution;

constexpr Direction kDirs[] = {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};

bool AnyChannelsLast(const Problem& p) {
  return IsChannelsLast(p.in_layout) || IsChannelsLast(p.fil_layout) || IsChannelsLast(p.out_layout);
}

// TunaCpuGemmConv restricted to channels-last tensors, as the adapters' GPU inner solvers are
// (the adapter steps aside where its inner solver takes the problem as it is).
class ChannelsLastCpuGemm : public solver::CpuGemmConvSolver {
 public:
  absl::Status IsApplicable(const solver::Target& target, const Problem& p) const override {
    if (!solver::gpu::AllChannelsLast(p)) return solver::NotApplicable(Name(), "channels-last tensors only (test inner)");
    return CpuGemmConvSolver::IsApplicable(target, p);
  }
};

// The same restricted to channels-first tensors (the SIMT and Winograd solvers' NCHW).
class ChannelsFirstCpuGemm : public solver::CpuGemmConvSolver {
 public:
  absl::Status IsApplicable(const solver::Target& target, const Problem& p) const override {
    if (AnyChannelsLast(p)) return solver::NotApplicable(Name(), "channels-first tensors only (test inner)");
    return CpuGemmConvSolver::IsApplicable(target, p);
  }
};

ChannelsLastAdapter GemmAdapter() {
  return ChannelsLastAdapter("TestCpuGemmNchw", std::make_unique<ChannelsLastCpuGemm>());
}

// Runs one transpose entry of the cpu twin on `batches` random rows x cols matrices of `bytes`-byte
// elements (grid.y 2: blocks loop over batches), written `offset` bytes into y, and checks every
// element and that nothing before the offset was touched.
void CheckTranspose(backend::Backend& be, backend::Device& device, int bytes, bool packed, int64_t rows, int64_t cols) {
  INFO(bytes << "-byte elements, " << (packed ? "packed" : "element") << " entry, " << rows << " x " << cols);
  const int64_t batches = 3, offset = 256, tile = packed ? 32 * 4 / bytes : 32;
  const size_t n = static_cast<size_t>(batches * rows * cols) * bytes;
  std::vector<unsigned char> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<unsigned char>(i * 7 + i / 251);
  solver::Solution sol;
  sol.kernels.push_back({"cpu_conv/layout_transpose.cc",
                         {"tuna_batched_transpose", "tuna_batched_transpose_packed", "tuna_fill_zero"},
                         {"-DTUNA_ELEM_BYTES=" + std::to_string(bytes)}});
  solver::Launch t;
  t.entry = packed ? "tuna_batched_transpose_packed" : "tuna_batched_transpose";
  const int64_t tiles_cols = (cols + tile - 1) / tile;
  t.grid = {static_cast<uint32_t>((rows + tile - 1) / tile * tiles_cols), 2, 1};
  t.block = {32, 8, 1};
  t.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kY, offset), KernelArg::I64(batches),
            KernelArg::I32(rows), KernelArg::I32(cols), KernelArg::I32(tiles_cols)};
  sol.launches = {t};
  const std::vector<unsigned char> got = testing::RunOnCpu(be, device, sol, src, n + offset);
  testing::CheckTransposed(src, got, batches, rows, cols, static_cast<size_t>(bytes), offset);
}

TEST_CASE("layout kernels on the cpu backend: batched transposes are exact, the fill zeroes its region only") {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  backend::Backend& be = h.backend();
  backend::Device& dev = h.device();
  for (int bytes : {1, 2, 4}) {
    CheckTranspose(be, dev, bytes, false, 33, 70);  // tails in both directions
    CheckTranspose(be, dev, bytes, false, 70, 33);
    CheckTranspose(be, dev, bytes, true, 36, 264);  // multiples of 4: partial tiles of 32 / 64 / 128
    CheckTranspose(be, dev, bytes, true, 264, 4);
  }
  solver::Solution sol;
  sol.kernels.push_back({"cpu_conv/layout_transpose.cc",
                         {"tuna_batched_transpose", "tuna_batched_transpose_packed", "tuna_fill_zero"},
                         {"-DTUNA_ELEM_BYTES=2"}});
  solver::Launch fill;
  fill.entry = "tuna_fill_zero";
  fill.grid = {2, 1, 1};
  fill.block = {256, 1, 1};
  fill.args = {KernelArg::Buffer(BufferRole::kW, 12), KernelArg::I64(37)};
  sol.launches = {fill};
  absl::StatusOr<std::vector<backend::CodeObject>> code = solver::CompileSolution(be, sol, "cpu-x86_64");
  REQUIRE(code.ok());
  absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = solver::Invoker::Create(dev, sol, *code);
  REQUIRE(inv.ok());
  absl::StatusOr<backend::DeviceBuffer> w = dev.Alloc(256);
  REQUIRE(w.ok());
  REQUIRE(dev.Memset(*w, 0xcd, 256).ok());
  REQUIRE((*inv)->Run({nullptr, &*w, nullptr, nullptr}).ok());
  REQUIRE(dev.Synchronize().ok());
  std::vector<unsigned char> filled(256);
  REQUIRE(dev.CopyToHost(filled.data(), *w, 256).ok());
  for (int i = 0; i < 256; ++i) {
    INFO("filled byte " << i);
    CHECK(filled[i] == (i >= 12 && i < 12 + 37 * 4 ? 0 : 0xcd));
  }
}

// Runs `s` (whose inner solver takes channels-last tensors where `inner_last`, else
// channels-first) on every small problem in every direction, at the default and a split-K config:
// it refuses the problems already in the inner's order, moves exactly the others' tensors that
// are out of it (with more than one channel and pixel) and matches the reference.
void CheckAdapterRuns(const solver::ChannelOrderAdapter& s, bool inner_last) {
  testing::CpuSolverHarness h;
  if (h.Skipped()) return;
  const auto out_of_order = [&](Layout l) { return IsChannelsLast(l) != inner_last; };
  int runs = 0, split = 0, packed = 0;
  for (const testing::NamedProblem& np : testing::SmallProblems()) {
    for (Direction dir : kDirs) {
      Problem p = np.problem;
      p.direction = dir;
      INFO(np.name << " dir " << DirectionName(dir) << ": " << p.Canonical());
      if (!out_of_order(p.in_layout) && !out_of_order(p.fil_layout) && !out_of_order(p.out_layout)) {
        CHECK_FALSE(s.IsApplicable(h.target(), p).ok());
        continue;
      }
      REQUIRE(s.IsApplicable(h.target(), p).ok());
      std::vector<PerfConfig> configs = {s.DefaultConfig(h.target(), p)};
      const solver::CpuGemmParams split_k{8, 16, 16, 2, 4, 2};
      if (s.IsValid(h.target(), p, split_k.ToConfig()).ok()) configs.push_back(split_k.ToConfig());
      for (const PerfConfig& config : configs) {
        INFO("params " << config.ToString());
        absl::StatusOr<Solution> sol = s.GetSolution(h.target(), p, config);
        REQUIRE(sol.ok());
        const Problem planned = inner_last ? solver::ChannelsLast(p) : solver::ChannelsFirst(p);
        absl::StatusOr<Solution> inner = s.inner().GetSolution(h.target(), planned, config);
        REQUIRE(inner.ok());
        auto moves = [&](Layout l, const TensorDesc& d) {
          return out_of_order(l) && d.dims[1] > 1 && d.dims[2] * d.dims[3] * d.dims[4] > 1;
        };
        const int moved = moves(p.in_layout, p.XDesc()) + moves(p.fil_layout, p.WDesc()) + moves(p.out_layout, p.YDesc());
        CHECK(sol->launches.size() == inner->launches.size() + moved);
        CHECK(sol->workspace_bytes > inner->workspace_bytes);
        split += inner->workspace_bytes > 0;
        for (const solver::Launch& l : sol->launches) packed += l.entry == "tuna_batched_transpose_packed";
        testing::CheckMatchesReference(h, s, p, config);
        ++runs;
      }
    }
  }
  CHECK(runs >= 24);
  CHECK(split >= 3);  // the inner workspace, a region of the adapter's, in use
  CHECK(packed >= 2);  // 16-bit tensors of even channels and pixels moved by words
}

TEST_CASE("channels-last adapter: NCHW, NCDHW and mixed problems of every direction match the reference") {
  CheckAdapterRuns(GemmAdapter(), /*inner_last=*/true);
}

TEST_CASE("channels-first adapter: NHWC, NDHWC and mixed problems of every direction match the reference") {
  const solver::ChannelsFirstAdapter s("TestCpuGemmNhwc", std::make_unique<ChannelsFirstCpuGemm>());
  CheckAdapterRuns(s, /*inner_last=*/false);
}

// An inner solver with a hand-made solution: zeroes y, x and its workspace first; one launch that
// names every role by buffer and x by tensor map.
class FixedInner : public solver::Solver {
 public:
  std::string_view Name() const override { return "FixedInner"; }
  solver::Algorithm Algo() const override { return solver::Algorithm::kImplicitGemm; }
  bool IsTunable() const override { return false; }
  std::vector<Direction> Directions() const override { return {Direction::kForward}; }
  absl::Status IsApplicable(const solver::Target&, const Problem& p) const override {
    if (p.in_layout != Layout::kNHWC || p.fil_layout != Layout::kNHWC || p.out_layout != Layout::kNHWC) {
      return solver::NotApplicable(Name(), "NHWC only");
    }
    return absl::OkStatus();
  }
  absl::StatusOr<Solution> GetSolution(const solver::Target&, const Problem&, const PerfConfig&) const override {
    Solution s;
    s.kernels = {{"conv/inner.cu", {"inner"}, {"-DINNER=1"}}};
    s.zero_first = {BufferRole::kY, BufferRole::kX, BufferRole::kWorkspace};
    s.workspace_bytes = 100;
    solver::Launch l;
    l.entry = "inner";
    l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY),
              KernelArg::TensorMap(BufferRole::kX, {}, 16), KernelArg::Buffer(BufferRole::kWorkspace, 8),
              KernelArg::I32(5)};
    s.launches = {l};
    return s;
  }
};

TEST_CASE("channels-last adapter: regions, remapped arguments, fills of the zeroed regions") {
  const ChannelsLastAdapter s("FixedInnerNchw", std::make_unique<FixedInner>());
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu-x86_64", 2);
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE((cpu.ok() && sm90.ok()));
  // x 2x3x5x7 FP16 = 420 bytes (region 512), y 2x4x5x7 = 560 (region 768), w NHWC stays in place.
  Problem p = testing::Make2d(2, 3, 4, 5, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1, DataType::kFp16, Layout::kNCHW,
                              Layout::kNHWC, Layout::kNCHW);
  REQUIRE(p.YDesc().ElementCount() == 2 * 4 * 5 * 7);
  absl::StatusOr<Solution> sol = s.GetSolution(*sm90, p, PerfConfig{});
  REQUIRE(sol.ok());
  CHECK(sol->workspace_bytes == 512 + 768 + 256);
  REQUIRE(sol->kernels.size() == 2);
  CHECK(sol->kernels[0].source == "conv/inner.cu");
  CHECK(sol->kernels[1].source == "conv/layout_transpose.cu");
  CHECK(sol->kernels[1].options == std::vector<std::string>{"-DTUNA_ELEM_BYTES=2"});
  CHECK(sol->zero_first.empty());
  REQUIRE(sol->launches.size() == 3 + 1 + 1 + 1);  // 3 fills, x in, the inner launch, y out
  auto buffer_at = [](const solver::Launch& l, size_t i) { return std::pair{l.args.at(i).role, l.args.at(i).i}; };
  const std::vector<std::pair<int64_t, int64_t>> fills = {{512, 560}, {0, 420}, {1280, 100}};  // y, x, workspace
  for (size_t i = 0; i < fills.size(); ++i) {
    INFO("fill " << i);
    CHECK(sol->launches[i].entry == "tuna_fill_zero");
    CHECK(sol->launches[i].kernel == 1);
    CHECK(buffer_at(sol->launches[i], 0) == std::pair{BufferRole::kWorkspace, fills[i].first});
    CHECK(sol->launches[i].args[1].i == (fills[i].second + 3) / 4);
  }
  const solver::Launch& in = sol->launches[3];
  CHECK(in.entry == "tuna_batched_transpose");
  CHECK(buffer_at(in, 0) == std::pair{BufferRole::kX, int64_t{0}});
  CHECK(buffer_at(in, 1) == std::pair{BufferRole::kWorkspace, int64_t{0}});
  CHECK((in.args[2].i == 2 && in.args[3].i == 3 && in.args[4].i == 35 && in.args[5].i == 2));  // n, c, h*w, tiles
  CHECK((in.grid.x == 2 && in.grid.y == 2 && in.block.x == 32 && in.block.y == 8));
  const solver::Launch& inner = sol->launches[4];
  CHECK(inner.kernel == 0);
  CHECK(buffer_at(inner, 0) == std::pair{BufferRole::kWorkspace, int64_t{0}});
  CHECK(buffer_at(inner, 1) == std::pair{BufferRole::kW, int64_t{0}});
  CHECK(buffer_at(inner, 2) == std::pair{BufferRole::kWorkspace, int64_t{512}});
  CHECK(buffer_at(inner, 3) == std::pair{BufferRole::kWorkspace, int64_t{16}});
  CHECK(inner.args[3].kind == KernelArg::Kind::kTensorMap);
  CHECK(buffer_at(inner, 4) == std::pair{BufferRole::kWorkspace, int64_t{1280 + 8}});
  CHECK(inner.args[5].i == 5);
  const solver::Launch& out = sol->launches[5];
  CHECK(out.entry == "tuna_batched_transpose");
  CHECK(buffer_at(out, 0) == std::pair{BufferRole::kWorkspace, int64_t{512}});
  CHECK(buffer_at(out, 1) == std::pair{BufferRole::kY, int64_t{0}});
  CHECK((out.args[2].i == 2 && out.args[3].i == 35 && out.args[4].i == 4));  // n, h*w rows, k columns

  // Only w moved: y and x stay zeroed in place, w is read through its region.
  Problem w_only = p;
  w_only.in_layout = w_only.out_layout = Layout::kNHWC;
  w_only.fil_layout = Layout::kNCHW;
  absl::StatusOr<Solution> ws = s.GetSolution(*cpu, w_only, PerfConfig{});
  REQUIRE(ws.ok());
  CHECK(ws->kernels[1].source == "cpu_conv/layout_transpose.cc");
  CHECK(ws->zero_first == std::vector<BufferRole>{BufferRole::kY, BufferRole::kX});
  REQUIRE(ws->launches.size() == 1 + 1 + 1);  // the workspace fill, w in, the inner launch
  CHECK(buffer_at(ws->launches[2], 1) == std::pair{BufferRole::kWorkspace, int64_t{0}});
  CHECK(buffer_at(ws->launches[2], 0) == std::pair{BufferRole::kX, int64_t{0}});

  // A 1x1 filter is the same bytes in both layouts: it stays in place, as does a one-channel x.
  Problem one = p;
  one.fil = {1, 1, 1};
  one.pad = {0, 0, 0};
  one.c = 1;
  one.fil_layout = Layout::kNCHW;
  absl::StatusOr<Solution> os = s.GetSolution(*cpu, one, PerfConfig{});
  REQUIRE(os.ok());
  REQUIRE(os->launches.size() == 2 + 1 + 1);  // fills of y and the workspace, the inner launch, y out
  CHECK(buffer_at(os->launches[2], 0) == std::pair{BufferRole::kX, int64_t{0}});
  CHECK(buffer_at(os->launches[2], 1) == std::pair{BufferRole::kW, int64_t{0}});
  CHECK(buffer_at(os->launches[2], 2) == std::pair{BufferRole::kWorkspace, int64_t{0}});
  CHECK(os->zero_first == std::vector<BufferRole>{BufferRole::kX});
}

TEST_CASE("channels-last adapter: applicability, planning as the inner solver on the channels-last problem") {
  const ChannelsLastAdapter s = GemmAdapter();
  absl::StatusOr<solver::Target> cpu = solver::TargetForArch("cpu-x86_64", 2);
  REQUIRE(cpu.ok());
  auto reason = [](const absl::Status& st) { return std::string(st.message()); };
  Problem p = testing::Make2d(2, 8, 8, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, DataType::kFp32, Layout::kNCHW,
                              Layout::kNCHW, Layout::kNCHW);
  REQUIRE(s.IsApplicable(*cpu, p).ok());
  // Over an inner solver that takes NCHW itself, the adapter steps aside.
  const ChannelsLastAdapter over_native("TestCpuGemmNchw", std::make_unique<solver::CpuGemmConvSolver>());
  CHECK_THAT(reason(over_native.IsApplicable(*cpu, p)), Catch::Contains("without copies"));
  CHECK(s.Name() == "TestCpuGemmNchw");
  CHECK(s.IsTunable());
  CHECK(s.Directions().size() == 3);
  const Problem cl = solver::ChannelsLast(p);
  CHECK((cl.in_layout == Layout::kNHWC && cl.fil_layout == Layout::kNHWC && cl.out_layout == Layout::kNHWC));
  CHECK(s.Space(*cpu, p).Size() == s.inner().Space(*cpu, cl).Size());
  CHECK(s.DefaultConfig(*cpu, p) == s.inner().DefaultConfig(*cpu, cl));
  Problem p3 = p;
  p3.spatial_dims = 3;
  p3.in_layout = p3.fil_layout = p3.out_layout = Layout::kNCDHW;
  CHECK(solver::ChannelsLast(p3).in_layout == Layout::kNDHWC);

  CHECK_THAT(reason(s.IsApplicable(*cpu, cl)), Catch::Contains("channels-last already (TunaCpuGemmConv runs it)"));
  Problem int8 = p;
  int8.data_type = DataType::kInt8;
  CHECK_THAT(reason(s.IsApplicable(*cpu, int8)), Catch::Contains("INT8"));
  Problem trans = p;
  trans.mode = ConvMode::kTrans;
  const absl::Status refused = s.IsApplicable(*cpu, trans);
  CHECK(refused.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(reason(refused), Catch::Contains("TestCpuGemmNchw: on the channels-last problem: TunaCpuGemmConv"));
  CHECK_FALSE(s.GetSolution(*cpu, trans, s.DefaultConfig(*cpu, p)).ok());
  CHECK_FALSE(s.IsValid(*cpu, cl, s.DefaultConfig(*cpu, p)).ok());
  CHECK_FALSE(s.IsValid(*cpu, p, PerfConfig{{1, 2, 3}}).ok());
}

TEST_CASE("registered adapters: TunaHopperTma{Fwd,Bwd,Wrw}Nchw, TunaFastTcFwdNchw, TunaMfmaFwdNchw, "
          "TunaHopper{Wrw,HaloWrw,Fwd,HaloFwd}Nchw") {
  const solver::SolverRegistry& reg = solver::SolverRegistry::Builtin();
  // Each with a ResNet-50 layer it applies to: a strided 1x1 (the stride-1 ones TunaHopperTmaFwd/Bwd
  // take as they are), the RGB stem (TunaHopperWrw), a 3x3 (the halo kernels).
  const std::vector<std::tuple<uint64_t, std::string, size_t>> expect = {
      {1031, "TunaHopperTmaFwd", 8}, {1032, "TunaHopperTmaBwd", 8}, {1033, "TunaHopperTmaWrw", 8},
      {1034, "TunaFastTcFwd", 8},    {1035, "TunaMfmaFwd", 8},      {1036, "TunaHopperWrw", 0},
      {1037, "TunaHopperHaloWrw", 2}, {1038, "TunaHopperFwd", 8},   {1039, "TunaHopperHaloFwd", 2}};
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  absl::StatusOr<solver::Target> gfx = solver::TargetForArch("gfx90a");
  REQUIRE((sm90.ok() && gfx.ok()));
  const std::vector<Problem> layers = testing::ResNet50Layers();
  for (const auto& [id, inner, layer] : expect) {
    INFO(id << " " << inner);
    const solver::RegisteredSolver* r = reg.ById(id);
    REQUIRE(r != nullptr);
    CHECK(r->solver->Name() == inner + "Nchw");
    const auto* adapter = dynamic_cast<const ChannelsLastAdapter*>(&solver::Unflattened(*r->solver));
    REQUIRE(adapter != nullptr);
    CHECK(adapter->inner().Name() == inner);
    const solver::Target& t = inner == "TunaMfmaFwd" ? *gfx : *sm90;
    const Direction dir = adapter->Directions().front();
    const Problem nchw = testing::With(layers[layer], dir, DataType::kFp16, Layout::kNCHW);
    INFO(nchw.Canonical());
    REQUIRE(adapter->IsApplicable(t, nchw).ok());
    CHECK_FALSE(adapter->IsApplicable(t, solver::ChannelsLast(nchw)).ok());
    CHECK(adapter->inner().IsApplicable(t, solver::ChannelsLast(nchw)).ok());
    const PerfConfig config = adapter->DefaultConfig(t, nchw);
    CHECK(adapter->IsValid(t, nchw, config).ok());
    absl::StatusOr<Solution> sol = adapter->GetSolution(t, nchw, config);
    REQUIRE(sol.ok());
    CHECK(sol->kernels.back().source == "conv/layout_transpose.cu");
    CHECK_FALSE(adapter->IsApplicable(t, testing::With(layers[layer], dir, DataType::kFp32, Layout::kNCHW)).ok());
    const Problem native = testing::With(layers[5], dir, DataType::kFp16, Layout::kNCHW);
    CHECK(adapter->IsApplicable(t, native).ok() != adapter->inner().IsApplicable(t, native).ok());
  }
}

TEST_CASE("registered channels-first adapters: the SIMT and Winograd solvers on FP32 NHWC and NDHWC (1055-1060)") {
  const solver::SolverRegistry& reg = solver::SolverRegistry::Builtin();
  absl::StatusOr<solver::Target> sm90 = solver::TargetForArch("sm_90");
  REQUIRE(sm90.ok());
  const std::vector<std::pair<uint64_t, std::string>> expect = {
      {1055, "TunaFastSimtFwd"}, {1056, "TunaFastSimtBwd"}, {1057, "TunaFastSimtWrw"},
      {1058, "TunaWinogradF2x3"}, {1059, "TunaWinogradWrw"}, {1060, "TunaWinogradF4x3"}};
  const Problem layer = testing::ResNet50Layers()[2];  // 3x3, stride 1: every one of them applies
  for (const auto& [id, inner] : expect) {
    INFO(id << " " << inner);
    const solver::RegisteredSolver* r = reg.ById(id);
    REQUIRE(r != nullptr);
    CHECK(r->solver->Name() == inner + "Nhwc");
    const auto* adapter = dynamic_cast<const solver::ChannelsFirstAdapter*>(&solver::Unflattened(*r->solver));
    REQUIRE(adapter != nullptr);
    CHECK(adapter->inner().Name() == inner);
    const Direction dir = adapter->Directions().front();
    const Problem nhwc = testing::With(layer, dir, DataType::kFp32, Layout::kNHWC);
    INFO(nhwc.Canonical());
    CHECK(r->solver->IsApplicable(*sm90, nhwc).ok());
    CHECK_FALSE(r->solver->IsApplicable(*sm90, solver::ChannelsFirst(nhwc)).ok());  // the inner runs NCHW itself
    CHECK_FALSE(r->solver->IsApplicable(*sm90, testing::With(layer, dir, DataType::kFp16, Layout::kNHWC)).ok());
    // An NDHWC 1x3x3 layer: flattened by the registry into N*D NHWC images, then moved to NCHW.
    Problem p3 = nhwc;
    p3.spatial_dims = 3;
    p3.in = {4, nhwc.in[1], nhwc.in[2]};
    p3.fil = {1, nhwc.fil[1], nhwc.fil[2]};
    p3.pad = {0, nhwc.pad[1], nhwc.pad[2]};
    p3.in_layout = p3.fil_layout = p3.out_layout = Layout::kNDHWC;
    CHECK(r->solver->IsApplicable(*sm90, p3).ok());
    const PerfConfig config = r->solver->DefaultConfig(*sm90, p3);
    absl::StatusOr<Solution> sol = r->solver->GetSolution(*sm90, p3, config);
    REQUIRE(sol.ok());
    CHECK(sol->kernels.back().source == "conv/layout_transpose.cu");
  }
}

}  // namespace
}  // namespace tuna
