#include "tuner_core/solver/conv/gpu_hopper_halo_wrw.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;
using gpu::WaveEfficiency;

constexpr int kPix = 64;  // output pixels per tile: TILE_H x TILE_W
constexpr int kMaxStages = 8;

struct HaloTile {
  int tb_m, wg_m, stages, split_k, tile_w;
  static HaloTile Of(const SearchSpace& s, const PerfConfig& c) {
    return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "WG_M")),
            static_cast<int>(s.Value(c, "STAGES")), static_cast<int>(s.Value(c, "SPLIT_K")),
            static_cast<int>(s.Value(c, "TILE_W"))};
  }
  PerfConfig Config(const SearchSpace& s) const {
    return s.Make({{"TB_M", tb_m}, {"WG_M", wg_m}, {"STAGES", stages}, {"SPLIT_K", split_k}, {"TILE_W", tile_w}});
  }
  int TileH() const { return kPix / tile_w; }
};

int64_t Chunks(const Problem& p) { return CeilDiv(p.c / p.groups, 64); }
// A strided 1x1 filter without padding reads x at (u ho, v wo) only: the walk sees a stride-1 1x1
// problem on the (Ho, Wo) view of x whose rows and columns step u and v pixels.
bool StridedPointwise(const Problem& p) {
  return p.fil[1] == 1 && p.fil[2] == 1 && p.pad[1] == 0 && p.pad[2] == 0 && (p.stride[1] != 1 || p.stride[2] != 1);
}

// The filter rows' classes (hopper_tma_wrw.cu, HALO): the copy engine's traversal stride u (the
// walk's stride: 1 for a strided 1x1 filter, read through a strided view), rows per class,
// filter rows and box rows between a class's rows.
struct RowClasses {
  int u, taps0, taps1, r_step, q_step;
  int Count() const { return taps1 > 0 ? 2 : 1; }
};
RowClasses ClassesOf(const Problem& p) {
  const int u = StridedPointwise(p) ? 1 : static_cast<int>(p.stride[1]);
  const int r = static_cast<int>(p.fil[1]), dil = static_cast<int>(p.dilation[1]);
  const int r_step = u == 2 && dil % 2 == 1 ? 2 : 1;
  return {u, r_step == 2 ? (r + 1) / 2 : r, r_step == 2 ? r / 2 : 0, r_step, r_step * dil / u};
}
int HaloRows(const Problem& p, int tile_h) {
  const RowClasses rc = ClassesOf(p);
  return tile_h + (rc.taps0 - 1) * rc.q_step;
}
int64_t PixelTiles(const Problem& p, const HaloTile& t) {
  const Dhw o = p.Out();
  return p.n * CeilDiv(o[1], t.TileH()) * CeilDiv(o[2], t.tile_w);
}
// Work units of one split: M-tiles x (filter columns x chunks) x groups.
int64_t TileUnits(const Problem& p, const HaloTile& t) {
  return CeilDiv(p.k / p.groups, t.tb_m) * p.fil[2] * Chunks(p) * p.groups;
}
int DeepestStages(const Target& target, const Problem& p, int tb_m, int tile_w) {
  int s = kMaxStages;
  const int halo_rows = HaloRows(p, kPix / tile_w), classes = ClassesOf(p).Count();
  while (s > 3 && HopperHaloWrwSolver::SharedBytes(tb_m, tile_w, halo_rows, classes, s) >
                      target.max_shared_bytes_per_block) {
    --s;
  }
  return s;
}


// A tiled 4-D map (C, W, H, N) of an NHWC tensor of h x w pixels, or of its view of every
// step_h-th row and step_w-th column (view_h x view_w pixels): boxes of 64 channels x box_w x
// box_h x 1, in the 128-byte swizzle (one MN-major slab per 8-row group).
backend::TensorMapSpec NhwcMap(int64_t n, int64_t h, int64_t w, int64_t c, int box_w, int box_h, int64_t view_h = 0,
                               int64_t view_w = 0, int64_t step_h = 1, int64_t step_w = 1) {
  backend::TensorMapSpec m;
  m.rank = 4;
  m.element_bytes = 2;
  m.dims = {static_cast<uint64_t>(c), static_cast<uint64_t>(view_w > 0 ? view_w : w),
            static_cast<uint64_t>(view_h > 0 ? view_h : h), static_cast<uint64_t>(n), 0};
  m.strides_bytes = {static_cast<uint64_t>(step_w * c) * 2, static_cast<uint64_t>(step_h * w * c) * 2,
                     static_cast<uint64_t>(h * w * c) * 2, 0};
  m.box = {64, static_cast<uint32_t>(box_w), static_cast<uint32_t>(box_h), 1, 0};
  m.swizzle = backend::TensorMapSpec::Swizzle::k128B;
  return m;
}

}  // namespace

