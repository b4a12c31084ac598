#include "tuner_core/solver/conv/gpu_hopper_tma.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver::hopper_tma {
namespace {

using gpu::CeilDiv;

constexpr int kTbK = 64;          // channels per k-tile: one 128-byte swizzle row of halves
constexpr int kMaxStages = 8;
constexpr int kEpiWarpBytes = 16 * 72 * 2;
constexpr int kCornerMin = -128;  // the copy engine's bounding-box offsets for rank-4 im2col
constexpr int kCornerMax = 127;

int64_t GemmM(const Problem& p) {
  const Dhw o = p.Out();
  return p.n * o[1] * o[2];
}

int64_t Tiles(const Problem& p, int tb_m, int tb_n) {
  return CeilDiv(GemmM(p), tb_m) * CeilDiv(p.k / p.groups, tb_n) * p.groups;
}

// The deepest ring that fits the target's shared memory.
int DeepestStages(const Target& target, int tb_m, int tb_n, int wg_m) {
  int s = kMaxStages;
  while (s > 3 && SharedBytes(tb_m, tb_n, wg_m, s) > target.max_shared_bytes_per_block) --s;
  return s;
}

// The im2col map of x: dims (C, W, H, N), the bounding box of filter origins, output strides.
backend::TensorMapSpec XMap(const Problem& p, int tb_m) {
  backend::TensorMapSpec m;
  m.mode = backend::TensorMapSpec::Mode::kIm2col;
  m.rank = 4;
  m.element_bytes = 2;
  const uint64_t c = p.c, w = p.in[2], h = p.in[1];
  m.dims = {c, w, h, static_cast<uint64_t>(p.n), 0};
  m.strides_bytes = {c * 2, w * c * 2, h * w * c * 2, 0};
  m.element_strides = {1, static_cast<uint32_t>(p.stride[2]), static_cast<uint32_t>(p.stride[1]), 1, 1};
  m.lower_corner = {static_cast<int>(-p.pad[2]), static_cast<int>(-p.pad[1]), 0};
  m.upper_corner = {static_cast<int>(p.pad[2] - p.dilation[2] * (p.fil[2] - 1)),
                    static_cast<int>(p.pad[1] - p.dilation[1] * (p.fil[1] - 1)), 0};
  m.channels_per_pixel = kTbK;
  m.pixels_per_column = static_cast<uint32_t>(tb_m);
  m.swizzle = backend::TensorMapSpec::Swizzle::k128B;
  return m;
}

// The tiled map of w as a (K, R*S*C/G) matrix: boxes of TB_N rows x 64 columns.
backend::TensorMapSpec WMap(const Problem& p, int tb_n) {
  backend::TensorMapSpec m;
  m.rank = 2;
  m.element_bytes = 2;
  const uint64_t kg = static_cast<uint64_t>(p.fil[1] * p.fil[2] * (p.c / p.groups));
  m.dims = {kg, static_cast<uint64_t>(p.k), 0, 0, 0};
  m.strides_bytes = {kg * 2, 0, 0, 0};
  m.box = {kTbK, static_cast<uint32_t>(tb_n), 0, 0, 0};
  m.swizzle = backend::TensorMapSpec::Swizzle::k128B;
  return m;
}

}  // namespace

TmaParams TmaParams::Of(const SearchSpace& s, const PerfConfig& c) {
  return {static_cast<int>(s.Value(c, "TB_M")), static_cast<int>(s.Value(c, "TB_N")),
          static_cast<int>(s.Value(c, "WG_M")), static_cast<int>(s.Value(c, "STAGES"))};
}

PerfConfig TmaParams::Config(const SearchSpace& s) const {
  return s.Make({{"TB_M", tb_m}, {"TB_N", tb_n}, {"WG_M", wg_m}, {"STAGES", stages}});
}

SearchSpace Space() {
  return SearchSpace({{"TB_M", Pow2Range(64, 256)},
                      {"TB_N", Pow2Range(64, 256)},
                      {"WG_M", Pow2Range(1, 2)},
                      {"STAGES", LinearRange(3, kMaxStages)}});
}

uint64_t SharedBytes(int tb_m, int tb_n, int wg_m, int stages) {
  return 1024 + static_cast<uint64_t>(stages) * (tb_m + tb_n) * kTbK * 2 +
         static_cast<uint64_t>(wg_m) * 4 * kEpiWarpBytes + 16 * static_cast<uint64_t>(stages);
}

absl::Status CheckApplicable(std::string_view solver, const Target& target, const Problem& p, const Problem& fwd) {
  if (target.backend != backend::BackendKind::kCuda || target.SmVersion() != 90) {
    return NotApplicable(solver, "wgmma and TMA kernels are built for CUDA sm_90a only");
  }
  if (absl::Status st = gpu::CheckCommon(solver, target, p, p.direction); !st.ok()) return st;
  if (p.data_type != DataType::kFp16 && p.data_type != DataType::kBf16) return NotApplicable(solver, "FP16 and BF16 only");
  if (p.spatial_dims != 2) return NotApplicable(solver, "2D only");
  if (p.in_layout != Layout::kNHWC || p.fil_layout != Layout::kNHWC || p.out_layout != Layout::kNHWC ||
      !gpu::IsDense(p.XDesc(), Layout::kNHWC) || !gpu::IsDense(p.WDesc(), Layout::kNHWC) ||
      !gpu::IsDense(p.YDesc(), Layout::kNHWC)) {
    return NotApplicable(solver, "requires dense NHWC x, w and y");
  }
  if ((fwd.c / fwd.groups) % kTbK != 0) {
    return NotApplicable(solver, "input channels per group must be a multiple of 64 (one filter tap per k-tile)");
  }
  if (fwd.groups > 1 && fwd.k / fwd.groups < 8) return NotApplicable(solver, "fewer than 8 output channels per group");
  if (fwd.stride[1] > 8 || fwd.stride[2] > 8) return NotApplicable(solver, "strides above 8 (the copy engine's limit)");
  for (int d = 1; d <= 2; ++d) {
    const int64_t lower = -fwd.pad[d];
    const int64_t upper = fwd.pad[d] - fwd.dilation[d] * (fwd.fil[d] - 1);
    if (lower < kCornerMin || lower > kCornerMax || upper < kCornerMin || upper > kCornerMax) {
      return NotApplicable(solver, "padding or dilated filter extent outside the copy engine's -128..127 box");
    }
    if (fwd.dilation[d] * (fwd.fil[d] - 1) > 65535) return NotApplicable(solver, "filter offset above 16 bits");
  }
  const int64_t x_elems = fwd.n * fwd.in[1] * fwd.in[2] * fwd.c;
  const int64_t kdim = fwd.fil[1] * fwd.fil[2] * (fwd.c / fwd.groups);
  if (x_elems > gpu::kMaxIndex || GemmM(fwd) > gpu::kMaxIndex || kdim > gpu::kMaxIndex) {
    return NotApplicable(solver, "tensors above 2^31 elements");
  }
  return absl::OkStatus();
}

