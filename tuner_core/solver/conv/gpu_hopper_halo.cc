#include "tuner_core/solver/conv/gpu_hopper_halo.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace hopper_halo {
namespace {

using gpu::CeilDiv;

int64_t TilesOf(const Problem& p, const HaloParams& t) {
  const Dhw o = p.Out();
  return p.n * CeilDiv(o[1], t.TileH()) * CeilDiv(o[2], t.tile_w);
}

// x as (C, W, H, N), boxes of TB_K channels x TILE_W pixels x (TILE_H + R - 1) rows of one image.
backend::TensorMapSpec XMap(const Problem& p, const HaloParams& t) {
  backend::TensorMapSpec m;
  m.rank = 4;
  m.element_bytes = 2;
  const uint64_t c = p.c, w = p.in[2], h = p.in[1];
  m.dims = {c, w, h, static_cast<uint64_t>(p.n), 0};
  m.strides_bytes = {c * 2, w * c * 2, h * w * c * 2, 0};
  m.box = {static_cast<uint32_t>(TbK(p)), static_cast<uint32_t>(t.tile_w),
           static_cast<uint32_t>(t.TileH() + p.fil[1] - 1), 1, 0};
  m.swizzle = gpu::RowSwizzle(TbK(p));
  return m;
}

// w (K, R, S, C) as (C, K, R*S): per channel block one box of TB_K channels x TB_N rows x every
// tap, so that each tap's rows land together (K-major) in shared memory.
backend::TensorMapSpec WMap(const Problem& p) {
  backend::TensorMapSpec m;
  m.rank = 3;
  m.element_bytes = 2;
  const uint64_t c = p.c, taps = static_cast<uint64_t>(p.fil[1] * p.fil[2]);
  m.dims = {c, static_cast<uint64_t>(p.k), taps, 0, 0};
  m.strides_bytes = {taps * c * 2, c * 2, 0, 0};
  m.box = {static_cast<uint32_t>(TbK(p)), static_cast<uint32_t>(TbN(p)), static_cast<uint32_t>(taps), 0, 0};
  m.swizzle = gpu::RowSwizzle(TbK(p));
  return m;
}

}  // namespace

HaloParams HaloParams::Of(const SearchSpace& s, const PerfConfig& c) {
  return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TILE_W")),
          static_cast<int>(s.Value(c, "WG_M")), static_cast<int>(s.Value(c, "PINGPONG"))};
}

PerfConfig HaloParams::Config(const SearchSpace& s) const {
  return s.Make({{"TB_M", tb_m}, {"TILE_W", tile_w}, {"WG_M", wg_m}, {"PINGPONG", pingpong}});
}

SearchSpace Space() {
  return SearchSpace({{"TB_M", {128, 256}}, {"TILE_W", {8, 16, 32, 64}}, {"WG_M", {1, 2}}, {"PINGPONG", {0, 1}}});
}

int TbN(const Problem& p) { return static_cast<int>(CeilDiv(p.k, 32) * 32); }

int TbK(const Problem& p) {
  const int64_t least = CeilDiv(p.c, 16) * 16;  // no block pads more than 16-channel blocks would
  for (int tb_k : {64, 32}) {
    if (CeilDiv(p.c, tb_k) * tb_k == least) return tb_k;
  }
  return 16;
}

int KBlocks(const Problem& p) { return static_cast<int>(CeilDiv(p.c, TbK(p))); }

