#include "tuner_core/solver/conv/gpu_hopper_fwd.h"

#include <algorithm>

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

constexpr int kTbK = 64;

// Blocks of one split: output tiles times groups.
int64_t TileBlocks(const Problem& p, const HopperTile& t) {
  return CeilDiv(OutputPixels(p), t.tb_m) * CeilDiv(p.k / p.groups, t.tb_n) * p.groups;
}

int64_t KTiles(const Problem& p) { return CeilDiv(ChunkChannels(p) * p.fil[1] * p.fil[2], kTbK); }

// Workspace of the channel-padded copies: x' then w' (at an element offset rounded to 128 B).
struct PaddedCopies {
  int64_t x_elems, w_offset, w_elems;
  uint64_t Bytes() const { return static_cast<uint64_t>(w_offset + w_elems) * 2; }
};
PaddedCopies PaddedLayout(const Problem& p) {
  const int64_t cp = ChunkChannels(p);
  PaddedCopies c;
  c.x_elems = p.n * p.in[1] * p.in[2] * cp;
  c.w_offset = CeilDiv(c.x_elems, 64) * 64;
  c.w_elems = p.k * p.fil[1] * p.fil[2] * cp;
  return c;
}

}  // namespace

uint64_t HopperFwdSolver::SharedBytes(int tb_m, int tb_n, int stages, int split_k) {
  const uint64_t ring = static_cast<uint64_t>(stages) * (tb_m + tb_n) * kTbK * 2;
  // The staged output: halves, or FP32 partials read by the cluster when split.
  const uint64_t out = static_cast<uint64_t>(tb_m) * (tb_n + 8) * (split_k > 1 ? 4 : 2);
  return std::max(ring, out) + 1024;
}

absl::Status HopperFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  gpu::FastConvRules rules;
  rules.min_sm = 90;
  rules.groups = true;
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp16, DataType::kBf16,
                                           Layout::kNHWC, rules);
      !st.ok()) {
    return st;
  }
  if (target.SmVersion() != 90) return NotApplicable(Name(), "wgmma kernels are built for sm_90a only");
  if ((p.c / p.groups) % 8 != 0 && p.groups != 1) {
    return NotApplicable(Name(), "grouped convolutions need C/G % 8 == 0 (depthwise has its own solvers)");
  }
  if (p.groups > gpu::kMaxGridYZ) return NotApplicable(Name(), "too many groups for grid.y");
  return absl::OkStatus();
}

SearchSpace HopperFwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                      {"TB_N", Pow2Range(64, 256)},
                      {"WG_M", Pow2Range(1, 2)},
                      {"STAGES", LinearRange(3, 6)},
                      {"SPLIT_K", Pow2Range(1, 4)}});
}

absl::Status HopperFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const HopperTile t = HopperTile::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  const int wg_rows = t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("TB_M / WG_M must be a multiple of 64 (wgmma m64)");
  // Accumulators: (TB_M / WG_M) x TB_N FP32 over 128 threads; more than 128 spills.
  if (wg_rows * t.tb_n / 128 > 128) return invalid("more than 128 accumulators per thread");
  const uint64_t smem = SharedBytes(t.tb_m, t.tb_n, t.stages, t.split_k);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  const int64_t kpg = p.k / p.groups;
  const int64_t k_tiles = KTiles(p);
  // Tiles twice the GEMM extent only waste the tensor cores (never prune the smallest tile).
  if (t.tb_n > 64 && t.tb_n / 2 >= kpg) return invalid("TB_N much larger than K/G");
  if (t.tb_m > 64 && t.tb_m / 2 >= OutputPixels(p)) return invalid("TB_M much larger than N*Ho*Wo");
  // A ring deeper than the reduction only costs shared memory (occupancy).
  if (t.stages > 3 && t.stages - 2 > CeilDiv(k_tiles, t.split_k)) return invalid("STAGES deeper than the K loop");
  // Split-K pays only where the output tiles leave SMs idle, and each split keeps 4+ k-tiles.
  if (t.split_k > 1 && (TileBlocks(p, t) >= target.num_cu || k_tiles < 4 * t.split_k || PadsChannels(p))) {
    return invalid("SPLIT_K where the tiles already fill the GPU or the K loop is short");
  }
  if (CeilDiv(OutputPixels(p), t.tb_m) * CeilDiv(kpg, t.tb_n) > int64_t{0x7fffffff}) return invalid("grid too large");
  return absl::OkStatus();
}

