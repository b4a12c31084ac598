#include "tuner_core/solver/conv/gpu_depthwise.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

constexpr int64_t kMaxMultiplier = 8;
// Floats a thread keeps live (LiveFloats): above it the kernel spills. The window loops are
// unrolled at compile time, so this is the kernel's register bound.
constexpr int64_t kMaxLiveFloats = 192;
constexpr int64_t kMaxVectorBytes = 16;
constexpr int64_t kMaxSplit = 256;

// The axes by name (the one place a config is decoded).
struct Tile {
  int64_t thread_h = 1, thread_w = 1, thread_c = 1, steps_h = 1, threads = 128;  // F/B
  int64_t tb_cv = 1, split = 1;                                                    // W
};

Tile TileOf(Direction dir, const SearchSpace& s, const PerfConfig& c) {
  Tile t;
  t.thread_h = s.Value(c, "THREAD_H");
  t.thread_w = s.Value(c, "THREAD_W");
  t.thread_c = s.Value(c, "THREAD_C");
  t.threads = s.Value(c, "TB_THREADS");
  if (dir == Direction::kBackwardWeights) {
    t.tb_cv = s.Value(c, "TB_CV");
    t.split = s.Value(c, "SPLIT");
  } else {
    t.steps_h = s.Value(c, "STEPS_H");
  }
  return t;
}

PerfConfig ConfigOf(Direction dir, const SearchSpace& s, const Tile& t) {
  if (dir == Direction::kBackwardWeights) {
    return s.Make({{"THREAD_H", t.thread_h}, {"THREAD_W", t.thread_w}, {"THREAD_C", t.thread_c},
                   {"TB_CV", t.tb_cv}, {"TB_THREADS", t.threads}, {"SPLIT", t.split}});
  }
  return s.Make({{"THREAD_H", t.thread_h}, {"THREAD_W", t.thread_w}, {"THREAD_C", t.thread_c},
                 {"STEPS_H", t.steps_h}, {"TB_THREADS", t.threads}});
}

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t Multiplier(const Problem& p) { return p.k / p.c; }
int64_t Taps(const Problem& p) { return p.fil[1] * p.fil[2]; }
bool BothChannelsLast(const Problem& p) {
  return gpu::IsChannelsLast(p.in_layout) && gpu::IsChannelsLast(p.out_layout);
}

// Channels a thread's vector runs along: the output's (K) forward and backward weights, dx's (C)
// backward data.
int64_t VectorChannels(Direction dir, const Problem& p) { return dir == Direction::kBackwardData ? p.c : p.k; }

// The image a thread tile walks: y forward, dx backward data.
Dhw WalkedImage(Direction dir, const Problem& p) { return dir == Direction::kBackwardData ? p.in : p.Out(); }

// Distinct offsets i*step + r*dil (i < t, r < fil): the window rows (columns) a thread tile reads.
int64_t WindowUsed(int64_t t, int64_t fil, int64_t step, int64_t dil) {
  std::vector<bool> seen((t - 1) * step + (fil - 1) * dil + 1, false);
  int64_t used = 0;
  for (int64_t i = 0; i < t; ++i)
    for (int64_t r = 0; r < fil; ++r)
      if (!seen[i * step + r * dil]) seen[i * step + r * dil] = true, ++used;
  return used;
}

// Floats a thread keeps live: weights, accumulators and its whole input window (all loads are
// issued before the first multiply).
int64_t LiveFloats(Direction dir, const Problem& p, const Tile& t) {
  const int64_t m = Multiplier(p);
  const int64_t cols = WindowUsed(t.thread_w, p.fil[2], p.stride[2], p.dilation[2]);
  switch (dir) {
    case Direction::kForward:
      return t.thread_c * (Taps(p) + t.thread_h * t.thread_w +
                           WindowUsed(t.thread_h, p.fil[1], p.stride[1], p.dilation[1]) * cols);
    case Direction::kBackwardData: {
      // dy rows (columns) reached: about tile / stride + filter span / stride.
      const int64_t rows_b = t.thread_h / p.stride[1] + CeilDiv((p.fil[1] - 1) * p.dilation[1] + 1, p.stride[1]);
      const int64_t cols_b = t.thread_w / p.stride[2] + CeilDiv((p.fil[2] - 1) * p.dilation[2] + 1, p.stride[2]);
      return t.thread_c * (m * Taps(p) + t.thread_h * t.thread_w + m * std::min(rows_b * cols_b, Taps(p) * t.thread_h * t.thread_w));
    }
    default: return t.thread_c * (Taps(p) + t.thread_h * t.thread_w + cols);  // one window row at a time
  }
}

