#include "tuner_core/solver/conv/gpu_small_c_tc_fwd.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_small_c_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;
using small_c::Cg;
using small_c::Kg;
using small_c::NextPow2;

constexpr int64_t kMaxCg = 8;
constexpr int64_t kMinThreads = 32, kMaxThreads = 512;
constexpr int64_t kMinPixels = 16, kMaxPixels = 512;
constexpr int64_t kMaxAccumulators = 128;  // FP32 registers of a warp tile per thread
// Persistent blocks launched per multiprocessor (all groups and channel tiles together). Measured on
// the stems (H200, 2026-12-03): 4 beat as many as threads and shared memory allow (up to 16) by
// 10-20 %, though the stems are memory-bound; each block stages the filter slice once.
constexpr int64_t kBlocksPerCu = 4;
constexpr int64_t kMaxPatchLoads = 64;     // patch elements a thread holds in registers (the prefetch)

// The axes by name (the one place a config is decoded).
struct Tile {
  int64_t tb_h = 2, tb_w = 8, tb_n = 8, warp_m = 16, warp_n = 8;
  int64_t a_pairs = 0;
};

// The narrowest channel tile searched: all of K/G up to 64 channels, 64 beyond. A narrower tile
// stages and reads the same patch once per channel tile: on both stems (H200, 2026-12-03, 128
// sampled configs each) the 10 fastest configs all had TB_N = K/G, the best narrower one ranked
// 14th (+21 %, ResNet-50) and 28th (+44 %, Inception-v3).
int64_t MinTbN(const Problem& p) { return std::min<int64_t>(64, std::max<int64_t>(8, NextPow2(Kg(p)))); }

// The smallest tile: valid for every applicable problem.
Tile Smallest(const Problem& p) {
  Tile t;
  t.tb_n = MinTbN(p);
  return t;
}

Tile TileOf(const SearchSpace& s, const PerfConfig& c) {
  return {s.Value(c, "TB_H"),   s.Value(c, "TB_W"),   s.Value(c, "TB_N"),
          s.Value(c, "WARP_M"), s.Value(c, "WARP_N"), s.Value(c, "A_PAIRS")};
}

PerfConfig ConfigOf(const SearchSpace& s, const Tile& t) {
  return s.Make({{"TB_H", t.tb_h},
                 {"TB_W", t.tb_w},
                 {"TB_N", t.tb_n},
                 {"WARP_M", t.warp_m},
                 {"WARP_N", t.warp_n},
                 {"A_PAIRS", t.a_pairs}});
}

int64_t Pixels(const Tile& t) { return t.tb_h * t.tb_w; }
int64_t Threads(const Tile& t) { return 32 * (Pixels(t) / t.warp_m) * (t.tb_n / t.warp_n); }

// A_PAIRS 1 reads two neighbouring patch elements as one word: taps 2i and 2i + 1 of a filter row
// must be neighbours there (no dilation between the filter columns, or an even C/G).
bool PairsFit(const Problem& p) { return p.dilation[2] == 1 || Cg(p) % 2 == 0; }

// The kernel's dynamic shared memory (small_c_tc_fwd.cu): the filter slice in fragment order, the
// tap offsets (per pair with A_PAIRS), and the patch (a word per element with A_PAIRS) or the
// output tile, whichever is larger.
int64_t SharedBytes(const Problem& p, const Tile& t) {
  const int64_t run = t.a_pairs ? CeilDiv(p.fil[2] * Cg(p), 2) * 2 : p.fil[2] * Cg(p);
  const int64_t kpad = CeilDiv(p.fil[1] * run, 16) * 16;
  const int64_t patch = small_c::PatchRows(p, t.tb_h) * small_c::PatchCols(p, t.tb_w) * Cg(p) * (t.a_pairs ? 2 : 1);
  const int64_t stage = CeilDiv(std::max(patch, Pixels(t) * (t.tb_n + 8)), 8) * 8;
  return kpad * t.tb_n * 2 + kpad * 4 / (t.a_pairs ? 2 : 1) + stage * 2;
}

// x's patch rows contiguous in memory (channels-last, channel stride 1, column stride C/G): the
// kernel stages them row by row (-DTUNA_XROWS=1).
bool XRows(const Problem& p) {
  const TensorDesc x = p.XDesc();
  return gpu::IsChannelsLast(p.in_layout) && x.strides[1] == 1 && x.strides[4] == Cg(p);
}

