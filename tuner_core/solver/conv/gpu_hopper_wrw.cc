#include "tuner_core/solver/conv/gpu_hopper_wrw.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;
using gpu::OutputPixels;
using gpu::ChunkChannels;
using gpu::PadsChannels;
using gpu::HopperTile;

constexpr int kPixelsPerStage = 64;

// GEMM N: the filter columns the kernel computes (with padding channels when it pads).
int64_t Columns(const Problem& p) { return p.fil[1] * p.fil[2] * ChunkChannels(p); }

// Workspace: x with its channels padded (halves; only when padding), then the FP32 partials.
struct WrwWorkspace {
  int64_t x_elems = 0, partials_offset = 0, partials = 0;  // partials_offset in floats
  uint64_t Bytes() const { return static_cast<uint64_t>(partials_offset + partials) * 4; }
};
WrwWorkspace WorkspaceOf(const Problem& p, int split_k) {
  WrwWorkspace w;
  if (PadsChannels(p)) w.x_elems = p.n * p.in[1] * p.in[2] * ChunkChannels(p);
  w.partials_offset = CeilDiv(w.x_elems, 128) * 64;  // floats past the halves, 256-byte aligned
  const bool partials = split_k > 1 || PadsChannels(p);
  w.partials = partials ? split_k * p.k * Columns(p) : 0;
  return w;
}
int64_t PixelTiles(const Problem& p) { return CeilDiv(OutputPixels(p), kPixelsPerStage); }
// Blocks of one split: output tiles times groups.
int64_t TileBlocks(const Problem& p, int tb_m, int tb_n) {
  return CeilDiv(p.k / p.groups, tb_m) * CeilDiv(Columns(p), tb_n) * p.groups;
}

}  // namespace

uint64_t HopperWrwSolver::SharedBytes(int tb_m, int tb_n, int stages) {
  return static_cast<uint64_t>(stages) * (tb_m + tb_n) * kPixelsPerStage * 2 + 1024;
}

absl::Status HopperWrwSolver::IsApplicable(const Target& target, const Problem& p) const {
  gpu::FastConvRules rules;
  rules.min_sm = 90;
  rules.groups = true;
  rules.direction = Direction::kBackwardWeights;
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp16, DataType::kBf16,
                                           Layout::kNHWC, rules);
      !st.ok()) {
    return st;
  }
  if (target.SmVersion() != 90) return NotApplicable(Name(), "wgmma kernels are built for sm_90a only");
  if ((p.k / p.groups) % 8 != 0) return NotApplicable(Name(), "needs K/G % 8 == 0 (16-byte chunks of dy)");
  if ((p.c / p.groups) % 8 != 0 && p.groups != 1) {
    return NotApplicable(Name(), "grouped convolutions need C/G % 8 == 0 (depthwise has its own solvers)");
  }
  if (p.groups > gpu::kMaxGridYZ) return NotApplicable(Name(), "too many groups for grid.y");
  if (OutputPixels(p) * p.k > gpu::kMaxIndex || p.k * Columns(p) > gpu::kMaxIndex) {
    return NotApplicable(Name(), "sizes exceed 32-bit indices");
  }
  return absl::OkStatus();
}

SearchSpace HopperWrwSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                      {"TB_N", Pow2Range(64, 256)},
                      {"WG_M", Pow2Range(1, 4)},
                      {"STAGES", LinearRange(3, 8)},
                      {"SPLIT_K", Pow2Range(1, 64), AxisUse::kSolver}});
}

absl::Status HopperWrwSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const HopperTile t = HopperTile::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (t.wg_m > t.tb_m / 64) return invalid("more warpgroups than 64-row slabs");
  const int wg_rows = t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("TB_M / WG_M must be a multiple of 64 (wgmma m64)");
  if (wg_rows * t.tb_n / 128 > 128) return invalid("more than 128 accumulators per thread");
  // 512 threads leave 128 registers each: at most 64 accumulators.
  if (t.wg_m == 4 && wg_rows * t.tb_n / 128 > 64) return invalid("more than 64 accumulators at 512 threads");
  const uint64_t smem = SharedBytes(t.tb_m, t.tb_n, t.stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  const int64_t kpg = p.k / p.groups;
  if (t.tb_m > 64 && t.tb_m / 2 >= kpg) return invalid("TB_M much larger than K/G");
  if (t.tb_n > 64 && t.tb_n / 2 >= Columns(p)) return invalid("TB_N much larger than R*S*C/G");
  const int64_t per_split = CeilDiv(PixelTiles(p), t.split_k);
  if (t.stages > 3 && t.stages - 2 > per_split) return invalid("STAGES deeper than the pixel loop");
  // Splits pay only until the grid fills the GPU a few times over, each with 4+ pixel tiles.
  if (t.split_k > 1 && (TileBlocks(p, t.tb_m, t.tb_n) * t.split_k > 4 * target.num_cu || per_split < 4)) {
    return invalid("more splits than fill the GPU, or too few pixels per split");
  }
  if (CeilDiv(kpg, t.tb_m) * CeilDiv(Columns(p), t.tb_n) > int64_t{0x7fffffff}) return invalid("grid too large");
  return absl::OkStatus();
}