// F/B: thread work items (the grid's threads before rounding to blocks).
int64_t WorkItems(Direction dir, const Problem& p, const Tile& t) {
  const Dhw img = WalkedImage(dir, p);
  return p.n * (VectorChannels(dir, p) / t.thread_c) * CeilDiv(img[2], t.thread_w) *
         CeilDiv(img[1], t.thread_h * t.steps_h);
}

// W: pixel tiles (THREAD_H x THREAD_W outputs) and channel tiles (grid.x).
int64_t Strips(const Problem& p, const Tile& t) {
  const Dhw o = p.Out();
  return p.n * CeilDiv(o[1], t.thread_h) * CeilDiv(o[2], t.thread_w);
}
int64_t ChannelTiles(const Problem& p, const Tile& t) { return CeilDiv(p.k / t.thread_c, t.tb_cv); }

std::vector<std::string> DerivedOptions(Direction dir, const Problem& p) {
  const int d = dir == Direction::kForward ? 0 : dir == Direction::kBackwardData ? 1 : 2;
  return {absl::StrCat("-DTUNA_DIR=", d), gpu::DTypeOption(p.data_type),
          absl::StrCat("-DTUNA_NHWC=", BothChannelsLast(p) ? 1 : 0), absl::StrCat("-DTUNA_MULT=", Multiplier(p)),
          absl::StrCat("-DTUNA_FR=", p.fil[1]), absl::StrCat("-DTUNA_FS=", p.fil[2]),
          absl::StrCat("-DTUNA_SH=", p.stride[1]), absl::StrCat("-DTUNA_SW=", p.stride[2]),
          absl::StrCat("-DTUNA_DH=", p.dilation[1]), absl::StrCat("-DTUNA_DW=", p.dilation[2]),
          absl::StrCat("-DTUNA_PH=", p.pad[1]), absl::StrCat("-DTUNA_PW=", p.pad[2])};
}

// Sizes then the element strides of x (n, c, h, w), w (k, r, s) and y (n, k, h, w).
void AppendSizesAndStrides(std::vector<KernelArg>& args, const Problem& p, int64_t channels, int64_t loop_arg) {
  const Dhw o = p.Out();
  for (int64_t v : {p.n, channels, p.in[1], p.in[2], o[1], o[2], loop_arg}) args.push_back(KernelArg::I32(v));
  gpu::Append2dStrides(args, p.XDesc());
  const TensorDesc w = p.WDesc();
  for (int d : {0, 3, 4}) args.push_back(KernelArg::I64(w.strides[d]));  // one channel per group
  gpu::Append2dStrides(args, p.YDesc());
}

}  // namespace

DepthwiseSolver::DepthwiseSolver(Direction direction)
    : direction_(direction),
      name_(direction == Direction::kForward        ? "TunaDepthwiseFwd"
            : direction == Direction::kBackwardData ? "TunaDepthwiseBwd"
                                                    : "TunaDepthwiseWrw") {}

absl::Status DepthwiseSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = gpu::CheckCommon(Name(), target, p, direction_); !st.ok()) return st;
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only");
  if (p.groups < 2 || p.groups != p.c) return NotApplicable(Name(), "depthwise only (groups = C > 1)");
  if (Multiplier(p) > kMaxMultiplier) return NotApplicable(Name(), "channel multiplier K/C above 8");
  if (direction_ == Direction::kBackwardData) {
    for (int i = 1; i <= 2; ++i) {
      const int64_t s = p.stride[i];
      if (s != 1 && s != 2 && s != 3 && s != 4 && s != 6) return NotApplicable(Name(), "stride not in {1,2,3,4,6}");
    }
  }
  const Dhw o = p.Out();
  if (p.n * p.k * std::max(p.in[1] * p.in[2], o[1] * o[2]) > gpu::kMaxIndex * int64_t{64}) {
    return NotApplicable(Name(), "more than 2^37 elements");
  }
  // The smallest tile must fit the register bound.
  Tile smallest;
  if (direction_ == Direction::kBackwardData) smallest.thread_h = p.stride[1], smallest.thread_w = p.stride[2];
  if (LiveFloats(direction_, p, smallest) > kMaxLiveFloats) {
    return NotApplicable(Name(), "filter too large for register windows");
  }
  return absl::OkStatus();
}

