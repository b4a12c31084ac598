#include "tuner_core/solver/conv/gpu_hopper_tma.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver::hopper_tma {
namespace {

using gpu::CeilDiv;

constexpr int kMaxStages = 8;
constexpr int kMinSplitKTiles = 64;  // the shortest k-loop split between two blocks (see CheckValid)
constexpr int kCornerMin = -128;  // the copy engine's bounding-box offsets for rank-4 im2col
constexpr int kCornerMax = 127;
constexpr int kCornerMin5 = -16;  // rank-5 (3-D) im2col: 5 bits per spatial dimension
constexpr int kCornerMax5 = 15;

int64_t Tiles(const ConvPlan& p, int tb_m, int tb_n) {
  int64_t tiles = 0;
  for (const Phase& q : p.phases) tiles += CeilDiv(p.n * q.n_i * q.n_j, tb_m);
  return tiles * CeilDiv(p.k / p.groups, tb_n) * p.groups;
}

// The deepest ring that fits the target's shared memory beside the rest of `t`.
int DeepestStages(const Target& target, TmaParams t) {
  t.stages = kMaxStages;
  while (t.stages > 3 && SharedBytes(t) > target.max_shared_bytes_per_block) --t.stages;
  return t.stages;
}

// The k-tiles of the plan's longest tile (the phase with the most taps).
int64_t KTiles(const ConvPlan& p, int tb_k) {
  int64_t taps = 0;
  for (const Phase& q : p.phases) taps = std::max(taps, q.taps_h * q.taps_w);
  return taps * p.depth.taps * CeilDiv(p.c / p.groups, tb_k);
}

// TB_K 32 pays where a tap's channels per group end in a half-empty 64-channel chunk (C/G % 64 in
// 1..32: C/G = 32, 96, 160, 288, ...): it reads, stores and multiplies fewer zeros. Elsewhere it
// only doubles the k-tiles.
bool HalfKTilePays(const ConvPlan& p) {
  const int64_t rest = (p.c / p.groups) % 64;
  return rest != 0 && rest <= 32;
}

// TB_N 32 (wgmma n32) pays only where K/G fits it: more N-tiles would re-read A.
bool NarrowNTilePays(const ConvPlan& p) { return p.k / p.groups <= 32; }

// The TB_N axis's values: powers of two, and between them the fits (FitNTilePays).
constexpr int kTbNValues[] = {32, 64, 96, 128, 160, 192, 224, 256};

// A TB_N between two powers of two (96, 160, 192, 224) pays only where it tiles K/G better than
// every other TB_N from the power of two below it to the one above: fewer padded columns
// (tensor-core work on zeros), or as few and fewer N-tiles (each re-reads the tile's A from L2).
// Inception-v3's K/G = 192 takes one 192-wide tile instead of a 256 (64 padded) or two 128s (64
// padded, A read twice); K/G = 384 two 192s instead of three 128s; K/G = 160 not a 192.
bool FitNTilePays(const ConvPlan& p, int tb_n) {
  if ((tb_n & (tb_n - 1)) == 0) return true;  // powers of two: the other rules decide
  const int64_t kg = p.k / p.groups;
  auto cost = [&](int64_t n) { return std::pair{CeilDiv(kg, n) * n - kg, CeilDiv(kg, n)}; };
  int below = 1;
  while (below * 2 < tb_n) below *= 2;
  for (int other : kTbNValues) {
    if (other != tb_n && other >= below && other <= 2 * below && !(cost(tb_n) < cost(other))) return false;
  }
  return true;
}

// Columns of the tile a consumer warp stages per epilogue pass (the kernel's kEpiCols): the
// largest of 64, 32, 16 that divides the block's band of TB_N / SPLIT_K columns.
int EpiCols(const TmaParams& t) {
  const int band = t.tb_n / t.split_k;
  return band % 64 == 0 ? 64 : band % 32 == 0 ? 32 : 16;
}

// The tiled map of w as (C/G, R*S, K): boxes of TB_K channels x 1 tap x TB_N rows. Channels past
// C/G are outside the box's tap, so a partial last chunk reads zeros (x's matching channels are
// the next group's or outside x: their products vanish).
// With flip_w, w is (C, R*S, K/G) in the plan's names, mapped as (K/G, R*S, C/G, G): boxes of the
// kernel's B slab (64 columns of K/G where TB_N % 64 == 0, else 32) x 1 tap x TB_K rows of C/G
// (zeros past C/G: the group's own rows only) x 1 group, in the swizzle of the slab's width.
backend::TensorMapSpec WMap(const ConvPlan& p, int tb_n, int tb_k) {
  backend::TensorMapSpec m;
  m.element_bytes = 2;
  const uint64_t cg = static_cast<uint64_t>(p.c / p.groups), taps = static_cast<uint64_t>(p.Taps());
  if (p.flip_w) {
    const uint64_t kg = static_cast<uint64_t>(p.k / p.groups);
    const int slab = tb_n % 64 == 0 ? 64 : 32;
    m.rank = 4;
    m.dims = {kg, taps, cg, static_cast<uint64_t>(p.groups), 0};
    m.strides_bytes = {kg * 2, taps * kg * 2, cg * taps * kg * 2, 0};
    m.box = {static_cast<uint32_t>(slab), 1, static_cast<uint32_t>(tb_k), 1, 0};
    m.swizzle = gpu::RowSwizzle(slab);
    return m;
  }
  m.rank = 3;
  m.dims = {cg, taps, static_cast<uint64_t>(p.k), 0, 0};
  m.strides_bytes = {cg * 2, taps * cg * 2, 0, 0};
  m.box = {static_cast<uint32_t>(tb_k), 1, static_cast<uint32_t>(tb_n), 0, 0};
  m.swizzle = gpu::RowSwizzle(tb_k);
  return m;
}

// Built with -DPHASED=0: one phase writing y row by row (forward, stride-1 backward data), so
// the kernel skips the phase table and takes one im2col map.
bool Unphased(const ConvPlan& p) {
  return p.phases.size() == 1 && p.phases[0].out_step_h == 1 && p.phases[0].out_step_w == 1;
}

// The channels of a tap's narrow last chunk (the kernel's LAST_K): 16 or 32 where C/G % 64 is
// 1..16 or 17..32 and the config takes 64-channel chunks in one phase (Unphased); else 0 (the last
// chunk is a whole 64-channel box, zeros past C/G). Inception-v3's C = 80: 64 + 16 per tap.
int LastK(const ConvPlan& p, const TmaParams& t) {
  const int64_t rest = (p.c / p.groups) % 64;
  if (t.tb_k != 64 || rest == 0 || rest > 32 || !Unphased(p) || p.nchw || p.spatial3) return 0;
  return rest <= 16 ? 16 : 32;
}

// The kernel's TunaPhases struct: 4 (1 unphased) TunaPhase records of 28 int32, then the count.
// A record: the phase's 20 geometry fields, then the magic numbers (gpu::FastDiv) of the
// divisions its tile decode makes: by n_i * n_j (pixels per image), by n_j, by the phase's
// M-tiles x N-tiles (tiles per group) and by the N-tiles (TB_N columns of K/G).
std::vector<int32_t> PhaseWords(const ConvPlan& p, int tb_m, int tb_n) {
  std::vector<int32_t> w;
  const int64_t n_tiles = CeilDiv(p.k / p.groups, tb_n);
  for (int i = 0; i < (Unphased(p) ? 1 : kMaxPhases); ++i) {
    const Phase q = i < static_cast<int>(p.phases.size()) ? p.phases[i] : Phase{};
    for (int64_t v : {q.n_i, q.n_j, q.taps_h, q.taps_w, q.r0, q.s0, q.rstep, q.sstep, q.off0_h, q.off0_w, q.offstep_h,
                      q.offstep_w, q.lower_h, q.lower_w, q.estride_h, q.estride_w, q.out_h0, q.out_w0, q.out_step_h,
                      q.out_step_w}) {
      w.push_back(static_cast<int32_t>(v));
    }
    const int64_t mn_tiles = CeilDiv(p.n * q.n_i * q.n_j, tb_m) * n_tiles;
    for (int64_t d : {q.n_i * q.n_j, q.n_j, mn_tiles, n_tiles}) {
      const gpu::FastDiv f = gpu::MakeFastDiv(std::max<int64_t>(d, 1));
      w.push_back(static_cast<int32_t>(f.mul));
      w.push_back(static_cast<int32_t>(f.shr));
    }
  }
  w.push_back(static_cast<int32_t>(p.phases.size()));
  if (p.spatial3) {  // TunaPhases' depth words
    const gpu::FastDiv ho = gpu::MakeFastDiv(std::max<int64_t>(p.hy, 1));
    for (int64_t v : {p.depth.taps, p.depth.dil, p.depth.lower, p.depth.stride, p.hy, static_cast<int64_t>(ho.mul),
                      static_cast<int64_t>(ho.shr)}) {
      w.push_back(static_cast<int32_t>(v));
    }
  }
  return w;
}

// The per-image GEMMs of an NchwGemm problem in the kernel's terms (ConvPlan::nchw): `rows` output
// channels from `red` channels over `pixels` pixels of each of `images` images.
ConvPlan NchwGemmPlan(const Problem& p, int64_t red, int64_t rows, bool trans_a) {
  const int64_t pixels = p.in[1] * p.in[2];
  ConvPlan plan{1, red * p.n, pixels * p.n, 1, rows, 1, rows, 1, 1, p.n, p.data_type, {}};
  Phase q;
  q.n_i = 1, q.n_j = rows, q.taps_h = 1, q.taps_w = 1;
  plan.phases.push_back(q);
  plan.nchw = true;
  plan.trans_a = trans_a;
  return plan;
}

// A 3-D problem for the kernel's SPATIAL3: the target, FP16/BF16, dense NDHWC tensors, the depth's
// stride, box and filter offsets within the copy engine's limits (the height and width are
// CheckApplicable's).
absl::Status CheckNdhwc3d(std::string_view solver, const Target& target, const Problem& p, const ConvPlan& plan) {
  if (absl::Status st = gpu::CheckSm90a16(solver, target, p, p.direction); !st.ok()) return st;
  if (p.in_layout != Layout::kNDHWC || p.fil_layout != Layout::kNDHWC || p.out_layout != Layout::kNDHWC ||
      !gpu::IsDense(p.XDesc(), Layout::kNHWC) || !gpu::IsDense(p.WDesc(), Layout::kNHWC) ||
      !gpu::IsDense(p.YDesc(), Layout::kNHWC)) {
    return NotApplicable(solver, "requires dense NDHWC x, w and y");
  }
  const Depth& d = plan.depth;
  if (d.stride > 8) return NotApplicable(solver, "depth stride above 8 (the copy engine's limit)");
  const Phase& q = plan.phases[0];
  for (int64_t v : {q.lower_h, q.lower_w, q.upper_h, q.upper_w, d.lower, d.upper}) {
    if (v < kCornerMin5 || v > kCornerMax5) {
      return NotApplicable(solver, "3-D padding or dilated filter extent outside the copy engine's -16..15 box");
    }
  }
  if (d.dil * (d.taps - 1) > 65535) return NotApplicable(solver, "filter depth offset above 16 bits");
  return absl::OkStatus();
}

absl::Status CheckNchwGemm(std::string_view solver, const Target& target, const Problem& p, const ConvPlan& plan) {
  if (absl::Status st = gpu::CheckSm90a16(solver, target, p, p.direction); !st.ok()) return st;
  if (!gpu::IsDense(p.XDesc(), Layout::kNCHW) || !gpu::IsDense(p.YDesc(), Layout::kNCHW) ||
      !gpu::IsDense(p.WDesc(), p.fil_layout)) {
    return NotApplicable(solver, "requires dense NCHW x and y and a dense w");
  }
  if ((plan.k / plan.groups) % 8 != 0) {
    return NotApplicable(solver, "NCHW needs H*W a multiple of 8 (16-byte copy-engine rows of pixels)");
  }
  if ((plan.c / plan.groups) % 8 != 0) {
    return NotApplicable(solver, "NCHW needs the summed channels a multiple of 8 (16-byte rows of w)");
  }
  if (plan.trans_a && plan.wy % 8 != 0) {
    return NotApplicable(solver, "NCHW backward data needs C a multiple of 8 (w read transposed: 16-byte rows)");
  }
  if (plan.c / plan.groups * (plan.k / plan.groups) * plan.groups > gpu::kMaxIndex ||
      plan.wy * (plan.k / plan.groups) * plan.groups > gpu::kMaxIndex) {
    return NotApplicable(solver, "tensors above 2^31 elements");
  }
  return absl::OkStatus();
}

// One dimension of a backward-data phase on the rotated filter: output residue `a` of stride
// `st`, padding `pad`, filter extent `f`, dilation `d`, dy extent `len_dy`, dx extent `len_dx`.
struct DimPhase {
  int64_t n, taps, f0, fstep, off_step, lower, upper, out0, out_step;
};
DimPhase BwdDim(int64_t a, int64_t st, int64_t pad, int64_t f, int64_t d, int64_t len_dy, int64_t len_dx) {
  DimPhase r{};
  const int64_t fstep = st > 1 ? st : 1;
  const int64_t first = ((a + pad) % st + st) % st;  // the first filter row that reaches residue a
  r.n = len_dx > a ? CeilDiv(len_dx - a, st) : 0;
  r.taps = first < f ? CeilDiv(f - first, fstep) : 0;
  r.fstep = fstep;
  r.off_step = d;
  r.out0 = a;
  r.out_step = st;
  if (r.taps == 0) return r;
  const int64_t last = first + (r.taps - 1) * fstep;  // filter rows first, first + fstep, ..., last
  // Tap t (rows taken last first) reads dy at base + t * d; base of output i = i + lower.
  r.lower = (a + pad - last * d) / st;
  r.upper = r.n + r.lower - len_dy;
  r.f0 = f - 1 - last;  // the rotated filter's row of tap 0
  return r;
}

}  // namespace