PerfConfig HopperWrwSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  for (HopperTile t : {HopperTile{128, 128, 2, 4}, HopperTile{64, 128, 1, 4}, HopperTile{64, 64, 1, 4}}) {
    // Split until the grid covers every SM.
    int split = 1;
    while (TileBlocks(p, t.tb_m, t.tb_n) * split < target.num_cu && split < 64) split *= 2;
    for (; split >= 1; split /= 2) {
      t.split_k = split;
      const PerfConfig c = t.Config(space);
      if (IsValid(target, p, c).ok()) return c;
    }
  }
  return HopperTile{64, 64, 1, 3}.Config(space);  // valid for every applicable problem
}

absl::StatusOr<Solution> HopperWrwSolver::GetSolution(const Target& target, const Problem& p,
                                                      const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const HopperTile t = HopperTile::Of(space, config);
  KernelBuild build = gpu::TunedBuild("conv/hopper_wrw.cu",
                                      {"tuna_hopper_wrw", "tuna_hopper_wrw_reduce", "tuna_pad_channels"},
                                      space, config, p.data_type);
  const int64_t cp = ChunkChannels(p);
  build.options.push_back(absl::StrCat("-DCHUNK=", cp % 8 == 0 ? 16 : 8));
  build.arch_specific = true;  // wgmma: sm_90a
  const Dhw o = p.Out();
  const bool pads = PadsChannels(p);
  const WrwWorkspace ws = WorkspaceOf(p, t.split_k);
  const bool partials = ws.partials > 0;
  Solution sol;
  sol.kernels.push_back(build);
  sol.workspace_bytes = ws.Bytes();
  if (pads) {
    Launch c;
    c.entry = "tuna_pad_channels";
    const int64_t pixels = p.n * p.in[1] * p.in[2];
    c.grid.x = static_cast<uint32_t>(CeilDiv(pixels * cp, 256));
    c.block.x = 256;
    c.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::I64(0),
              KernelArg::I64(pixels), KernelArg::I32(p.c), KernelArg::I32(cp)};
    sol.launches.push_back(c);
  }
  Launch l;
  l.entry = "tuna_hopper_wrw";
  l.grid.x = static_cast<uint32_t>(CeilDiv(p.k / p.groups, t.tb_m) * CeilDiv(Columns(p), t.tb_n));
  l.grid.y = static_cast<uint32_t>(p.groups);
  l.grid.z = static_cast<uint32_t>(t.split_k);
  l.block.x = static_cast<uint32_t>(128 * t.wg_m);
  l.shared_bytes = SharedBytes(t.tb_m, t.tb_n, t.stages);
  l.args = {KernelArg::Buffer(pads ? BufferRole::kWorkspace : BufferRole::kX), KernelArg::Buffer(BufferRole::kY),
            KernelArg::Buffer(partials ? BufferRole::kWorkspace : BufferRole::kW), KernelArg::I64(0),
            KernelArg::I64(partials ? ws.partials_offset : 0)};
  for (int64_t v : {p.n, cp * p.groups, p.in[1], p.in[2], p.k, o[1], o[2], p.fil[1], p.fil[2], p.pad[1], p.pad[2],
                    p.stride[1], p.stride[2], p.dilation[1], p.dilation[2], p.groups, int64_t{t.split_k},
                    int64_t{partials ? 1 : 0}}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(l);
  if (partials) sol.launches.push_back(gpu::HopperWrwReduceLaunch(p, cp, t.split_k, ws.partials_offset));
  return sol;
}

}  // namespace tuna::solver
