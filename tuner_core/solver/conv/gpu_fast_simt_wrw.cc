#include "tuner_core/solver/conv/gpu_fast_simt_wrw.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;
using gpu::OutputPixels;

// The axes by name (the one place a config is decoded).
struct WrwParams {
  int tb_m, tb_n, tb_k, stages, split_k;
  static WrwParams Of(const SearchSpace& s, const PerfConfig& c) {
    return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TB_N")),
            static_cast<int>(s.Value(c, "TB_K")), static_cast<int>(s.Value(c, "STAGES")),
            static_cast<int>(s.Value(c, "SPLIT_K"))};
  }
};

int64_t Columns(const Problem& p) { return p.c * p.fil[1] * p.fil[2]; }
int64_t Tiles(const Problem& p, int tb_m, int tb_n) { return CeilDiv(p.k, tb_m) * CeilDiv(Columns(p), tb_n); }

}  // namespace

uint64_t FastSimtWrwSolver::SharedBytes(int tb_m, int tb_n, int tb_k, int stages) {
  return static_cast<uint64_t>(stages) * tb_k * (tb_m + 4 + tb_n + 4) * 4;
}

absl::Status FastSimtWrwSolver::IsApplicable(const Target& target, const Problem& p) const {
  gpu::FastConvRules rules;
  rules.direction = Direction::kBackwardWeights;
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp32, DataType::kFp32, Layout::kNCHW, rules);
      !st.ok()) {
    return st;
  }
  if (p.fil[1] > fast_simt::kMaxFilter || p.fil[2] > fast_simt::kMaxFilter) {
    return NotApplicable(Name(), "filter larger than 11");
  }
  if (OutputPixels(p) > gpu::kMaxIndex || p.k * Columns(p) > gpu::kMaxIndex) {
    return NotApplicable(Name(), "sizes exceed 32-bit indices");
  }
  return absl::OkStatus();
}

SearchSpace FastSimtWrwSolver::Axes() {
  return SearchSpace({{"TB_M", Pow2Range(64, 128)},
                      {"TB_N", Pow2Range(64, 128)},
                      {"TB_K", Pow2Range(8, 16)},
                      {"STAGES", LinearRange(2, 4)},
                      {"SPLIT_K", Pow2Range(1, 128), AxisUse::kSolver}});
}

absl::Status FastSimtWrwSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const auto [tb_m, tb_n, tb_k, stages, split_k] = WrwParams::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  const uint64_t smem = SharedBytes(tb_m, tb_n, tb_k, stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  const int64_t steps = CeilDiv(OutputPixels(p), tb_k);
  if (stages > 2 && CeilDiv(steps, split_k) < stages) return invalid("more stages than pixel steps per split");
  if (tb_m > 64 && tb_m / 2 >= p.k) return invalid("TB_M much larger than K");
  if (tb_n > 64 && tb_n / 2 >= Columns(p)) return invalid("TB_N much larger than C*R*S");
  if (CeilDiv(p.k, tb_m) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  // Splits pay only until the grid fills the GPU a few times over, and each split keeps a few
  // steps per pipeline stage.
  if (split_k > 1 && Tiles(p, tb_m, tb_n) * split_k > 4 * target.num_cu) return invalid("more splits than fill the GPU");
  if (split_k > 1 && CeilDiv(steps, split_k) < 4 * stages) return invalid("too few pixel steps per split");
  return absl::OkStatus();
}

PerfConfig FastSimtWrwSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  // The largest tile, split until the grid covers every SM (up to twice).
  for (int tile : {128, 64}) {
    int64_t split = 1;
    while (Tiles(p, tile, tile) * split * 2 <= 2 * target.num_cu && split < 128) split *= 2;
    for (; split >= 1; split /= 2) {
      const PerfConfig c = space.Make({{"TB_M", tile}, {"TB_N", tile}, {"TB_K", 8}, {"STAGES", 3}, {"SPLIT_K", split}});
      if (IsValid(target, p, c).ok()) return c;
    }
  }
  // 64 threads, 2 stages, no split: valid for every applicable problem.
  return space.Make({{"TB_M", 64}, {"TB_N", 64}, {"TB_K", 8}, {"STAGES", 2}, {"SPLIT_K", 1}});
}

Launch FastSimtWrwSolver::GemmLaunch(const Problem& p, const PerfConfig& config, const GemmBatch& batch) {
  const SearchSpace space = Axes();
  const auto [tb_m, tb_n, tb_k, stages, split_k] = WrwParams::Of(space, config);
  const Dhw o = p.Out();
  Launch l;
  l.kernel = batch.kernel;
  l.entry = "tuna_fast_simt_wrw";
  l.grid.x = static_cast<uint32_t>(CeilDiv(Columns(p), tb_n));
  l.grid.y = static_cast<uint32_t>(CeilDiv(p.k, tb_m));
  l.grid.z = static_cast<uint32_t>(split_k * batch.count);
  l.block.x = static_cast<uint32_t>(tb_m * tb_n / 64);
  l.shared_bytes = SharedBytes(tb_m, tb_n, tb_k, stages);
  l.args = {KernelArg::Buffer(batch.x), KernelArg::Buffer(batch.dy), KernelArg::Buffer(batch.out)};
  for (int64_t v : {p.n, p.c, p.in[1], p.in[2], p.k, o[1], o[2], p.pad[1], p.pad[2], p.stride[1], p.stride[2],
                    p.dilation[1], p.dilation[2]}) {
    l.args.push_back(KernelArg::I32(v));
  }
  fast_simt::AppendTapsArgs(p.fil[1], p.fil[2], l.args);
  for (int64_t v : {batch.x_off, batch.dy_off, batch.out_off, batch.zx, batch.zdy}) l.args.push_back(KernelArg::I64(v));
  l.args.push_back(KernelArg::I32(batch.count));
  l.args.push_back(KernelArg::I32(split_k));
  return l;
}

KernelBuild FastSimtWrwSolver::Build(const Problem& p, const PerfConfig& config) {
  const SearchSpace space = Axes();
  KernelBuild build;
  build.source = "conv/fast_simt_wrw.cu";
  build.entries = {"tuna_fast_simt_wrw", "tuna_simt_wrw_reduce"};
  build.options = space.Defines(config);
  for (std::string& o : fast_simt::TapsOptions(p.fil[1], p.fil[2])) build.options.push_back(std::move(o));
  return build;
}

absl::StatusOr<Solution> FastSimtWrwSolver::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const int split_k = WrwParams::Of(Space(target, p), config).split_k;
  const int64_t count = p.k * Columns(p);
  Solution sol;
  sol.kernels.push_back(Build(p, config));
  sol.workspace_bytes = split_k > 1 ? static_cast<uint64_t>(split_k * count) * 4 : 0;
  GemmBatch batch;
  batch.out = split_k > 1 ? BufferRole::kWorkspace : BufferRole::kW;
  sol.launches.push_back(GemmLaunch(p, config, batch));
  if (split_k > 1) {
    Launch r;
    r.entry = "tuna_simt_wrw_reduce";
    r.grid.x = static_cast<uint32_t>(CeilDiv(count, 256));
    r.block.x = 256;
    r.args = {KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::Buffer(BufferRole::kW), KernelArg::I32(count),
              KernelArg::I32(split_k)};
    sol.launches.push_back(std::move(r));
  }
  return sol;
}

int FastSimtWrwSolver::SplitK(const PerfConfig& config) {
  return WrwParams::Of(Axes(), config).split_k;
}

}  // namespace tuna::solver