int64_t ConvPlan::Rows() const {
  int64_t rows = 0;
  for (const Phase& q : phases) rows += n * q.n_i * q.n_j;
  return rows;
}

backend::TensorMapSpec XMap(const ConvPlan& p, const Phase& q, int pixels, int channels) {
  backend::TensorMapSpec m;
  m.mode = backend::TensorMapSpec::Mode::kIm2col;
  m.element_bytes = 2;
  // (C, W, H, N), or (C, W, H, D, N) with the depth's box and stride for a 3-D plan.
  const uint64_t c = p.c, w = p.wx, h = p.hx, d = p.spatial3 ? p.depth.d_in : 1;
  m.rank = p.spatial3 ? 5 : 4;
  m.dims = {c, w, h, p.spatial3 ? d : static_cast<uint64_t>(p.n), p.spatial3 ? static_cast<uint64_t>(p.n) : 0};
  m.strides_bytes = {c * 2, w * c * 2, h * w * c * 2, p.spatial3 ? d * h * w * c * 2 : 0};
  m.element_strides = {1, static_cast<uint32_t>(q.estride_w), static_cast<uint32_t>(q.estride_h),
                       p.spatial3 ? static_cast<uint32_t>(p.depth.stride) : 1, 1};
  m.lower_corner = {static_cast<int>(q.lower_w), static_cast<int>(q.lower_h),
                    p.spatial3 ? static_cast<int>(p.depth.lower) : 0};
  m.upper_corner = {static_cast<int>(q.upper_w), static_cast<int>(q.upper_h),
                    p.spatial3 ? static_cast<int>(p.depth.upper) : 0};
  m.channels_per_pixel = static_cast<uint32_t>(channels);
  m.pixels_per_column = static_cast<uint32_t>(pixels);
  m.swizzle = gpu::RowSwizzle(channels);
  return m;
}

