#include "tuner_core/solver/conv/gpu_winograd.h"

#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/conv/gpu_fast_simt.h"

namespace tuna::solver {
namespace {

using gpu::CeilDiv;

// The convolution the transforms see: y (n, ko, out_h, out_w) from x (n, ci, h, w), padded, in
// m x m output tiles.
struct WinoGeom {
  int64_t m, n, ci, h, w, ko, out_h, out_w, pad_h, pad_w;
  bool flip;  // backward data: the filter rotated, K and C swapped
  int64_t Points() const { return winograd::Points(m); }
  int64_t TilesH() const { return winograd::Tiles(out_h, m); }
  int64_t TilesW() const { return winograd::Tiles(out_w, m); }
  int64_t T4() const { return winograd::T4(n, out_h, out_w, m); }
  int64_t UFloats() const { return Points() * ko * ci; }
  int64_t VFloats() const { return Points() * ci * T4(); }
  int64_t MFloats() const { return Points() * ko * T4(); }
};

WinoGeom GeomOf(int64_t m, const Problem& p) {
  const Dhw o = p.Out();
  if (p.direction == Direction::kBackwardData) {
    return {m, p.n, p.k, o[1], o[2], p.c, p.in[1], p.in[2], 2 - p.pad[1], 2 - p.pad[2], true};
  }
  return {m, p.n, p.c, p.in[1], p.in[2], p.k, o[1], o[2], p.pad[1], p.pad[2], false};
}

fast_simt::Plan GemmOf(const WinoGeom& g) { return fast_simt::GemmPlan(g.ko, g.ci, g.T4()); }

}  // namespace

Launch winograd::TransformLaunch(int kernel, const char* entry, int64_t threads, std::vector<KernelArg> args) {
  Launch l;
  l.kernel = kernel;
  l.entry = entry;
  l.grid.x = static_cast<uint32_t>(CeilDiv(threads, 256));
  l.block.x = 256;
  l.args = std::move(args);
  return l;
}

absl::Status WinogradSolver::IsApplicable(const Target& target, const Problem& p) const {
  gpu::FastConvRules rules;
  rules.direction = p.direction == Direction::kBackwardData ? Direction::kBackwardData : Direction::kForward;
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp32, DataType::kFp32, Layout::kNCHW, rules);
      !st.ok()) {
    return st;
  }
  for (int d : {1, 2}) {
    if (p.fil[d] != 3) return NotApplicable(Name(), "3x3 filters only");
    if (p.stride[d] != 1 || p.dilation[d] != 1) return NotApplicable(Name(), "stride 1 and dilation 1 only");
    if (p.pad[d] > 2) return NotApplicable(Name(), "padding above 2");
  }
  const WinoGeom g = GeomOf(m_, p);
  if (g.ci * g.T4() > gpu::kMaxIndex || g.ko * g.T4() > gpu::kMaxIndex) {
    return NotApplicable(Name(), "transformed tiles exceed 32-bit GEMM indices");
  }
  return absl::OkStatus();
}

SearchSpace WinogradSolver::Space(const Target&, const Problem&) const { return fast_simt::Space(); }

absl::Status WinogradSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  return fast_simt::CheckValid(Name(), target, GemmOf(GeomOf(m_, p)), config);
}

PerfConfig WinogradSolver::DefaultConfig(const Target& target, const Problem& p) const {
  return fast_simt::Default(target, GemmOf(GeomOf(m_, p)));
}

absl::StatusOr<Solution> WinogradSolver::GetSolution(const Target& target, const Problem& p,
                                                     const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const WinoGeom g = GeomOf(m_, p);
  const BufferRole x = g.flip ? BufferRole::kY : BufferRole::kX;
  const BufferRole y = g.flip ? BufferRole::kX : BufferRole::kY;
  const int64_t v_off = g.UFloats(), m_off = g.UFloats() + g.VFloats();
  Solution sol;
  sol.workspace_bytes = static_cast<uint64_t>(g.UFloats() + g.VFloats() + g.MFloats()) * 4;
  fast_simt::Batch batch;
  batch.count = g.Points();
  batch.x_off = v_off, batch.y_off = m_off;
  batch.zx = g.ci * g.T4(), batch.zw = g.ko * g.ci, batch.zy = g.ko * g.T4();
  fast_simt::AppendConv(GemmOf(g), config, BufferRole::kWorkspace, BufferRole::kWorkspace, BufferRole::kWorkspace, sol,
                        batch);
  const int transforms = static_cast<int>(sol.kernels.size());
  KernelBuild build;
  build.source = source_;
  build.entries = {"tuna_wino_filter", "tuna_wino_input", "tuna_wino_output"};
  sol.kernels.push_back(build);
  auto launch = [&](const char* entry, int64_t threads, std::vector<KernelArg> args) {
    return winograd::TransformLaunch(transforms, entry, threads, std::move(args));
  };
  using A = KernelArg;
  Launch filter = launch("tuna_wino_filter", g.ko * g.ci,
                         {A::Buffer(BufferRole::kW), A::Buffer(BufferRole::kWorkspace), A::I32(g.ko), A::I32(g.ci),
                          A::I32(g.flip ? 1 : 0)});
  Launch input = launch("tuna_wino_input", g.ci * g.T4(),
                        {A::Buffer(x), A::Buffer(BufferRole::kWorkspace), A::I64(v_off), A::I32(g.n), A::I32(g.ci),
                         A::I32(g.h), A::I32(g.w), A::I32(g.pad_h), A::I32(g.pad_w), A::I32(g.TilesH()),
                         A::I32(g.TilesW()), A::I32(g.T4())});
  Launch output = launch("tuna_wino_output", g.ko * g.T4(),
                         {A::Buffer(BufferRole::kWorkspace), A::I64(m_off), A::Buffer(y), A::I32(g.n), A::I32(g.ko),
                          A::I32(g.out_h), A::I32(g.out_w), A::I32(g.TilesH()), A::I32(g.TilesW()), A::I32(g.T4())});
  sol.launches.insert(sol.launches.begin(), {std::move(filter), std::move(input)});
  sol.launches.push_back(std::move(output));
  return sol;
}

}  // namespace tuna::solver