absl::Status CheckValid(std::string_view solver, const Target& target, const Problem& fwd, const PerfConfig& config) {
  const TmaParams t = TmaParams::Of(Space(), config);
  auto invalid = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(solver), ": params '", config.ToString(), "': ", why));
  };
  const int wg_rows = t.tb_m / t.wg_m;
  if (wg_rows % 64 != 0) return invalid("TB_M / WG_M must be a multiple of 64 (wgmma m64)");
  // Accumulators: (TB_M / WG_M) x TB_N FP32 over 128 threads; more than 128 spills.
  if (wg_rows * t.tb_n / 128 > 128) return invalid("more than 128 accumulators per thread");
  const uint64_t smem = SharedBytes(t.tb_m, t.tb_n, t.wg_m, t.stages);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  // One block per SM: a ring shallower than the deepest that fits only idles the copy engine.
  if (t.stages + 2 < DeepestStages(target, t.tb_m, t.tb_n, t.wg_m)) return invalid("ring far shallower than fits");
  // Tiles twice the GEMM extent only waste the tensor cores (never prune the smallest tile).
  if (t.tb_n > 64 && t.tb_n / 2 >= fwd.k / fwd.groups) return invalid("TB_N much larger than K/G");
  if (t.tb_m > 64 && t.tb_m / 2 >= GemmM(fwd)) return invalid("TB_M much larger than N*Ho*Wo");
  if (Tiles(fwd, t.tb_m, t.tb_n) > int64_t{0x7fffffff}) return invalid("too many tiles");
  return absl::OkStatus();
}

PerfConfig Default(const Target& target, const Problem& fwd) {
  const SearchSpace space = Space();
  // The largest tile that still gives most SMs a block (measured: the winners on ResNet-50's
  // 14x14 and 7x7 layers run 0.75-1 waves), else the smallest.
  const TmaParams candidates[] = {{128, 256, 2, 0}, {256, 128, 2, 0}, {128, 128, 2, 0},
                                  {128, 64, 1, 0},  {64, 128, 1, 0},  {64, 64, 1, 0}};
  for (TmaParams c : candidates) {
    c.stages = DeepestStages(target, c.tb_m, c.tb_n, c.wg_m);
    const PerfConfig config = c.Config(space);
    if (Tiles(fwd, c.tb_m, c.tb_n) * 4 >= target.num_cu * 3 && CheckValid("", target, fwd, config).ok()) {
      return config;
    }
  }
  TmaParams smallest{64, 64, 1, DeepestStages(target, 64, 64, 1)};
  return smallest.Config(space);  // valid for every applicable problem
}

KernelBuild Build(const Problem& fwd, const PerfConfig& config) {
  KernelBuild build;
  build.source = "conv/hopper_tma_fwd.cu";
  build.entries = {"tuna_hopper_tma_fwd", "tuna_flip_filter"};
  build.options = Space().Defines(config);
  build.options.push_back(gpu::DTypeOption(fwd.data_type));
  build.arch_specific = true;  // wgmma, setmaxnreg: sm_90a
  return build;
}

Launch ConvLaunch(const Target& target, const Problem& fwd, const PerfConfig& config, BufferRole x, BufferRole w,
                  int64_t w_offset, BufferRole y) {
  const TmaParams t = TmaParams::Of(Space(), config);
  const Dhw o = fwd.Out();
  Launch l;
  l.kernel = 0;
  l.entry = "tuna_hopper_tma_fwd";
  l.grid.x = static_cast<uint32_t>(std::min<int64_t>(Tiles(fwd, t.tb_m, t.tb_n), std::max(1, target.num_cu)));
  l.block.x = static_cast<uint32_t>(t.Threads());
  l.shared_bytes = SharedBytes(t.tb_m, t.tb_n, t.wg_m, t.stages);
  l.args = {KernelArg::TensorMap(x, XMap(fwd, t.tb_m)), KernelArg::TensorMap(w, WMap(fwd, t.tb_n), w_offset),
            KernelArg::Buffer(y)};
  for (int64_t v : {fwd.n, fwd.c, fwd.in[1], fwd.in[2], fwd.k, o[1], o[2], fwd.fil[1], fwd.fil[2], fwd.pad[1],
                    fwd.pad[2], fwd.stride[1], fwd.stride[2], fwd.dilation[1], fwd.dilation[2], fwd.groups}) {
    l.args.push_back(KernelArg::I32(v));
  }
  return l;
}

}  // namespace tuna::solver::hopper_tma