bool XTiled(const ConvPlan& p) {
  if (p.nchw || p.spatial3 || !Unphased(p) || p.r != 1 || p.s != 1 || p.hx != p.hy || p.wx != p.wy) return false;
  const Phase& q = p.phases[0];
  return q.lower_h == 0 && q.lower_w == 0 && q.estride_h == 1 && q.estride_w == 1;
}

backend::TensorMapSpec NchwMap(int64_t images, int64_t rows, int64_t pixels, int box_pixels, int box_rows) {
  backend::TensorMapSpec m;
  m.rank = 3;
  m.element_bytes = 2;
  m.dims = {static_cast<uint64_t>(pixels), static_cast<uint64_t>(rows), static_cast<uint64_t>(images), 0, 0};
  m.strides_bytes = {static_cast<uint64_t>(pixels) * 2, static_cast<uint64_t>(rows * pixels) * 2, 0, 0};
  m.box = {static_cast<uint32_t>(box_pixels), static_cast<uint32_t>(box_rows), 1, 0, 0};
  m.swizzle = gpu::RowSwizzle(box_pixels);
  return m;
}

backend::TensorMapSpec MatrixMap(int64_t channels, int64_t pixels, int box_pixels, int box_channels) {
  backend::TensorMapSpec m;
  m.rank = 2;
  m.element_bytes = 2;
  m.dims = {static_cast<uint64_t>(channels), static_cast<uint64_t>(pixels), 0, 0, 0};
  m.strides_bytes = {static_cast<uint64_t>(channels) * 2, 0, 0, 0};
  m.box = {static_cast<uint32_t>(box_channels), static_cast<uint32_t>(box_pixels), 0, 0, 0};
  m.swizzle = gpu::RowSwizzle(box_channels);
  return m;
}