SearchSpace DepthwiseSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  switch (direction_) {
    case Direction::kForward:
      return SearchSpace({{"THREAD_H", Pow2Range(1, 8)},
                          {"THREAD_W", Pow2Range(1, 4)},
                          {"THREAD_C", Pow2Range(1, 8)},
                          {"STEPS_H", Pow2Range(1, 8), AxisUse::kSolver},
                          {"TB_THREADS", Pow2Range(128, 256)}});
    case Direction::kBackwardData:
      return SearchSpace({{"THREAD_H", {1, 2, 3, 4, 6, 8}},
                          {"THREAD_W", {1, 2, 3, 4, 6}},
                          {"THREAD_C", Pow2Range(1, 8)},
                          {"STEPS_H", Pow2Range(1, 8), AxisUse::kSolver},
                          {"TB_THREADS", Pow2Range(128, 256)}});
    default:
      return SearchSpace({{"THREAD_H", Pow2Range(1, 4)},
                          {"THREAD_W", Pow2Range(1, 4)},
                          {"THREAD_C", Pow2Range(1, 8)},
                          {"TB_CV", Pow2Range(1, 32)},
                          {"TB_THREADS", Pow2Range(128, 512)},
                          {"SPLIT", Pow2Range(1, kMaxSplit), AxisUse::kSolver}});
  }
}

absl::Status DepthwiseSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  const Tile t = TileOf(direction_, Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(name_, config, why); };
  if (t.thread_c > 1) {
    if (!BothChannelsLast(p)) return invalid("THREAD_C > 1 needs NHWC");
    if (VectorChannels(direction_, p) % t.thread_c != 0) return invalid("THREAD_C does not divide the channels");
    if (t.thread_c * static_cast<int64_t>(DataTypeSize(p.data_type)) > kMaxVectorBytes) {
      return invalid("vector wider than 16 bytes");
    }
  }
  const int64_t esize = static_cast<int64_t>(DataTypeSize(p.data_type));
  if (BothChannelsLast(p) && t.thread_c * esize < 4 && VectorChannels(direction_, p) % (4 / esize) == 0) {
    Tile wider = t;
    wider.thread_c = 4 / esize;
    if (LiveFloats(direction_, p, wider) <= kMaxLiveFloats) return invalid("loads under 4 bytes where 4 fit");
  }
  if (LiveFloats(direction_, p, t) > kMaxLiveFloats) return invalid("too many live registers");
  if (direction_ == Direction::kBackwardWeights) {
    if (t.tb_cv > 1 && !BothChannelsLast(p)) return invalid("TB_CV > 1 needs NHWC");
    if (t.tb_cv > t.threads / 4) return invalid("fewer than 4 pixel threads per lane");
    const int64_t cvs = p.k / t.thread_c;
    if (t.tb_cv > 1 && ChannelTiles(p, t) * t.tb_cv * 4 > cvs * 5) return invalid("over 25 % of the lanes idle");
    const int64_t pix_threads = t.threads / t.tb_cv;
    if (t.thread_h * t.thread_w > 8 || t.thread_h * t.thread_w < 2) return invalid("THREAD_H * THREAD_W not in 2..8");
    const Dhw o = p.Out();
    if (t.thread_h > 1 && t.thread_h > NextPow2(o[1])) return invalid("THREAD_H above the output height");
    // Lanes read whole 32-byte sectors where the channels allow.
    const int64_t lane_bytes = t.tb_cv * t.thread_c * static_cast<int64_t>(DataTypeSize(p.data_type));
    if (t.tb_cv > 1 && lane_bytes < 32 && t.tb_cv * t.thread_c < p.k) return invalid("lanes cover under 32 bytes");
    // Splits only to fill the GPU: grids from one wave of blocks to 8 waves (the pixel loop is
    // latency-bound: it needs many resident threads, not long per-thread loops).
    const int64_t blocks = ChannelTiles(p, t) * t.split;
    if (t.split > 1 && (CeilDiv(Strips(p, t), t.split) < 2 * pix_threads || blocks >= 8 * target.num_cu ||
                        blocks < target.num_cu)) {
      return invalid("SPLIT leaves under 2 strips per pixel thread, or more blocks than fill the GPU");
    }
    return absl::OkStatus();
  }
  const Dhw img = WalkedImage(direction_, p);
  if (direction_ == Direction::kBackwardData) {
    // A multiple of the stride (compile-time phases), by a power of two.
    for (auto [v, s] : {std::pair{t.thread_h, p.stride[1]}, std::pair{t.thread_w, p.stride[2]}}) {
      if (v % s != 0 || NextPow2(v / s) != v / s) return invalid("thread tile not the stride times a power of 2");
    }
  }
  if (direction_ == Direction::kForward && t.thread_h > 1 && t.thread_h > NextPow2(img[1])) {
    return invalid("THREAD_H above the image height");
  }
  if (t.steps_h > 1 && t.thread_h * t.steps_h > NextPow2(img[1])) return invalid("STEPS_H walks past the image");
  if (t.thread_w > NextPow2(img[2]) && t.thread_w > p.stride[2]) return invalid("THREAD_W above the image width");
  if (CeilDiv(WorkItems(direction_, p, t), t.threads) > gpu::kMaxIndex) return invalid("grid too large");
  return absl::OkStatus();
}

