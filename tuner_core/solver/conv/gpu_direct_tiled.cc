#include "tuner_core/solver/conv/gpu_direct_tiled.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

constexpr int64_t kMinThreads = 32;
constexpr int64_t kMaxThreads = 512;

// The axes by name (the one place a config is decoded). Convolution dimensions, not GEMM ones:
// tb_h x tb_w output pixels, tb_k output channels (TB_OC), tb_c input channels (TB_IC).
struct Tile {
  int64_t tb_h, tb_w, tb_k, tb_c, thread_k;
  static Tile Of(const SearchSpace& s, const PerfConfig& c) {
    return {s.Value(c, "TB_OH"), s.Value(c, "TB_OW"), s.Value(c, "TB_OC"), s.Value(c, "TB_IC"),
            s.Value(c, "THREAD_OC")};
  }
  PerfConfig Config(const SearchSpace& s) const {
    return s.Make({{"TB_OH", tb_h}, {"TB_OW", tb_w}, {"TB_OC", tb_k}, {"TB_IC", tb_c}, {"THREAD_OC", thread_k}});
  }
};

int64_t NextPow2(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

uint64_t DirectTiledFwdSolver::SharedBytes(const Problem& p, int64_t tb_h, int64_t tb_w, int64_t tb_k,
                                           int64_t tb_c) {
  const int64_t in_th = (tb_h - 1) * p.stride[1] + (p.fil[1] - 1) * p.dilation[1] + 1;
  const int64_t in_tw = (tb_w - 1) * p.stride[2] + (p.fil[2] - 1) * p.dilation[2] + 1;
  return static_cast<uint64_t>(tb_c * in_th * in_tw + tb_k * tb_c * p.fil[1] * p.fil[2]) * sizeof(float);
}

absl::Status DirectTiledFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = gpu::CheckCommon(Name(), target, p, Direction::kForward); !st.ok()) return st;
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only");
  if (p.n * p.groups > gpu::kMaxGridYZ) return NotApplicable(Name(), "N*G exceeds grid.z");
  const Dhw o = p.Out();
  if (p.in[1] * p.in[2] > gpu::kMaxIndex || o[1] * o[2] > gpu::kMaxIndex) {
    return NotApplicable(Name(), "image exceeds 2^31 pixels");
  }
  if (SharedBytes(p, 1, 32, 1, 1) > target.max_shared_bytes_per_block) {
    return NotApplicable(Name(), "filter footprint does not fit in shared memory");
  }
  return absl::OkStatus();
}

SearchSpace DirectTiledFwdSolver::Space(const Target& target, const Problem& problem) const {
  (void)target, (void)problem;
  return SearchSpace({{"TB_OH", Pow2Range(1, 16)},
                      {"TB_OW", Pow2Range(4, 32)},
                      {"TB_OC", Pow2Range(1, 32)},
                      {"TB_IC", Pow2Range(1, 16)},
                      {"THREAD_OC", Pow2Range(1, 8)}});
}

absl::Status DirectTiledFwdSolver::IsValid(const Target& target, const Problem& p,
                                           const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  const Tile t = Tile::Of(Space(target, p), config);
  auto invalid = [&](std::string_view why) { return InvalidConfig(Name(), config, why); };
  if (t.thread_k > t.tb_k) return invalid("THREAD_OC exceeds TB_OC");
  const int64_t threads = t.tb_h * t.tb_w * (t.tb_k / t.thread_k);
  if (threads < kMinThreads || threads > kMaxThreads) {
    return invalid(absl::StrCat(threads, " threads outside [", kMinThreads, ", ", kMaxThreads, "]"));
  }
  const uint64_t smem = SharedBytes(p, t.tb_h, t.tb_w, t.tb_k, t.tb_c);
  if (smem > target.max_shared_bytes_per_block) {
    return invalid(absl::StrCat(smem, " bytes of shared memory > ", target.max_shared_bytes_per_block));
  }
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  const Dhw o = p.Out();
  // Pruning: blocks far larger than the problem only idle threads (the smallest sizes stay).
  if (t.tb_k > 1 && t.tb_k > NextPow2(kg)) return invalid("TB_OC larger than K/G");
  if (t.tb_c > 1 && t.tb_c > NextPow2(cg)) return invalid("TB_IC larger than C/G");
  if (t.tb_h > 1 && t.tb_h > NextPow2(o[1])) return invalid("TB_OH larger than the output height");
  if (CeilDiv(kg, t.tb_k) > gpu::kMaxGridYZ) return invalid("grid.y too large");
  if (CeilDiv(o[1], t.tb_h) * CeilDiv(o[2], t.tb_w) > gpu::kMaxIndex) return invalid("grid.x too large");
  return absl::OkStatus();
}