bool NchwGemm(const Problem& p) {
  return p.spatial_dims == 2 && p.in_layout == Layout::kNCHW && p.out_layout == Layout::kNCHW && p.groups == 1 &&
         p.fil[1] == 1 && p.fil[2] == 1 && p.stride[1] == 1 && p.stride[2] == 1 && p.pad[1] == 0 && p.pad[2] == 0;
}

ConvPlan ForwardPlan(const Problem& p) {
  if (NchwGemm(p)) return NchwGemmPlan(p, p.c, p.k, /*trans_a=*/false);
  const Dhw o = p.Out();
  ConvPlan plan{p.n, p.c, p.k, p.in[1], p.in[2], o[1], o[2], p.fil[1], p.fil[2], p.groups, p.data_type, {}};
  Phase q;
  q.n_i = o[1], q.n_j = o[2], q.taps_h = p.fil[1], q.taps_w = p.fil[2];
  q.offstep_h = p.dilation[1], q.offstep_w = p.dilation[2];
  q.lower_h = -p.pad[1], q.lower_w = -p.pad[2];
  q.estride_h = p.stride[1], q.estride_w = p.stride[2];
  q.upper_h = p.pad[1] - p.dilation[1] * (p.fil[1] - 1);
  q.upper_w = p.pad[2] - p.dilation[2] * (p.fil[2] - 1);
  if (p.spatial_dims == 3) {  // depth x height rows; the depth's own box and taps
    plan.spatial3 = true;
    plan.depth = {p.in[0], o[0], p.fil[0], p.dilation[0], -p.pad[0], p.stride[0],
                  p.pad[0] - p.dilation[0] * (p.fil[0] - 1)};
    q.n_i = o[0] * o[1];
  }
  plan.phases.push_back(q);
  return plan;
}