// Patch elements a thread holds in registers: rows spread over the warps, each row over the
// lanes (XRows), else the patch spread over the threads.
int64_t PatchLoads(const Problem& p, const Tile& t) {
  const int64_t rows = small_c::PatchRows(p, t.tb_h), pitch = small_c::PatchCols(p, t.tb_w) * Cg(p);
  if (XRows(p)) return CeilDiv(rows, Threads(t) / 32) * CeilDiv(pitch, 32);
  return CeilDiv(rows * pitch, Threads(t));
}

int64_t Tiles(const Problem& p, const Tile& t) { return small_c::PixelTiles(p, t.tb_h, t.tb_w); }
int64_t KTiles(const Problem& p, const Tile& t) { return CeilDiv(Kg(p), t.tb_n); }

// The largest element offset within one image of `d` (n's stride aside).
int64_t ImageSpan(const TensorDesc& d) {
  int64_t span = 1;
  for (int i : {1, 3, 4}) span += (d.dims[i] - 1) * d.strides[i];
  return span;
}

}  // namespace

absl::Status SmallCTcFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (target.backend != backend::BackendKind::kCuda) return NotApplicable(Name(), "CUDA only (inline PTX: mma.sync)");
  if (target.SmVersion() < 80) return NotApplicable(Name(), "requires sm_80 or newer");
  if (absl::Status st = gpu::CheckCommon(Name(), target, p, Direction::kForward); !st.ok()) return st;
  if (p.data_type != DataType::kFp16 && p.data_type != DataType::kBf16) return NotApplicable(Name(), "FP16/BF16 only");
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only");
  if (Cg(p) > kMaxCg) return NotApplicable(Name(), "more than 8 input channels per group");
  if (ImageSpan(p.XDesc()) > gpu::kMaxIndex || ImageSpan(p.YDesc()) > gpu::kMaxIndex) {
    return NotApplicable(Name(), "one image above 2^31 elements");
  }
  const Tile smallest = Smallest(p);
  if (SharedBytes(p, smallest) > static_cast<int64_t>(target.max_shared_bytes_per_block) ||
      PatchLoads(p, smallest) > kMaxPatchLoads) {
    return NotApplicable(Name(), "filter too large for shared memory and registers");
  }
  if (Tiles(p, smallest) > gpu::kMaxIndex || p.groups * KTiles(p, smallest) > gpu::kMaxGridYZ) {
    return NotApplicable(Name(), "grid too large");
  }
  return absl::OkStatus();
}

SearchSpace SmallCTcFwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"TB_H", Pow2Range(1, 16)},
                      {"TB_W", Pow2Range(8, 64)},
                      {"TB_N", Pow2Range(8, 128)},
                      {"WARP_M", Pow2Range(16, 64)},
                      {"WARP_N", Pow2Range(8, 64)},
                      {"A_PAIRS", {0, 1}}});
}

absl::Status SmallCTcFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  const Tile t = TileOf(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (t.warp_m > Pixels(t) || t.warp_n > t.tb_n) return invalid("warp tile above the block tile");
  if (t.a_pairs == 1 && !PairsFit(p)) return invalid("A_PAIRS with dilated filter columns and an odd C/G");
  if (Pixels(t) < kMinPixels || Pixels(t) > kMaxPixels) return invalid("tile not 16..512 pixels");
  if (Threads(t) < kMinThreads || Threads(t) > kMaxThreads) return invalid("block not 32..512 threads");
  if (t.warp_m / 16 * (t.warp_n / 8) * 4 > kMaxAccumulators) return invalid("more than 128 accumulators per thread");
  if (t.tb_n > std::max<int64_t>(8, NextPow2(Kg(p)))) return invalid("TB_N above the group's output channels");
  if (t.tb_n < MinTbN(p)) return invalid("TB_N splits the group's output channels below 64");
  const Dhw o = p.Out();
  if (t.tb_h > std::max<int64_t>(2, NextPow2(o[1]))) return invalid("TB_H above the output height");
  if (t.tb_w > std::max<int64_t>(8, NextPow2(o[2]))) return invalid("TB_W above the output width");
  if (SharedBytes(p, t) > static_cast<int64_t>(target.max_shared_bytes_per_block)) {
    return invalid("shared memory above the target's");
  }
  if (PatchLoads(p, t) > kMaxPatchLoads) return invalid("more than 64 patch elements per thread");
  if (Tiles(p, t) > gpu::kMaxIndex || p.groups * KTiles(p, t) > gpu::kMaxGridYZ) return invalid("grid too large");
  return absl::OkStatus();
}

