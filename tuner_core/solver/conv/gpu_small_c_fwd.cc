#include "tuner_core/solver/conv/gpu_small_c_fwd.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_small_c_common.h"
#include "tuner_core/solver/conv/gpu_small_c_tc_fwd.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;
using small_c::Cg;
using small_c::Kg;
using small_c::NextPow2;

constexpr int64_t kMaxCg = 8;
constexpr int64_t kMaxSharedBytes = 48 * 1024;  // static shared memory of CUDA and HIP
constexpr int64_t kMinThreads = 32, kMaxThreads = 512;
constexpr int64_t kMaxAccumulators = 64;  // PIX * K_PER_THREAD FP32 registers

// The axes by name (the one place a config is decoded).
struct Tile {
  int64_t tb_h = 1, tb_w = 8, tb_k = 4, kpt = 1, pix = 1;  // the smallest: valid when applicable
};

Tile TileOf(const SearchSpace& s, const PerfConfig& c) {
  return {s.Value(c, "TB_H"), s.Value(c, "TB_W"), s.Value(c, "TB_K"), s.Value(c, "K_PER_THREAD"), s.Value(c, "PIX")};
}

PerfConfig ConfigOf(const SearchSpace& s, const Tile& t) {
  return s.Make({{"TB_H", t.tb_h}, {"TB_W", t.tb_w}, {"TB_K", t.tb_k}, {"K_PER_THREAD", t.kpt}, {"PIX", t.pix}});
}

int64_t Threads(const Tile& t) { return (t.tb_k / t.kpt) * (t.tb_h * t.tb_w / t.pix); }

// Shared memory of the kernel's two FP32 arrays (small_c_fwd_impl.h: the patch's planes are
// padded to an odd length).
int64_t SharedBytes(const Problem& p, const Tile& t) {
  return 4 * (Cg(p) * ((small_c::PatchRows(p, t.tb_h) * small_c::PatchCols(p, t.tb_w)) | 1) +
              p.fil[1] * p.fil[2] * Cg(p) * t.tb_k);
}

int64_t GridX(const Problem& p, const Tile& t) { return small_c::PixelTiles(p, t.tb_h, t.tb_w); }
int64_t KTiles(const Problem& p, const Tile& t) { return CeilDiv(Kg(p), t.tb_k); }

}  // namespace

bool SmallCFwdSolver::IsGeneric(const Target& target, const Problem& p) const {
  return SmallCTcFwdSolver().IsApplicable(target, p).ok();
}

absl::Status SmallCFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (!target.IsGpu() && targets_ != SmallCTargets::kGpuAndCpu) return NotApplicable(Name(), "GPU targets only");
  if (absl::Status st = gpu::CheckConvShape(Name(), p, Direction::kForward); !st.ok()) return st;
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only");
  if (Cg(p) > kMaxCg) return NotApplicable(Name(), "more than 8 input channels per group");
  const Dhw o = p.Out();
  const TensorDesc x = p.XDesc(), y = p.YDesc();
  if (x.ElementCount() > gpu::kMaxIndex * int64_t{64} || y.ElementCount() > gpu::kMaxIndex * int64_t{64} ||
      std::max({p.in[1], p.in[2], o[1], o[2]}) > gpu::kMaxIndex / 8) {
    return NotApplicable(Name(), "tensors above 2^37 elements or images above 2^28 pixels");
  }
  const Tile smallest;
  if (SharedBytes(p, smallest) > kMaxSharedBytes) return NotApplicable(Name(), "filter too large for shared memory");
  if (GridX(p, smallest) > gpu::kMaxIndex || p.groups * KTiles(p, smallest) > gpu::kMaxGridYZ) {
    return NotApplicable(Name(), "grid too large");
  }
  return absl::OkStatus();
}

SearchSpace SmallCFwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"TB_H", Pow2Range(1, 16)},
                      {"TB_W", Pow2Range(8, 64)},
                      {"TB_K", Pow2Range(4, 64)},
                      {"K_PER_THREAD", Pow2Range(1, 8)},
                      {"PIX", Pow2Range(1, 8)},
                      // Not searched: the search's builds loop over the filter rows (each ~10x
                      // shorter to compile than unrolled); Specialize unrolls the winner's. Older
                      // params read as 0, the same tile.
                      {"UNROLL_R", {0, 1}, AxisUse::kDefine, /*absent=*/0, /*searched=*/false}});
}