ConvPlan BackwardDataPlan(const Problem& p) {
  if (NchwGemm(p)) return NchwGemmPlan(p, p.k, p.c, /*trans_a=*/true);  // w^T: w read M-major
  const Dhw o = p.Out();
  ConvPlan plan{p.n, p.k, p.c, o[1], o[2], p.in[1], p.in[2], p.fil[1], p.fil[2], p.groups, p.data_type, {}};
  for (int64_t a = 0; a < p.stride[1]; ++a) {
    for (int64_t b = 0; b < p.stride[2]; ++b) {
      const DimPhase h = BwdDim(a, p.stride[1], p.pad[1], p.fil[1], p.dilation[1], o[1], p.in[1]);
      const DimPhase w = BwdDim(b, p.stride[2], p.pad[2], p.fil[2], p.dilation[2], o[2], p.in[2]);
      if (h.n == 0 || w.n == 0) continue;  // no output pixel has this residue
      Phase q;
      q.n_i = h.n, q.n_j = w.n;
      q.taps_h = w.taps == 0 ? 0 : h.taps, q.taps_w = h.taps == 0 ? 0 : w.taps;
      q.r0 = h.f0, q.s0 = w.f0, q.rstep = h.fstep, q.sstep = w.fstep;
      q.offstep_h = h.off_step, q.offstep_w = w.off_step;
      q.lower_h = h.lower, q.lower_w = w.lower, q.upper_h = h.upper, q.upper_w = w.upper;
      q.out_h0 = h.out0, q.out_w0 = w.out0, q.out_step_h = h.out_step, q.out_step_w = w.out_step;
      plan.phases.push_back(q);
    }
  }
  if (p.spatial_dims == 3 && plan.phases.size() == 1) {  // stride 1: dx depth x height rows
    const DimPhase d = BwdDim(0, p.stride[0], p.pad[0], p.fil[0], p.dilation[0], o[0], p.in[0]);
    plan.spatial3 = true;
    plan.depth = {o[0], p.in[0], d.taps, d.off_step, d.lower, 1, d.upper};
    plan.phases[0].n_i *= p.in[0];
  }
  // In place where the filter's columns (dx's channels per group) make 16-byte rows for the copy
  // engine: no rotated copy, no workspace, one launch.
  plan.flip_w = plan.k / plan.groups % 8 == 0;
  return plan;
}


TmaParams TmaParams::Of(const SearchSpace& s, const PerfConfig& c) {
  return {static_cast<int>(s.Value(c, "TB_M")),      static_cast<int>(s.Value(c, "TB_N")),
          static_cast<int>(s.Value(c, "WG_M")),      static_cast<int>(s.Value(c, "STAGES")),
          static_cast<int>(s.Value(c, "PINGPONG")),  static_cast<int>(s.Value(c, "TB_K")),
          static_cast<int>(s.Value(c, "FIX_SIZES")), static_cast<int>(s.Value(c, "SPLIT_K"))};
}

PerfConfig TmaParams::Config(const SearchSpace& s) const {
  return s.Make({{"TB_M", tb_m}, {"TB_N", tb_n}, {"WG_M", wg_m}, {"STAGES", stages}, {"PINGPONG", pingpong},
                 {"TB_K", tb_k}, {"FIX_SIZES", fix_sizes}, {"SPLIT_K", split_k}});
}

SearchSpace Space() {
  return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                      // 96..224 joined later (FitNTilePays): old params never hold them.
                      {"TB_N", {std::begin(kTbNValues), std::end(kTbNValues)}},
                      {"WG_M", Pow2Range(1, 2)},
                      {"STAGES", LinearRange(3, kMaxStages)},
                      // appended after params were stored: those read as 0
                      {"PINGPONG", {0, 1}, AxisUse::kDefine, 0},
                      // appended later: params without it read as 64. A solver axis: Build passes
                      // -DTB_K=32 for 32 only, so TB_K 64 builds keep the options (and kernel-db
                      // keys) they had before the axis; the kernel's TB_K defaults to 64.
                      {"TB_K", {32, 64}, AxisUse::kSolver, 64},
                      // Not searched (Specialize sets it after the search); a solver axis: Build
                      // passes -DFIX_SIZES=1 and the sizes for 1 only. Older params read as 0.
                      {"FIX_SIZES", {0, 1}, AxisUse::kSolver, 0, /*searched=*/false},
                      // appended later: params without it read as 1. A solver axis: Build passes
                      // -DSPLIT_K for 2 only, so unsplit builds keep their options.
                      {"SPLIT_K", {1, 2}, AxisUse::kSolver, 1}});
}

uint64_t SharedBytes(const TmaParams& t) {
  const uint64_t epi_warp_bytes = 16 * static_cast<uint64_t>(EpiCols(t) + 8) * 2;
  const uint64_t recv = t.split_k > 1 ? static_cast<uint64_t>(t.split_k - 1) * t.tb_m * (t.tb_n / t.split_k) * 4 + 16 : 0;
  return 1024 + static_cast<uint64_t>(t.stages) * (t.tb_m + t.tb_n) * t.tb_k * 2 +
         static_cast<uint64_t>(t.Consumers()) * 4 * epi_warp_bytes + recv + 16 * static_cast<uint64_t>(t.stages);
}