uint64_t HopperHaloWrwSolver::SharedBytes(int tb_m, int tile_w, int halo_rows, int classes, int stages) {
  const uint64_t halo_bytes = static_cast<uint64_t>(classes) * halo_rows * tile_w * 128;
  return 1024 + static_cast<uint64_t>(stages) * (tb_m * 128 + halo_bytes) +
         16 * static_cast<uint64_t>(stages);
}

absl::Status HopperHaloWrwSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (p.direction != Direction::kBackwardWeights) return NotApplicable(Name(), "backward weights only");
  const hopper_tma::ConvPlan plan = hopper_tma::ForwardPlan(p);
  if (plan.nchw || plan.spatial3) return NotApplicable(Name(), "2D NHWC only");
  if (absl::Status st = hopper_tma::CheckApplicable(Name(), target, p, plan); !st.ok()) {
    return st;
  }
  const bool traversable = p.stride[1] == p.stride[2] && p.stride[1] <= 2;
  if (!traversable && !StridedPointwise(p)) {
    return NotApplicable(Name(), "stride 1 or 2 in both directions, or a 1x1 filter without padding");
  }
  if (p.fil[1] > 4) return NotApplicable(Name(), "R above 4 (64 R accumulator columns per tile)");
  if ((p.k / p.groups) % 8 != 0) return NotApplicable(Name(), "needs K/G % 8 == 0 (16-byte aligned dy rows)");
  if (ClassesOf(p).u * HaloRows(p, 8) > 256) {
    return NotApplicable(Name(), "dilated filter height above the copy engine's box");
  }
  if (p.n * p.in[1] * p.in[2] * p.c > gpu::kMaxIndex || p.k * p.fil[1] * p.fil[2] * (p.c / p.groups) > gpu::kMaxIndex) {
    return NotApplicable(Name(), "sizes exceed 32-bit indices");
  }
  return absl::OkStatus();
}

SearchSpace HopperHaloWrwSolver::Space(const Target&, const Problem&) const {
  return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                      {"WG_M", Pow2Range(1, 2)},
                      {"STAGES", LinearRange(3, kMaxStages)},
                      {"SPLIT_K", LinearRange(1, 64), AxisUse::kSolver},
                      {"TILE_W", Pow2Range(8, 64)}});
}

absl::Status HopperHaloWrwSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const HaloTile t = HaloTile::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  const int wg_rows = t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("TB_M / WG_M must be a multiple of 64 (wgmma m64)");
  if (wg_rows / 64 * p.fil[1] * 32 > 128) return invalid("more than 128 accumulators per thread");
  const uint64_t smem = SharedBytes(t.tb_m, t.tile_w, HaloRows(p, t.TileH()), ClassesOf(p).Count(), t.stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  if (t.stages + 2 < DeepestStages(target, p, t.tb_m, t.tile_w)) return invalid("ring far shallower than fits");
  if (t.tb_m > 64 && t.tb_m / 2 >= p.k / p.groups) return invalid("TB_M much larger than K/G");
  const Dhw o = p.Out();
  if (t.tile_w > 8 && t.tile_w / 2 >= o[2]) return invalid("TILE_W much wider than the output rows");
  if (t.TileH() > 1 && t.TileH() / 2 >= o[1]) return invalid("TILE_H much taller than the output");
  if (!gpu::WrwSplitsPay(TileUnits(p, t), t.split_k, PixelTiles(p, t), target.num_cu)) {
    return invalid("splits that leave waves part-empty or fill the GPU more than 8 times, or too few pixels per split");
  }
  return absl::OkStatus();
}

