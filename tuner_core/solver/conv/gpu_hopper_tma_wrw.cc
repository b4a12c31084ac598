#include "tuner_core/solver/conv/gpu_hopper_tma_wrw.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;
using gpu::HopperTile;
using gpu::OutputPixels;

constexpr int kPixelsPerStage = 64;
constexpr int kChunk = 64;  // channels per B slab
constexpr int kMaxStages = 8;

int64_t Chunks(const Problem& p) { return CeilDiv(p.c / p.groups, kChunk); }
// GEMM N as the kernel tiles it: every tap's channels in whole 64-channel slabs.
int64_t SlabColumns(const Problem& p) { return gpu::FilterTaps(p) * Chunks(p) * kChunk; }
// 64-pixel stages; NCHW 1x1 layers (hopper_tma::NchwGemm): per image, the last one partial.
int64_t PixelTiles(const Problem& p) {
  if (hopper_tma::NchwGemm(p)) return p.n * CeilDiv(p.in[1] * p.in[2], kPixelsPerStage);
  return CeilDiv(OutputPixels(p), kPixelsPerStage);
}
int64_t NTiles(const Problem& p, int tb_n) { return CeilDiv(SlabColumns(p), tb_n); }
// Work units of one split: output tiles times groups.
int64_t TileUnits(const Problem& p, int tb_m, int tb_n) { return CeilDiv(p.k / p.groups, tb_m) * NTiles(p, tb_n) * p.groups; }
int ClusterN(const SearchSpace& s, const PerfConfig& c) { return static_cast<int>(s.Value(c, "CLUSTER_N")); }
bool StreamK(const SearchSpace& s, const PerfConfig& c) { return s.Value(c, "STREAM_K") == 1; }
// STREAM_K: the persistent blocks, one per SM at most, each with a contiguous range of the tiles x
// pixel-tiles iterations.
int64_t StreamBlocks(const Problem& p, const HopperTile& t, const Target& target) {
  return std::min<int64_t>(target.num_cu, TileUnits(p, t.tb_m, t.tb_n) * PixelTiles(p));
}
PerfConfig Make(const SearchSpace& s, const HopperTile& t, int cluster) {
  return s.Make({{"TB_M", t.tb_m}, {"TB_N", t.tb_n}, {"WG_M", t.wg_m}, {"STAGES", t.stages}, {"SPLIT_K", t.split_k},
                 {"CLUSTER_N", cluster}, {"STREAM_K", 0}});
}
int DeepestStages(const Target& target, int tb_m, int tb_n) {
  int s = kMaxStages;
  while (s > 3 && HopperTmaWrwSolver::SharedBytes(tb_m, tb_n, s) > target.max_shared_bytes_per_block) --s;
  return s;
}

// The default's cost model: a config's time from the copy engine's cost per 8 KiB slab, the
// tensor cores' per stage, the epilogue's stores and the split-K reduce. Constants fitted to every
// valid config of the 22 ResNet-50 FP16 N=32 layers (H200, 2026-12-04, 25,115 timings): the
// pick is 1.060x the best config (geomean, max 1.21x; in-sample) where the earlier rule (the
// largest tile whose splits fill the waves) was 1.25x (max 1.65x). Clock cycles at 1.98 GHz.
constexpr double kTiledSlabClk = 200;   // a tiled 64 x 64 copy (dy; x with X_TILED)
constexpr double kIm2colSlabClk = 900;  // an im2col 64 x 64 copy of x
constexpr double kNarrowMmaEff = 0.6;   // wgmma with N = 64 against N >= 128
constexpr double kBlockClk = 2000;      // launch, first copies' latency
constexpr double kStoreBytesPerClk = 32;
constexpr double kReduceBytesPerUs = 2e6;
constexpr double kReduceLaunchUs = 1;
constexpr double kClkPerUs = 1980;

// dy as a (K, P) matrix: boxes of 64 channels x 64 pixels, 128-byte swizzle (one MN-major slab).
backend::TensorMapSpec DyMap(const Problem& p) {
  return hopper_tma::MatrixMap(p.k, OutputPixels(p), kPixelsPerStage, kChunk);
}