absl::Status CheckApplicable(std::string_view solver, const Target& target, const Problem& p, const ConvPlan& plan) {
  if (plan.nchw) return CheckNchwGemm(solver, target, p, plan);
  if (plan.spatial3) {
    if (absl::Status st = CheckNdhwc3d(solver, target, p, plan); !st.ok()) return st;
  } else if (absl::Status st = gpu::CheckSm90aNhwc16(solver, target, p, p.direction); !st.ok()) {
    return st;
  }
  if ((plan.c / plan.groups) % 8 != 0) {
    return NotApplicable(solver, "input channels per group must be a multiple of 8 (16-byte copy-engine rows)");
  }
  if (plan.groups > 1 && plan.k / plan.groups < 8) return NotApplicable(solver, "fewer than 8 output channels per group");
  if (plan.phases.empty() || plan.phases.size() > static_cast<size_t>(kMaxPhases)) {
    return NotApplicable(solver, "more output phases than the kernel takes (strides above 2)");
  }
  for (const Phase& q : plan.phases) {
    if (q.estride_h > 8 || q.estride_w > 8) return NotApplicable(solver, "strides above 8 (the copy engine's limit)");
    if (q.taps_h == 0) continue;  // writes zeros, reads nothing
    for (int64_t v : {q.lower_h, q.lower_w, q.upper_h, q.upper_w}) {
      if (v < kCornerMin || v > kCornerMax) {
        return NotApplicable(solver, "padding or dilated filter extent outside the copy engine's -128..127 box");
      }
    }
    if (q.offstep_h * (q.taps_h - 1) > 65535 || q.offstep_w * (q.taps_w - 1) > 65535) {
      return NotApplicable(solver, "filter offset above 16 bits");
    }
  }
  const int64_t x_elems = plan.n * plan.depth.d_in * plan.hx * plan.wx * plan.c;
  const int64_t y_elems = plan.n * plan.depth.d_out * plan.hy * plan.wy * plan.k;
  const int64_t kdim = plan.Taps() * (plan.c / plan.groups);
  if (x_elems > gpu::kMaxIndex || y_elems > gpu::kMaxIndex || kdim > gpu::kMaxIndex) {
    return NotApplicable(solver, "tensors above 2^31 elements");
  }
  return absl::OkStatus();
}

absl::Status CheckValid(std::string_view solver, const Target& target, const ConvPlan& fwd, const PerfConfig& config) {
  const TmaParams t = TmaParams::Of(Space(), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(solver, config, why); };
  if (t.pingpong == 1 && t.wg_m != 1) return invalid("PINGPONG needs WG_M 1 (each consumer owns whole tiles)");
  if (t.fix_sizes == 1 && !Unphased(fwd)) return invalid("FIX_SIZES needs one output phase");
  if (t.fix_sizes == 1 && fwd.spatial3) return invalid("FIX_SIZES with 3-D problems (sizes stay arguments)");
  if (t.tb_k == 32 && !HalfKTilePays(fwd)) return invalid("TB_K 32 only where C/G % 64 is 1..32");
  if (t.tb_n == 32 && !NarrowNTilePays(fwd)) return invalid("TB_N 32 only where K/G <= 32");
  if (!FitNTilePays(fwd, t.tb_n)) return invalid("TB_N between powers of two only where it tiles K/G better");
  if ((t.tb_n / t.split_k) % 16 != 0) return invalid("each block of a split tile writes whole 16-column groups");
  const int wg_rows = t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("TB_M / WG_M must be a multiple of 64 (wgmma m64)");
  // Accumulators: (TB_M / WG_M) x TB_N FP32 over 128 threads; more than 128 spills.
  if (wg_rows * t.tb_n / 128 > 128) return invalid("more than 128 accumulators per thread");
  const uint64_t smem = SharedBytes(t);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  // One block per SM: a ring shallower than the deepest that fits only idles the copy engine.
  if (t.stages + 2 < DeepestStages(target, t)) return invalid("ring far shallower than fits");
  // Ping-pong pays only when a block has tiles to alternate.
  if (t.pingpong == 1 && Tiles(fwd, t.tb_m, t.tb_n) < 2 * static_cast<int64_t>(target.num_cu)) {
    return invalid("PINGPONG with fewer than two tiles per block");
  }
  // Tiles twice the GEMM extent only waste the tensor cores (never prune the smallest tile).
  if (t.tb_n > 64 && t.tb_n / 2 >= fwd.k / fwd.groups) return invalid("TB_N much larger than K/G");
  if (t.tb_m > 64 && t.tb_m / 2 >= fwd.Rows()) return invalid("TB_M much larger than N*Ho*Wo");
  if (Tiles(fwd, t.tb_m, t.tb_n) > int64_t{0x7fffffff}) return invalid("too many tiles");
  if (t.split_k > 1) {
    // Split-K pays where the unsplit tiles leave SMs idle and the k-loop is long: the exchange
    // costs ~1-2 us per tile. Measured (H200, 2026-12-03, ResNet-50's 14x14 and 7x7 layers): 4 %
    // faster with 72 k-tiles (3x3, C = 512), 14-45 % slower with 8 to 36.
    if (t.pingpong == 1) return invalid("SPLIT_K with PINGPONG");
    if (fwd.nchw) return invalid("SPLIT_K with NCHW GEMMs (the kernel's NCHW_1X1 runs whole tiles)");
    if (fwd.spatial3) return invalid("SPLIT_K with 3-D problems (the kernel's SPATIAL3 runs whole tiles)");
    if (Tiles(fwd, t.tb_m, t.tb_n) >= 2 * static_cast<int64_t>(target.num_cu)) {
      return invalid("SPLIT_K with two or more waves of tiles");
    }
    if (KTiles(fwd, t.tb_k) < kMinSplitKTiles) return invalid("SPLIT_K with fewer than 64 k-tiles per tile");
  }
  return absl::OkStatus();
}