PerfConfig SmallCTcFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  // The stems' measured best shapes (H200, 2026-12-03, 128 sampled configs each, with x staged
  // by rows): every output channel in one warp; 64-channel tiles 8 x 8 pixels with 16-pixel warps
  // (ResNet-50's 7x7 stem 8,8,64,16,64,1), narrower ones 4 x 32 pixels with 64-pixel warps
  // (Inception-v3's 3x3 stem 4,32,32,64,32,0: 0.0394 ms, 17 % faster than 16 x 8); A_PAIRS where
  // the reduction has 4 or more k-steps (the 7x7 stem's 10; the 3x3 stem's 2 gain nothing from it
  // and pay for the doubled patch stores).
  Tile t;
  t.tb_n = std::clamp<int64_t>(NextPow2(Kg(p)), 8, 64);
  t.warp_n = t.tb_n;
  const int64_t preferred_warp_m = t.tb_n >= 64 ? 16 : 64;
  const int64_t run = CeilDiv(p.fil[2] * Cg(p), 2) * 2;
  t.a_pairs = PairsFit(p) && p.fil[1] * run > 48 ? 1 : 0;
  const std::pair<int64_t, int64_t> preferred = t.tb_n >= 64 ? std::pair<int64_t, int64_t>{8, 8} : std::pair<int64_t, int64_t>{4, 32};
  const std::pair<int64_t, int64_t> shapes[] = {preferred, {8, 16}, {4, 16}, {8, 32}, {4, 32}, {2, 32},
                                                {4, 8},    {2, 16}, {2, 8},  {1, 64}, {1, 32}, {1, 16}};
  // The first valid shape with 64 to 256 threads, else the first valid, else the smallest tile
  // (valid for applicable problems).
  std::vector<Tile> valid;
  for (auto [h, w] : shapes) {
    for (int64_t warp_m : {preferred_warp_m, int64_t{64}, int64_t{32}, int64_t{16}}) {
      Tile u = t;
      u.tb_h = h, u.tb_w = w, u.warp_m = warp_m;
      if (!IsValid(target, p, ConfigOf(space, u)).ok()) continue;
      if (Threads(u) >= 64 && Threads(u) <= 256) return ConfigOf(space, u);
      valid.push_back(u);
    }
  }
  return ConfigOf(space, valid.empty() ? Smallest(p) : valid.front());
}

absl::StatusOr<Solution> SmallCTcFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const Tile t = TileOf(space, config);
  KernelBuild build;
  build.source = "conv/small_c_tc_fwd.cu";
  build.options = space.Defines(config);
  for (std::string& o : small_c::GeometryOptions(p, small_c::VectorStores(p, 8))) build.options.push_back(std::move(o));
  build.options.push_back(absl::StrCat("-DTUNA_XROWS=", XRows(p) ? 1 : 0));
  build.entries = {"tuna_small_c_tc_fwd"};
  const int64_t tiles = Tiles(p, t), grid_y = p.groups * KTiles(p, t);
  Launch l;
  l.entry = "tuna_small_c_tc_fwd";
  l.grid.x = static_cast<uint32_t>(std::clamp<int64_t>(kBlocksPerCu * target.num_cu / grid_y, 1, tiles));
  l.grid.y = static_cast<uint32_t>(grid_y);
  l.block.x = static_cast<uint32_t>(Threads(t));
  l.shared_bytes = static_cast<size_t>(SharedBytes(p, t));
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
  const Dhw o = p.Out();
  for (int64_t v : {p.in[1], p.in[2], o[1], o[2], Kg(p), KTiles(p, t), tiles}) l.args.push_back(KernelArg::I32(v));
  for (const TensorDesc& d : {p.XDesc(), p.WDesc(), p.YDesc()}) gpu::Append2dStrides(l.args, d);
  Solution sol;
  sol.kernels.push_back(std::move(build));
  sol.launches.push_back(std::move(l));
  return sol;
}

}  // namespace tuna::solver