PerfConfig HopperHaloWrwSolver::DefaultConfig(const Target& target, const Problem& p) const {
  // 8 x 8 pixel tiles (the most reuse of each halo row), two consumer warpgroups where K/G and the
  // accumulators allow, the deepest ring, the split that fills the waves best.
  const SearchSpace space = Space(target, p);
  for (HaloTile t : {HaloTile{128, 2, 0, 1, 8}, HaloTile{64, 1, 0, 1, 8}, HaloTile{64, 1, 0, 1, 16},
                     HaloTile{64, 1, 0, 1, 32}, HaloTile{64, 1, 0, 1, 64}}) {
    t.stages = DeepestStages(target, p, t.tb_m, t.tile_w);
    int best = 0;
    double best_eff = 0;
    for (int split = 1; split <= 64; ++split) {
      t.split_k = split;
      if (!IsValid(target, p, t.Config(space)).ok()) continue;
      const double eff = WaveEfficiency(TileUnits(p, t) * split, target.num_cu);
      if (best == 0 || eff > best_eff + 0.05) best = split, best_eff = eff;
    }
    if (best > 0) {
      t.split_k = best;
      return t.Config(space);
    }
  }
  return HaloTile{64, 1, DeepestStages(target, p, 64, 8), 1, 8}.Config(space);
}

absl::StatusOr<Solution> HopperHaloWrwSolver::GetSolution(const Target& target, const Problem& p,
                                                          const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const HaloTile t = HaloTile::Of(space, config);
  const int halo_rows = HaloRows(p, t.TileH());
  const RowClasses rc = ClassesOf(p);
  KernelBuild build;
  build.source = "conv/hopper_tma_wrw.cu";
  build.entries = {"tuna_hopper_tma_wrw", "tuna_hopper_wrw_reduce"};
  build.options = {absl::StrCat("-DTB_M=", t.tb_m), absl::StrCat("-DTB_N=", 64 * p.fil[1]),
                   absl::StrCat("-DWG_M=", t.wg_m), absl::StrCat("-DSTAGES=", t.stages), "-DHALO=1",
                   absl::StrCat("-DTILE_W=", t.tile_w), absl::StrCat("-DHALO_ROWS=", halo_rows),
                   gpu::DTypeOption(p.data_type)};
  if (rc.Count() == 2) {  // the two classes' wgmma widths
    build.options.push_back(absl::StrCat("-DHALO_N0=", 64 * rc.taps0));
    build.options.push_back(absl::StrCat("-DHALO_N1=", 64 * rc.taps1));
  }
  build.arch_specific = true;  // wgmma, setmaxnreg: sm_90a
  const bool partials = t.split_k > 1;
  Solution sol;
  sol.kernels.push_back(build);
  const int64_t dw = p.k * p.fil[1] * p.fil[2] * (p.c / p.groups);
  sol.workspace_bytes = partials ? static_cast<uint64_t>(t.split_k) * dw * 4 : 0;
  const Dhw o = p.Out();
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_hopper_tma_wrw";
  l.grid.x = static_cast<uint32_t>(std::min<int64_t>(TileUnits(p, t) * t.split_k, target.num_cu));
  l.block.x = static_cast<uint32_t>(128 * (t.wg_m + 1));
  l.shared_bytes = SharedBytes(t.tb_m, t.tile_w, halo_rows, rc.Count(), t.stages);
  backend::TensorMapSpec x_map = StridedPointwise(p)
                                     ? NhwcMap(p.n, p.in[1], p.in[2], p.c, t.tile_w, halo_rows, o[1], o[2],
                                               p.stride[1], p.stride[2])
                                     : NhwcMap(p.n, p.in[1], p.in[2], p.c, t.tile_w, halo_rows);
  if (rc.u > 1) {  // every u-th column and row from the box's start: the box spans u times its pixels
    x_map.element_strides = {1, static_cast<uint32_t>(rc.u), static_cast<uint32_t>(rc.u), 1, 1};
    x_map.box[1] *= rc.u;
    x_map.box[2] *= rc.u;
  }
  l.args = {KernelArg::TensorMap(BufferRole::kX, x_map),
            KernelArg::TensorMap(BufferRole::kY, NhwcMap(p.n, o[1], o[2], p.k, t.tile_w, t.TileH())),
            KernelArg::Buffer(partials ? BufferRole::kWorkspace : BufferRole::kW), KernelArg::I64(0)};
  for (int64_t v : {p.n, o[1], o[2], -p.pad[1], -p.pad[2], int64_t{rc.u}, int64_t{rc.u}, p.dilation[1], p.dilation[2],
                    p.fil[1], p.fil[2], p.c / p.groups, p.k, p.groups, Chunks(p), int64_t{t.split_k},
                    int64_t{partials ? 1 : 0}}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(std::move(l));
  if (partials) sol.launches.push_back(gpu::HopperWrwReduceLaunch(p, p.c / p.groups, t.split_k, 0));
  return sol;
}

}  // namespace tuna::solver