PerfConfig Default(const Target& target, const ConvPlan& fwd) {
  const SearchSpace space = Space();
  // The largest tile that still gives most SMs a block (measured: the winners on ResNet-50's
  // 14x14 and 7x7 layers run 0.75-1 waves), else the smallest.
  // Thin GEMMs take the 32-channel k-tile and the 32-wide N tile where those pay.
  // A power-of-two N tile gives way to the fit below it that pads fewer columns in as many N-tiles
  // (K/G = 192: 192 for 256; measured on Inception-v3's C = 80 layer, H200, 2026-12-03: 0.130 ms
  // against 0.162 for the best power of two).
  // Where a tap's last chunk holds 16 channels or fewer (C/G % 64 in 1..16, one phase) the 64-channel
  // k-tile with its 16-channel last copy (LAST_K) beats 32-channel k-tiles (Inception-v3's C = 80:
  // 0.0993 ms, MobileNet-V2's C = 144 and C = 16 layers too; H200, 2026-12-03).
  auto shaped = [&](TmaParams c) {
    c.tb_k = 64;
    if (HalfKTilePays(fwd) && LastK(fwd, c) != 16) c.tb_k = 32;
    if (c.tb_n == 64 && NarrowNTilePays(fwd)) c.tb_n = 32;
    for (int fit : kTbNValues) {
      if (fit > c.tb_n / 2 && fit < c.tb_n && FitNTilePays(fwd, fit) &&
          CeilDiv(fwd.k / fwd.groups, fit) == CeilDiv(fwd.k / fwd.groups, c.tb_n)) {
        c.tb_n = fit;
        break;
      }
    }
    c.stages = DeepestStages(target, c);
    return c;
  };
  const TmaParams candidates[] = {{128, 256, 2, 0}, {256, 128, 2, 0}, {128, 128, 2, 0},
                                  {128, 64, 1, 0},  {64, 128, 1, 0},  {64, 64, 1, 0}};
  for (const TmaParams& candidate : candidates) {
    const TmaParams c = shaped(candidate);
    const PerfConfig config = c.Config(space);
    if (Tiles(fwd, c.tb_m, c.tb_n) * 4 >= target.num_cu * 3 && CheckValid("", target, fwd, config).ok()) {
      return config;
    }
  }
  return shaped({64, 64, 1, 0}).Config(space);  // the smallest: valid for every applicable problem
}

KernelBuild Build(const ConvPlan& fwd, const PerfConfig& config) {
  KernelBuild build;
  build.source = "conv/hopper_tma_fwd.cu";
  build.entries = {"tuna_hopper_tma_fwd", "tuna_flip_filter"};
  const SearchSpace space = Space();
  const TmaParams t = TmaParams::Of(space, config);
  build.options = space.Defines(config);
  // TB_K and SPLIT_K are solver axes (see Space): the kernel reads 64 and 1 unless told.
  if (t.tb_k != 64) build.options.push_back(absl::StrCat("-DTB_K=", t.tb_k));
  if (t.split_k != 1) build.options.push_back(absl::StrCat("-DSPLIT_K=", t.split_k));
  // A tap's last chunk partly past C/G: issue only the k16 steps that hold channels (Inception-v3's
  // C = 80 with TB_K 64: 5 per tap instead of 8). Problems with C/G % TB_K == 0 keep their build.
  if ((fwd.c / fwd.groups) % t.tb_k != 0) build.options.push_back("-DPARTIAL_K=1");
  // ... and where that chunk holds 32 channels or fewer, copy only those (C = 80: 64 + 16 per tap
  // instead of 128).
  if (const int last_k = LastK(fwd, t); last_k != 0) build.options.push_back(absl::StrCat("-DLAST_K=", last_k));
  build.options.push_back(gpu::DTypeOption(fwd.data_type));
  build.options.push_back(Unphased(fwd) ? "-DPHASED=0" : "-DPHASED=1");
  if (fwd.flip_w) build.options.push_back("-DFLIP_W=1");
  if (fwd.nchw) build.options.push_back("-DNCHW_1X1=1");
  if (fwd.trans_a) build.options.push_back("-DTRANS_A=1");
  if (fwd.spatial3) build.options.push_back("-DSPATIAL3=1");
  // Whole 16-byte output chunks: the epilogue drops its scalar tail (1.3 % on ResNet-50's forward
  // file, H100, 2026-11-25). Every real network's channel counts qualify, so the build is shared.
  if (fwd.k % 8 == 0 && (fwd.k / fwd.groups) % 8 == 0) build.options.push_back("-DVEC_OUT=1");
  if (t.fix_sizes == 1) {
    build.options.push_back("-DFIX_SIZES=1");
    const std::vector<int32_t> words = PhaseWords(fwd, t.tb_m, t.tb_n);  // one phase, then the count
    build.options.push_back(absl::StrCat("-DTUNA_FIX_PHASE=", absl::StrJoin(words.begin(), words.end() - 1, ",")));
    const std::pair<const char*, int64_t> sizes[] = {
        {"N", fwd.n}, {"CG", fwd.c / fwd.groups}, {"K", fwd.k}, {"HY", fwd.hy}, {"WY", fwd.wy},
        {"R", fwd.r}, {"S", fwd.s}, {"G", fwd.groups}, {"KG", fwd.k / fwd.groups}};
    for (const auto& [name, v] : sizes) build.options.push_back(absl::StrCat("-DTUNA_FIX_", name, "=", v));
  }
  build.arch_specific = true;  // wgmma, setmaxnreg: sm_90a
  return build;
}