// TMA_3D: where every group's rows (K/G) and, for the tiled x, its channels (C/G) are whole
// 64-channel slabs and blocks run alone, a stage's slabs of dy (and of x) come in one 3-D copy of
// the (64, P, rows / 64) view instead of one 2-D copy per slab (0-7 % on ResNet-50's late layers,
// H200, 2026-12-04).
bool ThreeD(const Problem& p, int cluster, bool x_tiled) {
  return cluster == 1 && !hopper_tma::NchwGemm(p) && (p.k / p.groups) % 64 == 0 && (!x_tiled || (p.c / p.groups) % 64 == 0);
}
// A (rows, P) map as (64, P, rows / 64), boxes of `slabs` 64 x 64 slabs.
backend::TensorMapSpec ThreeDMap(backend::TensorMapSpec m, int slabs) {
  const uint64_t rows = m.dims[0];
  m.rank = 3;
  m.dims = {64, m.dims[1], rows / 64, 0, 0};
  m.strides_bytes = {rows * 2, 128, 0, 0};
  m.box = {64, kPixelsPerStage, static_cast<uint32_t>(slabs), 0, 0};
  return m;
}

double PredictUs(const Problem& p, const HopperTile& t, int num_cu, bool x_tiled) {
  const double load = (t.tb_m / 64) * kTiledSlabClk + (t.tb_n / 64) * (x_tiled ? kTiledSlabClk : kIm2colSlabClk);
  const double mma = t.tb_m * t.tb_n * 64.0 * 2 / 4096 / (t.tb_n >= 128 ? 1.0 : kNarrowMmaEff);
  const int64_t rounds = CeilDiv(TileUnits(p, t.tb_m, t.tb_n) * t.split_k, num_cu);
  const int64_t per_split = CeilDiv(PixelTiles(p), t.split_k);
  const double epilogue = t.tb_m * t.tb_n * (t.split_k > 1 ? 4.0 : 2.0) / kStoreBytesPerClk;
  double us = (rounds * (per_split * std::max(load, mma) + epilogue) + kBlockClk) / kClkPerUs;
  if (t.split_k > 1) {
    const double dw = static_cast<double>(p.k) * gpu::FilterTaps(p) * (p.c / p.groups);
    us += (t.split_k * dw * 4 + dw * 2) / kReduceBytesPerUs + kReduceLaunchUs;
  }
  return us;
}

}  // namespace

uint64_t HopperTmaWrwSolver::SharedBytes(int tb_m, int tb_n, int stages) {
  return 1024 + static_cast<uint64_t>(stages) * (tb_m + tb_n) * kPixelsPerStage * 2 + 16 * static_cast<uint64_t>(stages);
}

absl::Status HopperTmaWrwSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (p.direction != Direction::kBackwardWeights) return NotApplicable(Name(), "backward weights only");
  if (p.spatial_dims == 3 && !three_d_) return NotApplicable(Name(), "2D only (3-D: TunaHopperTmaWrw3d)");
  if (p.spatial_dims != 3 && three_d_) return NotApplicable(Name(), "3-D only (2-D: TunaHopperTmaWrw)");
  if (absl::Status st = hopper_tma::CheckApplicable(Name(), target, p, hopper_tma::ForwardPlan(p)); !st.ok()) {
    return st;
  }
  // Each group's dy rows start 16-byte aligned for the copy engine (K/G = 20 with groups 2 ran into
  // an illegal instruction on the H200, 2026-12-04).
  if ((p.k / p.groups) % 8 != 0) {
    return NotApplicable(Name(), "needs K/G % 8 == 0 (16-byte aligned rows of dy per group for the copy engine)");
  }
  if (OutputPixels(p) > gpu::kMaxIndex || p.k * SlabColumns(p) > gpu::kMaxIndex) {
    return NotApplicable(Name(), "sizes exceed 32-bit indices");
  }
  return absl::OkStatus();
}

SearchSpace HopperTmaWrwSolver::Space(const Target&, const Problem&) const {
  return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                      {"TB_N", Pow2Range(64, 256)},
                      {"WG_M", Pow2Range(1, 2)},
                      {"STAGES", LinearRange(3, kMaxStages)},
                      {"SPLIT_K", LinearRange(1, 64), AxisUse::kSolver},
                      {"CLUSTER_N", Pow2Range(1, 2)},
                      // appended later: params without it read as 0. A solver axis: the build
                      // passes -DSTREAM_K=1 for 1 only, so the other builds keep their options.
                      {"STREAM_K", {0, 1}, AxisUse::kSolver, 0}});
}