PerfConfig DirectTiledFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  const int64_t kg = p.k / p.groups;
  const Dhw o = p.Out();
  const int64_t tb_w = o[2] >= 16 ? 16 : (o[2] >= 8 ? 8 : 4);
  const int64_t tb_k = kg >= 16 ? 16 : NextPow2(kg);
  const SearchSpace space = Space(target, p);
  for (int64_t tb_h : {int64_t{8}, int64_t{4}, int64_t{2}, int64_t{1}}) {
    for (int64_t thread_k : {int64_t{4}, int64_t{2}, int64_t{1}}) {
      for (int64_t tb_c : {int64_t{8}, int64_t{4}, int64_t{2}, int64_t{1}}) {
        const PerfConfig c = Tile{tb_h, tb_w, tb_k, tb_c, std::min(thread_k, tb_k)}.Config(space);
        if (IsValid(target, p, c).ok()) return c;
      }
    }
  }
  return Tile{1, 32, 1, 1, 1}.Config(space);  // the footprint IsApplicable checked
}

absl::StatusOr<Solution> DirectTiledFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                           const PerfConfig& config) const {
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return st;
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const SearchSpace space = Space(target, p);
  const Tile t = Tile::Of(space, config);
  const Dhw o = p.Out();
  const int64_t cg = p.c / p.groups, kg = p.k / p.groups;
  const int64_t in_th = (t.tb_h - 1) * p.stride[1] + (p.fil[1] - 1) * p.dilation[1] + 1;
  const int64_t in_tw = (t.tb_w - 1) * p.stride[2] + (p.fil[2] - 1) * p.dilation[2] + 1;
  const int64_t tiles_w = CeilDiv(o[2], t.tb_w);

  KernelBuild build = gpu::TunedBuild("conv/tuna_direct_tiled.cu",
                                      {"tuna_direct_tiled_fwd"}, space, config, p.data_type);

  Launch l;
  l.entry = "tuna_direct_tiled_fwd";
  l.grid.x = static_cast<uint32_t>(CeilDiv(o[1], t.tb_h) * tiles_w);
  l.grid.y = static_cast<uint32_t>(CeilDiv(kg, t.tb_k));
  l.grid.z = static_cast<uint32_t>(p.n * p.groups);
  l.block.x = static_cast<uint32_t>(t.tb_h * t.tb_w * (t.tb_k / t.thread_k));
  l.shared_bytes = SharedBytes(p, t.tb_h, t.tb_w, t.tb_k, t.tb_c);
  l.args = {KernelArg::Buffer(BufferRole::kX), KernelArg::Buffer(BufferRole::kW),
            KernelArg::Buffer(BufferRole::kY)};
  const TensorDesc x = p.XDesc(), w = p.WDesc(), y = p.YDesc();
  for (int64_t v : {p.groups, cg, kg, p.in[1], p.in[2], o[1], o[2], p.fil[1], p.fil[2], p.pad[1], p.pad[2],
                    p.stride[1], p.stride[2], p.dilation[1], p.dilation[2], x.strides[0], x.strides[1],
                    x.strides[3], x.strides[4], w.strides[0], w.strides[1], w.strides[3], w.strides[4],
                    y.strides[0], y.strides[1], y.strides[3], y.strides[4], tiles_w, in_th, in_tw}) {
    l.args.push_back(KernelArg::I64(v));
  }
  Solution sol;
  sol.kernels.push_back(build);
  sol.launches.push_back(l);
  return sol;
}

}  // namespace tuna::solver