namespace {

// The parts of shared memory that do not depend on the ring: alignment, filter, epilogue slabs,
// mbarriers (w_full, then full and empty for kMaxStages slots).
uint64_t FixedBytes(const Problem& p, const HaloParams& t) {
  const uint64_t row = static_cast<uint64_t>(TbK(p)) * 2;
  const uint64_t filter = static_cast<uint64_t>(KBlocks(p)) * p.fil[1] * p.fil[2] * TbN(p) * row;
  const uint64_t epi_cols = TbN(p) % 64 == 0 ? 64 : 32;
  const uint64_t epi = static_cast<uint64_t>(t.Consumers()) * 4 * 16 * (epi_cols + 8) * 2;
  return 1024 + filter + epi + 8 + 16 * kMaxStages;
}

// One channel block of one copy: TILE_W x (TILE_H + R - 1) pixels of TB_K halves.
uint64_t BlockBytes(const Problem& p, const HaloParams& t) {
  return static_cast<uint64_t>(t.tile_w) * (t.TileH() + p.fil[1] - 1) * TbK(p) * 2;
}

}  // namespace

int Stages(const Problem& p, const HaloParams& t, uint64_t shared_limit) {
  const uint64_t fixed = FixedBytes(p, t);
  if (fixed >= shared_limit) return 0;
  return static_cast<int>(std::min<uint64_t>(kMaxStages, (shared_limit - fixed) / BlockBytes(p, t)));
}

uint64_t SharedBytes(const Problem& p, const HaloParams& t, int stages) {
  return FixedBytes(p, t) + static_cast<uint64_t>(stages) * BlockBytes(p, t);
}

}  // namespace hopper_halo

using hopper_halo::HaloParams;

absl::Status HopperHaloFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  const std::string_view name = Name();
  if (absl::Status st = gpu::CheckSm90aNhwc16(name, target, p, Direction::kForward); !st.ok()) return st;
  if (p.groups != 1) return NotApplicable(name, "one group only");
  if (p.stride[1] != 1 || p.stride[2] != 1 || p.dilation[1] != 1 || p.dilation[2] != 1) {
    return NotApplicable(name, "stride 1 and dilation 1 only (each copy is a dense box of rows)");
  }
  if (p.c % 8 != 0) return NotApplicable(name, "C must be a multiple of 8 (16-byte pixel rows)");
  if (p.k > 256) return NotApplicable(name, "K above 256 (one N tile holds every output channel)");
  if (p.fil[1] * p.fil[2] > 256 || p.fil[1] > 64) return NotApplicable(name, "filter above the copy engine's box");
  const Dhw o = p.Out();
  if (o[1] < 1 || o[2] < 1) return NotApplicable(name, "empty output");
  if (p.n * p.in[1] * p.in[2] * p.c > gpu::kMaxIndex || p.n * o[1] * o[2] * p.k > gpu::kMaxIndex) {
    return NotApplicable(name, "tensors above 2^31 elements");
  }
  // The filter and two copy blocks of the smallest tiles (128 pixels, one consumer) must fit.
  int most = 0;
  for (int tile_w : {8, 16, 32, 64}) {
    most = std::max(most, hopper_halo::Stages(p, HaloParams{128, tile_w, 1, 0}, target.max_shared_bytes_per_block));
  }
  if (most < 2) return NotApplicable(name, "the filter and two copy blocks above shared memory");
  return absl::OkStatus();
}

SearchSpace HopperHaloFwdSolver::Space(const Target&, const Problem&) const { return hopper_halo::Space(); }