absl::Status SmallCFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  const Tile t = TileOf(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (t.kpt > t.tb_k) return invalid("K_PER_THREAD above TB_K");
  if (t.pix * t.kpt > kMaxAccumulators) return invalid("more than 64 accumulators per thread");
  if (Threads(t) < kMinThreads || Threads(t) > kMaxThreads) return invalid("block not 32..512 threads");
  if (t.tb_k > std::max<int64_t>(4, NextPow2(Kg(p)))) return invalid("TB_K above the group's output channels");
  const Dhw o = p.Out();
  if (t.tb_h > NextPow2(o[1])) return invalid("TB_H above the output height");
  if (t.tb_w > std::max<int64_t>(8, NextPow2(o[2]))) return invalid("TB_W above the output width");
  // Channel loads of one tap: a thread reads K_PER_THREAD filter values per input value, so
  // tiles with one channel per thread and many channels per block only narrow the loads.
  if (t.kpt == 1 && t.tb_k >= 8) return invalid("K_PER_THREAD 1 with TB_K >= 8");
  if (SharedBytes(p, t) > kMaxSharedBytes) return invalid("patch and filter above 48 KiB of shared memory");
  if (GridX(p, t) > gpu::kMaxIndex || p.groups * KTiles(p, t) > gpu::kMaxGridYZ) return invalid("grid too large");
  return absl::OkStatus();
}

PerfConfig SmallCFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  Tile t;
  t.tb_k = std::clamp<int64_t>(NextPow2(Kg(p)), 4, 32);
  t.kpt = std::min<int64_t>(8, t.tb_k);
  // 2-D pixel tiles from 8 x 16 down, 4 pixels a thread first; the first valid one with 128 to
  // 256 threads, else the first valid, else the smallest tile (valid for applicable problems).
  const std::pair<int64_t, int64_t> shapes[] = {{8, 16}, {8, 32}, {16, 16}, {4, 32}, {4, 16}, {8, 8},
                                                {2, 32}, {4, 8},  {2, 16},  {2, 8},  {1, 32}, {1, 16}, {1, 8}};
  std::vector<Tile> valid;
  for (auto [h, w] : shapes) {
    for (int64_t pix : {4, 2, 8, 1}) {
      Tile u = t;
      u.tb_h = h, u.tb_w = w, u.pix = pix;
      if (!IsValid(target, p, ConfigOf(space, u)).ok()) continue;
      if (Threads(u) >= 128 && Threads(u) <= 256) return ConfigOf(space, u);
      valid.push_back(u);
    }
  }
  return ConfigOf(space, valid.empty() ? Tile{} : valid.front());
}

std::optional<PerfConfig> SmallCFwdSolver::Specialize(const Target& target, const Problem& p,
                                                      const PerfConfig& config) const {
  const SearchSpace space = Space(target, p);
  if (space.Value(config, "UNROLL_R") == 1 || p.fil[1] == 1) return std::nullopt;
  const Tile t = TileOf(space, config);
  return space.Make(
      {{"TB_H", t.tb_h}, {"TB_W", t.tb_w}, {"TB_K", t.tb_k}, {"K_PER_THREAD", t.kpt}, {"PIX", t.pix}, {"UNROLL_R", 1}});
}

absl::StatusOr<Solution> SmallCFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                      const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const Tile t = TileOf(space, config);
  KernelBuild build;
  build.source = target.IsGpu() ? "conv/small_c_fwd.cu" : "cpu_conv/small_c_fwd.cc";
  build.options = space.Defines(config);
  for (std::string& o : small_c::GeometryOptions(p, small_c::VectorStores(p, t.kpt))) build.options.push_back(std::move(o));
  build.entries = {"tuna_small_c_fwd"};
  Launch l;
  l.entry = "tuna_small_c_fwd";
  l.grid.x = static_cast<uint32_t>(GridX(p, t));
  l.grid.y = static_cast<uint32_t>(p.groups * KTiles(p, t));
  l.block.x = static_cast<uint32_t>(Threads(t));
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
  const Dhw o = p.Out();
  for (int64_t v : {p.in[1], p.in[2], o[1], o[2], Kg(p), KTiles(p, t)}) l.args.push_back(KernelArg::I32(v));
  for (const TensorDesc& d : {p.XDesc(), p.WDesc(), p.YDesc()}) gpu::Append2dStrides(l.args, d);
  Solution sol;
  sol.kernels.push_back(std::move(build));
  sol.launches.push_back(std::move(l));
  return sol;
}

}  // namespace tuna::solver