PerfConfig HopperFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const int64_t kpg = p.k / p.groups;
  // Wide tiles when they still give every SM a block, else narrower ones.
  const int64_t big = CeilDiv(OutputPixels(p), 128) * CeilDiv(kpg, 256) * p.groups;
  const SearchSpace space = Space(target, p);
  for (HopperTile c : {big >= target.num_cu ? HopperTile{128, 256, 2, 4} : HopperTile{128, 128, 2, 4},
                         HopperTile{128, 128, 2, 4, 2}, HopperTile{128, 128, 1, 4}, HopperTile{128, 64, 1, 4},
                         HopperTile{64, 64, 1, 3}}) {
    const PerfConfig config = c.Config(space);
    if (IsValid(target, p, config).ok()) return config;
  }
  return HopperTile{64, 64, 1, 3}.Config(space);  // valid for every applicable problem
}

absl::StatusOr<Solution> HopperFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                      const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const HopperTile t = HopperTile::Of(space, config);
  KernelBuild build = gpu::TunedBuild("conv/hopper_fwd.cu",
                                      {"tuna_hopper_fwd", "tuna_pad_channels"}, space, config, p.data_type);
  const int64_t cp = ChunkChannels(p);
  build.options.push_back(absl::StrCat("-DCHUNK=", cp % 8 == 0 ? 16 : 8));
  build.arch_specific = true;  // wgmma: sm_90a
  const Dhw o = p.Out();
  const int64_t kpg = p.k / p.groups;
  Solution sol;
  sol.kernels.push_back(build);
  const bool pads = PadsChannels(p);
  const PaddedCopies padded = PaddedLayout(p);
  if (pads) {  // x' and w' with the channels padded to cp, in the workspace
    sol.workspace_bytes = padded.Bytes();
    auto pad = [&](BufferRole src, int64_t dst_offset, int64_t pixels) {
      Launch c;
      c.kernel = 0;
      c.entry = "tuna_pad_channels";
      c.grid.x = static_cast<uint32_t>(CeilDiv(pixels * cp, 256));
      c.block.x = 256;
      c.args = {KernelArg::Buffer(src), KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::I64(dst_offset),
                KernelArg::I64(pixels), KernelArg::I32(p.c), KernelArg::I32(cp)};
      sol.launches.push_back(c);
    };
    pad(BufferRole::kX, 0, p.n * p.in[1] * p.in[2]);
    pad(BufferRole::kW, padded.w_offset, p.k * p.fil[1] * p.fil[2]);
  }
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_hopper_fwd";
  l.grid.x = static_cast<uint32_t>(CeilDiv(OutputPixels(p), t.tb_m) * CeilDiv(kpg, t.tb_n));
  l.grid.y = static_cast<uint32_t>(p.groups);
  l.grid.z = static_cast<uint32_t>(t.split_k);
  l.block.x = static_cast<uint32_t>(128 * t.wg_m);
  l.shared_bytes = SharedBytes(t.tb_m, t.tb_n, t.stages, t.split_k);
  l.args = {KernelArg::Buffer(pads ? BufferRole::kWorkspace : BufferRole::kX),
            KernelArg::Buffer(pads ? BufferRole::kWorkspace : BufferRole::kW), KernelArg::Buffer(BufferRole::kY),
            KernelArg::I64(pads ? padded.w_offset : 0)};
  for (int64_t v : {p.n, pads ? cp : p.c, p.in[1], p.in[2], p.k, o[1], o[2], p.fil[1], p.fil[2], p.pad[1], p.pad[2],
                    p.stride[1], p.stride[2], p.dilation[1], p.dilation[2], p.groups}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(l);
  return sol;
}

}  // namespace tuna::solver