absl::Status HopperHaloFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  const HaloParams t = HaloParams::Of(hopper_halo::Space(), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (t.pingpong == 1 && t.wg_m != 1) return invalid("PINGPONG needs WG_M 1 (each consumer owns whole tiles)");
  const int wg_rows = t.pingpong == 1 ? t.tb_m : t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("a consumer's rows must be whole m64 slabs");
  if (wg_rows * hopper_halo::TbN(p) / 128 > 128) return invalid("more than 128 accumulators per thread");
  if (t.tb_m % t.tile_w != 0) return invalid("TILE_W must divide TB_M");
  const int stages = hopper_halo::Stages(p, t, target.max_shared_bytes_per_block);
  if (t.pingpong == 1 && stages < 4) return invalid("PINGPONG needs a ring of 4 copy blocks (2 per consumer)");
  if (stages < 2) {
    return invalid(absl::StrCat("the filter and two copy blocks need ", hopper_halo::SharedBytes(p, t, 2),
                                " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  const Dhw o = p.Out();
  // Tile rows or columns twice the output's only compute zeros (never prune the narrowest).
  if (t.tile_w > 8 && t.tile_w / 2 >= o[2]) return invalid("TILE_W much wider than Wo");
  if (t.TileH() > 2 && t.TileH() / 2 >= o[1] && t.tile_w < 64) return invalid("TILE_H much taller than Ho");
  if (t.TileH() + p.fil[1] - 1 > 256) return invalid("halo rows above the copy engine's box");
  if (t.pingpong == 1 && hopper_halo::TilesOf(p, t) < 2 * static_cast<int64_t>(target.num_cu)) {
    return invalid("PINGPONG with fewer than two tiles per block");
  }
  return absl::OkStatus();
}

PerfConfig HopperHaloFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = hopper_halo::Space();
  // Measured (H200, 2026-12-03, every config of 12 layers screened, bench/kernels/data/
  // halo16_fwd.txt): 128 x 8 with two consumers is within 3-10 % of the best on the 35x35 and
  // 56x56 layers (1.07x the best in geomean, the best of any one config) but 1.2-1.4x on the
  // 147x147 layers, where 256 x 8 ping-pong (thousands of tiles) is the best.
  const bool many_tiles = hopper_halo::TilesOf(p, HaloParams{256, 8, 1, 1}) >= 8 * int64_t{target.num_cu};
  std::vector<HaloParams> order = {{128, 8, 2, 0}, {128, 16, 2, 0}, {128, 8, 1, 0}, {128, 16, 1, 0}};
  if (many_tiles) order.insert(order.begin(), HaloParams{256, 8, 1, 1});
  for (const HaloParams& c : order) {
    if (IsValid(target, p, c.Config(space)).ok()) return c.Config(space);
  }
  return HaloParams{128, 8, 1, 0}.Config(space);
}

absl::StatusOr<Solution> HopperHaloFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                          const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = hopper_halo::Space();
  const HaloParams t = HaloParams::Of(space, config);
  KernelBuild build = gpu::TunedBuild("conv/hopper_halo_fwd.cu", {"tuna_hopper_halo_fwd"}, space, config, p.data_type);
  build.options.push_back(absl::StrCat("-DTB_N=", hopper_halo::TbN(p)));
  build.options.push_back(absl::StrCat("-DTB_K=", hopper_halo::TbK(p)));
  if (p.k % 8 == 0) build.options.push_back("-DVEC_OUT=1");
  build.arch_specific = true;  // wgmma, setmaxnreg: sm_90a
  Solution sol;
  sol.kernels.push_back(std::move(build));
  const Dhw o = p.Out();
  const int64_t tiles = hopper_halo::TilesOf(p, t);
  const int stages = hopper_halo::Stages(p, t, target.max_shared_bytes_per_block);
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_hopper_halo_fwd";
  l.grid.x = static_cast<uint32_t>(std::min<int64_t>(tiles, target.num_cu));
  l.block.x = static_cast<uint32_t>(t.Threads());
  l.shared_bytes = hopper_halo::SharedBytes(p, t, stages);
  l.args.push_back(KernelArg::TensorMap(BufferRole::kX, hopper_halo::XMap(p, t)));
  l.args.push_back(KernelArg::TensorMap(BufferRole::kW, hopper_halo::WMap(p)));
  l.args.push_back(KernelArg::Buffer(BufferRole::kY));
  for (int64_t v : {p.n, o[1], o[2], p.k, p.fil[1], p.fil[2], p.pad[1], p.pad[2], gpu::CeilDiv(o[1], t.TileH()),
                    gpu::CeilDiv(o[2], t.tile_w), int64_t{hopper_halo::KBlocks(p)}, int64_t{stages}}) {
    l.args.push_back(KernelArg::I32(v));
  }
  sol.launches.push_back(std::move(l));
  return sol;
}

}  // namespace tuna::solver
