#include "tuner_core/solver/conv/gpu_thin_bwd.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

constexpr int64_t kMaxChannels = 4;
constexpr int64_t kMaxLiveFloats = 160;  // accumulators + the dy window: above it the kernel spills

struct Tile {
  int64_t thread_h, thread_w, k_chunk, threads;
  static Tile Of(const SearchSpace& s, const PerfConfig& c) {
    return {s.Value(c, "THREAD_H"), s.Value(c, "THREAD_W"), s.Value(c, "K_CHUNK"), s.Value(c, "TB_THREADS")};
  }
  PerfConfig Config(const SearchSpace& s) const {
    return s.Make({{"THREAD_H", thread_h}, {"THREAD_W", thread_w}, {"K_CHUNK", k_chunk}, {"TB_THREADS", threads}});
  }
};

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Rows (or columns) of dy a thread tile of `t` pixels reads along one dimension.
int64_t WindowExtent(int64_t t, int64_t fil, int64_t pad, int64_t stride, int64_t dil) {
  return FloorDiv(t - 1 + pad, stride) - FloorDiv(pad - (fil - 1) * dil, stride) + 1;
}

int64_t LiveFloats(const Problem& p, const Tile& t) {
  return t.thread_h * t.thread_w * (p.c / p.groups) +
         WindowExtent(t.thread_h, p.fil[1], p.pad[1], p.stride[1], p.dilation[1]) *
             WindowExtent(t.thread_w, p.fil[2], p.pad[2], p.stride[2], p.dilation[2]) + 4;
}

uint64_t SharedBytes(const Problem& p, int64_t k_chunk) {
  return static_cast<uint64_t>(k_chunk * p.fil[1] * p.fil[2] * 4) * sizeof(float);
}

bool StrideTimesPow2(int64_t v, int64_t stride) { return v % stride == 0 && NextPow2(v / stride) == v / stride; }

}  // namespace

absl::Status ThinBwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = gpu::CheckCommon(Name(), target, p, Direction::kBackwardData); !st.ok()) return st;
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only");
  if (p.c / p.groups > kMaxChannels) return NotApplicable(Name(), "more than 4 input channels per group");
  for (int i = 1; i <= 2; ++i) {
    const int64_t s = p.stride[i];
    if (s != 1 && s != 2 && s != 3 && s != 4 && s != 6) return NotApplicable(Name(), "stride not in {1,2,3,4,6}");
  }
  if (p.n * p.groups > gpu::kMaxGridYZ) return NotApplicable(Name(), "N*G exceeds grid.y");
  if (p.in[1] * p.in[2] > gpu::kMaxIndex) return NotApplicable(Name(), "image exceeds 2^31 pixels");
  if (LiveFloats(p, Tile{p.stride[1], p.stride[2], 8, 64}) > kMaxLiveFloats ||
      SharedBytes(p, 8) > target.max_shared_bytes_per_block) {
    return NotApplicable(Name(), "filter too large for a register window");
  }
  return absl::OkStatus();
}

SearchSpace ThinBwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"THREAD_H", {1, 2, 3, 4, 6, 8}},
                      {"THREAD_W", {1, 2, 3, 4, 6, 8}},
                      {"K_CHUNK", Pow2Range(8, 64)},
                      {"TB_THREADS", Pow2Range(64, 256)}});
}

absl::Status ThinBwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  const Tile t = Tile::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (!StrideTimesPow2(t.thread_h, p.stride[1]) || !StrideTimesPow2(t.thread_w, p.stride[2])) {
    return invalid("thread tile not the stride times a power of 2");
  }
  if (LiveFloats(p, t) > kMaxLiveFloats) return invalid("too many live registers");
  if (SharedBytes(p, t.k_chunk) > target.max_shared_bytes_per_block) return invalid("weights exceed shared memory");
  if (t.k_chunk > 8 && t.k_chunk > NextPow2(p.k / p.groups)) return invalid("K_CHUNK above K/G");
  if (t.thread_h > p.stride[1] && t.thread_h > NextPow2(p.in[1])) return invalid("THREAD_H above the image");
  if (t.thread_w > p.stride[2] && t.thread_w > NextPow2(p.in[2])) return invalid("THREAD_W above the image");
  if (CeilDiv(CeilDiv(p.in[1], t.thread_h) * CeilDiv(p.in[2], t.thread_w), t.threads) > gpu::kMaxIndex) {
    return invalid("grid too large");
  }
  return absl::OkStatus();
}

PerfConfig ThinBwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const SearchSpace space = Space(target, p);
  const int64_t kc = std::clamp<int64_t>(NextPow2(p.k / p.groups), 8, 32);
  for (int64_t scale : {int64_t{2}, int64_t{1}}) {
    for (int64_t chunk = kc; chunk >= 8; chunk /= 2) {
      const Tile t{p.stride[1] * scale, p.stride[2] * scale, chunk, 128};
      if (IsValid(target, p, t.Config(space)).ok()) return t.Config(space);
    }
  }
  return Tile{p.stride[1], p.stride[2], 8, 64}.Config(space);  // what IsApplicable checked
}

absl::StatusOr<Solution> ThinBwdSolver::GetSolution(const Target& target, const Problem& p,
                                                    const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const Tile t = Tile::Of(space, config);
  KernelBuild build = gpu::TunedBuild("conv/thin_bwd.cu", {"tuna_thin_bwd"}, space, config, p.data_type);
  for (auto [name, v] : {std::pair{"CG", p.c / p.groups}, {"FR", p.fil[1]}, {"FS", p.fil[2]}, {"SH", p.stride[1]},
                         {"SW", p.stride[2]}, {"DH", p.dilation[1]}, {"DW", p.dilation[2]}, {"PH", p.pad[1]},
                         {"PW", p.pad[2]}}) {
    build.options.push_back(absl::StrCat("-DTUNA_", name, "=", v));
  }
  const Dhw o = p.Out();
  Launch l;
  l.entry = "tuna_thin_bwd";
  l.grid.x = static_cast<uint32_t>(CeilDiv(CeilDiv(p.in[1], t.thread_h) * CeilDiv(p.in[2], t.thread_w), t.threads));
  l.grid.y = static_cast<uint32_t>(p.n * p.groups);
  l.block.x = static_cast<uint32_t>(t.threads);
  l.shared_bytes = SharedBytes(p, t.k_chunk);
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kY)};
  for (int64_t v : {p.groups, p.k / p.groups, p.in[1], p.in[2], o[1], o[2]}) l.args.push_back(KernelArg::I32(v));
  for (const TensorDesc& d : {p.XDesc(), p.WDesc(), p.YDesc()}) gpu::Append2dStrides(l.args, d);
  Solution sol;
  sol.kernels.push_back(std::move(build));
  sol.launches.push_back(std::move(l));
  return sol;
}

}  // namespace tuna::solver