PerfConfig DepthwiseSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  const int64_t esize = static_cast<int64_t>(DataTypeSize(p.data_type));
  const int64_t vec = BothChannelsLast(p) ? std::min<int64_t>(kMaxVectorBytes / esize, 8) : 1;
  std::vector<Tile> tries;
  for (int64_t c = vec; c >= 1; c /= 2) {
    Tile t;
    t.thread_c = c;
    if (direction_ == Direction::kBackwardWeights) {
      t.thread_h = 2;
      t.thread_w = BothChannelsLast(p) ? 2 : 1;
      t.threads = 256;
      for (t.tb_cv = BothChannelsLast(p) ? 32 : 1; t.tb_cv >= 1; t.tb_cv /= 2) {
        // Split the pixels until the grid covers every SM twice.
        t.split = 1;
        while (ChannelTiles(p, t) * t.split < 2 * target.num_cu && t.split < kMaxSplit) t.split *= 2;
        for (Tile u = t; u.split >= 1; u.split /= 2) tries.push_back(u);
      }
      continue;
    }
    const bool bwd = direction_ == Direction::kBackwardData;
    t.thread_h = bwd ? std::max<int64_t>(p.stride[1], 2) : 2;
    t.thread_w = bwd ? p.stride[2] : (BothChannelsLast(p) ? 2 : 1);
    t.steps_h = 4;
    t.threads = 128;
    for (int64_t steps : {int64_t{4}, int64_t{1}}) {
      t.steps_h = steps;
      tries.push_back(t);
    }
  }
  for (const Tile& t : tries) {
    const PerfConfig c = ConfigOf(direction_, space, t);
    if (IsValid(target, p, c).ok()) return c;
  }
  // Always valid for an applicable problem: one pixel per thread (Bwd: the stride's), no vectors.
  Tile t;
  if (direction_ == Direction::kBackwardData) t.thread_h = p.stride[1], t.thread_w = p.stride[2];
  return ConfigOf(direction_, space, t);
}

absl::StatusOr<Solution> DepthwiseSolver::GetSolution(const Target& target, const Problem& p,
                                                      const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const Tile t = TileOf(direction_, space, config);
  KernelBuild build;
  build.source = "conv/depthwise.cu";
  build.options = space.Defines(config);
  for (std::string& o : DerivedOptions(direction_, p)) build.options.push_back(std::move(o));
  Solution sol;
  Launch l;
  l.block.x = static_cast<uint32_t>(t.threads);
  if (direction_ == Direction::kBackwardWeights) {
    build.entries = {"tuna_dw_wrw", "tuna_dw_wrw_reduce"};
    const bool partial = t.split > 1;
    l.entry = "tuna_dw_wrw";
    l.grid.x = static_cast<uint32_t>(ChannelTiles(p, t));
    l.grid.y = static_cast<uint32_t>(t.split);
    l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(partial ? BufferRole::kWorkspace : BufferRole::kW),
              KernelArg::Buffer(BufferRole::kY)};
    AppendSizesAndStrides(l.args, p, p.k, CeilDiv(Strips(p, t), t.split));
    sol.launches.push_back(l);
    if (partial) {
      const int64_t elems = p.k * Taps(p);
      sol.workspace_bytes = static_cast<uint64_t>(t.split * elems) * sizeof(float);
      const TensorDesc w = p.WDesc();
      Launch r;
      r.entry = "tuna_dw_wrw_reduce";
      r.grid.x = static_cast<uint32_t>(CeilDiv(elems, 256));
      r.block.x = 256;
      r.args = {KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::Buffer(BufferRole::kW), KernelArg::I32(p.k),
                KernelArg::I32(t.split),
                KernelArg::I64(w.strides[0]), KernelArg::I64(w.strides[3]), KernelArg::I64(w.strides[4])};
      sol.launches.push_back(r);
    }
  } else {
    const bool fwd = direction_ == Direction::kForward;
    build.entries = {fwd ? "tuna_dw_fwd" : "tuna_dw_bwd"};
    l.entry = build.entries[0];
    l.grid.x = static_cast<uint32_t>(CeilDiv(WorkItems(direction_, p, t), t.threads));
    l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
    AppendSizesAndStrides(l.args, p, fwd ? p.k : p.c, t.thread_h * t.steps_h);
    sol.launches.push_back(l);
  }
  sol.kernels.push_back(std::move(build));
  return sol;
}

}  // namespace tuna::solver