absl::Status HopperTmaWrwSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const HopperTile t = HopperTile::Of(space, config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  const int wg_rows = t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("TB_M / WG_M must be a multiple of 64 (wgmma m64)");
  if (wg_rows * t.tb_n / 128 > 128) return invalid("more than 128 accumulators per thread");
  const uint64_t smem = SharedBytes(t.tb_m, t.tb_n, t.stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  // One block per SM: a ring shallower than the deepest that fits only idles the copy engine.
  if (t.stages + 2 < DeepestStages(target, t.tb_m, t.tb_n)) return invalid("ring far shallower than fits");
  if (t.tb_m > 64 && t.tb_m / 2 >= p.k / p.groups) return invalid("TB_M much larger than K/G");
  if (t.tb_n > 64 && t.tb_n / 2 >= SlabColumns(p)) return invalid("TB_N much larger than the filter columns");
  if (!gpu::WrwSplitsPay(TileUnits(p, t.tb_m, t.tb_n), t.split_k, PixelTiles(p), target.num_cu)) {
    return invalid("splits that leave waves part-empty or fill the GPU more than 8 times, or too few pixels per split");
  }
  if (TileUnits(p, t.tb_m, t.tb_n) * t.split_k > int64_t{0x7fffffff}) return invalid("too many work units");
  if (StreamK(space, config)) {
    // Stream-K evens out the last wave of whole tiles: only where the tiles leave one, with no
    // split or cluster of its own and 4+ pixel tiles per block.
    if (t.split_k != 1 || ClusterN(space, config) != 1) return invalid("STREAM_K with SPLIT_K or CLUSTER_N");
    const int64_t tiles = TileUnits(p, t.tb_m, t.tb_n);
    if (tiles % target.num_cu == 0) return invalid("STREAM_K where whole tiles fill every wave");
    if (tiles > 4 * static_cast<int64_t>(target.num_cu)) return invalid("STREAM_K with more than four waves of tiles");
    if (tiles * PixelTiles(p) < 4 * StreamBlocks(p, t, target)) return invalid("STREAM_K with under 4 pixel tiles a block");
  }
  if (ClusterN(space, config) == 2) {
    if (hopper_tma::NchwGemm(p)) return invalid("CLUSTER_N 2 with NCHW (no multicast of its 3-D dy boxes)");
    if (t.tb_m < 128) return invalid("CLUSTER_N 2 splits the dy slabs of TB_M >= 128 between two blocks");
    if (NTiles(p, t.tb_n) < 2) return invalid("CLUSTER_N 2 with one N-tile: nothing to share");
  }
  return absl::OkStatus();
}

PerfConfig HopperTmaWrwSolver::DefaultConfig(const Target& target, const Problem& p) const {
  // The valid unclustered config without stream-K, with the deepest ring, that the cost model
  // (PredictUs) times fastest; on a tie the taller tile and two consumer warpgroups (ResNet-50's
  // C 2048, 7x7, K 512 layer: 128 x 64 0.0126 ms, 64 x 128 0.0135).
  const SearchSpace space = Space(target, p);
  // Tiled copies of both operands where x is the (C, P) matrix (NHWC) or for NCHW 1x1 layers.
  const bool x_tiled = hopper_tma::XTiled(hopper_tma::ForwardPlan(p)) || hopper_tma::NchwGemm(p);
  std::optional<HopperTile> best;
  double best_us = 0;
  for (int tb_m : {256, 128, 64}) {
    for (int tb_n : {64, 128, 256}) {
      for (int wg_m : {2, 1}) {
        HopperTile t{tb_m, tb_n, wg_m, DeepestStages(target, tb_m, tb_n)};
        for (int split = 1; split <= 64; ++split) {
          t.split_k = split;
          if (!IsValid(target, p, Make(space, t, 1)).ok()) continue;
          const double us = PredictUs(p, t, target.num_cu, x_tiled);
          if (!best || us < best_us) best = t, best_us = us;
        }
      }
    }
  }
  if (best) return Make(space, *best, 1);
  return Make(space, HopperTile{64, 64, 1, DeepestStages(target, 64, 64)}, 1);  // valid for every applicable problem
}

absl::StatusOr<Solution> HopperTmaWrwSolver::GetSolution(const Target& target, const Problem& p,
                                                         const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const HopperTile t = HopperTile::Of(space, config);
  const hopper_tma::ConvPlan plan = hopper_tma::ForwardPlan(p);
  const hopper_tma::Phase& q = plan.phases[0];
  const int cluster = ClusterN(space, config);
  KernelBuild build = gpu::TunedBuild("conv/hopper_tma_wrw.cu",
                                      {"tuna_hopper_tma_wrw", "tuna_hopper_wrw_reduce"}, space, config, p.data_type);
  build.arch_specific = true;  // wgmma, setmaxnreg: sm_90a
  const bool partials = t.split_k > 1;
  const bool stream = StreamK(space, config);
  if (stream) build.entries.push_back("tuna_hopper_wrw_clear"), build.options.push_back("-DSTREAM_K=1");
  const bool x_tiled = hopper_tma::XTiled(plan);  // 1x1, stride 1, no padding
  if (x_tiled) build.options.push_back("-DX_TILED=1");
  const bool three_d = ThreeD(p, cluster, x_tiled);
  if (three_d) build.options.push_back("-DTMA_3D=1");
  if (plan.nchw) build.options.push_back("-DNCHW_1X1=1");
  if (plan.spatial3) build.options.push_back("-DSPATIAL3=1");
  Solution sol;
  sol.kernels.push_back(build);
  sol.workspace_bytes = partials ? static_cast<uint64_t>(t.split_k) * p.k * gpu::FilterTaps(p) * (p.c / p.groups) * 4 : 0;
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_hopper_tma_wrw";
  // Units of a cluster: groups x splits x M-tiles x N-tile groups; one cluster of CLUSTER_N blocks each.
  const int64_t units = CeilDiv(p.k / p.groups, t.tb_m) * CeilDiv(NTiles(p, t.tb_n), cluster) * p.groups * t.split_k;
  l.grid.x = static_cast<uint32_t>(stream ? StreamBlocks(p, t, target)
                                          : cluster * std::min<int64_t>(units, std::max(1, target.num_cu / cluster)));
  l.block.x = static_cast<uint32_t>(128 * (t.wg_m + 1));
  l.shared_bytes = SharedBytes(t.tb_m, t.tb_n, t.stages);
  backend::TensorMapSpec xmap, dymap;
  if (plan.nchw) {  // (P, channels, N) views: K-major 64 x 64 slabs
    xmap = hopper_tma::NchwMap(p.n, p.c, p.in[1] * p.in[2], kPixelsPerStage, kChunk);
    dymap = hopper_tma::NchwMap(p.n, p.k, p.in[1] * p.in[2], kPixelsPerStage, kChunk);
  } else {
    xmap = x_tiled ? hopper_tma::MatrixMap(p.c, p.n * p.in[1] * p.in[2], kPixelsPerStage, kChunk)
                   : hopper_tma::XMap(plan, q, kPixelsPerStage);
    if (three_d && x_tiled) xmap = ThreeDMap(xmap, t.tb_n / 64);
    dymap = three_d ? ThreeDMap(DyMap(p), t.tb_m / 64) : DyMap(p);
  }
  l.args = {KernelArg::TensorMap(BufferRole::kX, xmap), KernelArg::TensorMap(BufferRole::kY, dymap),
            KernelArg::Buffer(partials ? BufferRole::kWorkspace : BufferRole::kW), KernelArg::I64(0)};
  const Dhw o = p.Out();
  for (int64_t v : {p.n, o[1], o[2], q.lower_h, q.lower_w, p.stride[1], p.stride[2], p.dilation[1], p.dilation[2],
                    p.fil[1], p.fil[2], p.c / p.groups, p.k, p.groups, Chunks(p), int64_t{t.split_k},
                    int64_t{partials ? 1 : 0}}) {
    l.args.push_back(KernelArg::I32(v));
  }
  if (stream) {  // a partial slot per block, then a flag per block, zeroed by the launch before
    const int64_t slots = static_cast<int64_t>(l.grid.x) * t.tb_m * t.tb_n;
    sol.workspace_bytes = static_cast<uint64_t>(slots + l.grid.x) * 4;
    l.args.push_back(KernelArg::Buffer(BufferRole::kWorkspace));
    l.args.push_back(KernelArg::I64(0));
    Launch clear;
    clear.kernel = 0;
    clear.entry = "tuna_hopper_wrw_clear";
    clear.grid.x = static_cast<uint32_t>(CeilDiv(l.grid.x, 256));
    clear.block.x = 256;
    clear.args = {KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::I64(slots), KernelArg::I32(l.grid.x)};
    sol.launches.push_back(std::move(clear));
  }
  if (plan.spatial3) {  // the depth: Do, its box origin, stride, dilation and taps
    for (int64_t v : {o[0], plan.depth.lower, p.stride[0], p.dilation[0], p.fil[0]}) l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(std::move(l));
  if (partials) sol.launches.push_back(gpu::HopperWrwReduceLaunch(p, p.c / p.groups, t.split_k, 0));
  return sol;
}

}  // namespace tuna::solver