std::optional<PerfConfig> Specialize(const ConvPlan& plan, const PerfConfig& config) {
  const SearchSpace space = Space();
  TmaParams t = TmaParams::Of(space, config);
  if (t.fix_sizes == 1 || !Unphased(plan) || plan.spatial3) return std::nullopt;
  t.fix_sizes = 1;
  return t.Config(space);
}

Launch ConvLaunch(const Target& target, const ConvPlan& plan, const PerfConfig& config, BufferRole x, BufferRole w,
                  int64_t w_offset, BufferRole y) {
  const TmaParams t = TmaParams::Of(Space(), config);
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_hopper_tma_fwd";
  // Persistent: a cluster of SPLIT_K blocks (one tile's k-tiles split among them) per tile.
  const int64_t clusters = std::min<int64_t>(Tiles(plan, t.tb_m, t.tb_n), std::max(1, target.num_cu / t.split_k));
  l.grid.x = static_cast<uint32_t>(clusters * t.split_k);
  l.block.x = static_cast<uint32_t>(t.Threads());
  l.shared_bytes = SharedBytes(t);
  if (plan.nchw) {  // A: w as its (rows x C/G) matrix; B: the images' (C/G x P) matrices
    const int64_t red = plan.c / plan.groups;  // trans_a: the rows inner, 64-row boxes
    l.args.push_back(KernelArg::TensorMap(
        w, plan.trans_a ? MatrixMap(plan.wy, red, t.tb_k, 64) : MatrixMap(red, plan.wy, t.tb_m, t.tb_k), w_offset));
    l.args.push_back(KernelArg::TensorMap(
        x, NchwMap(plan.groups, red, plan.k / plan.groups, t.tb_n % 64 == 0 ? 64 : 32, t.tb_k)));  // kBSlabN
  } else {
    // One im2col map per phase; phases without taps (and the unused slots) repeat a real one.
    const Phase* any = &plan.phases[0];
    for (const Phase& q : plan.phases) {
      if (q.taps_h > 0) any = &q;
    }
    for (int i = 0; i < (Unphased(plan) ? 1 : kMaxPhases); ++i) {
      const bool own = i < static_cast<int>(plan.phases.size()) && plan.phases[i].taps_h > 0;
      l.args.push_back(KernelArg::TensorMap(x, XMap(plan, own ? plan.phases[i] : *any, t.tb_m, t.tb_k)));
    }
    l.args.push_back(KernelArg::TensorMap(w, WMap(plan, t.tb_n, t.tb_k), w_offset));
    if (const int last_k = LastK(plan, t); last_k != 0) {  // the narrow last chunk's maps
      l.args.push_back(KernelArg::TensorMap(x, XMap(plan, plan.phases[0], t.tb_m, last_k)));
      l.args.push_back(KernelArg::TensorMap(w, WMap(plan, t.tb_n, last_k), w_offset));
    }
  }
  l.args.push_back(KernelArg::Words(PhaseWords(plan, t.tb_m, t.tb_n)));
  l.args.push_back(KernelArg::Buffer(y));
  for (int64_t v : {plan.n, plan.c / plan.groups, plan.k, plan.hy, plan.wy, plan.r, plan.s, plan.groups,
                    plan.k / plan.groups}) {
    l.args.push_back(KernelArg::I32(v));
  }
  return l;
}

absl::Status TmaSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = Admits(p); !st.ok()) return st;
  return CheckApplicable(Name(), target, p, PlanOf(p));
}

SearchSpace TmaSolver::Space(const Target&, const Problem&) const { return hopper_tma::Space(); }

PerfConfig TmaSolver::DefaultConfig(const Target& target, const Problem& p) const { return Default(target, PlanOf(p)); }

absl::Status TmaSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  return CheckValid(Name(), target, PlanOf(p), config);
}

std::optional<PerfConfig> TmaSolver::Specialize(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (!IsValid(target, p, config).ok()) return std::nullopt;
  return hopper_tma::Specialize(PlanOf(p), config);
}

}  // namespace tuna::solver::hopper_tma
