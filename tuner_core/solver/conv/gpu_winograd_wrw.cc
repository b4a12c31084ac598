#include "tuner_core/solver/conv/gpu_winograd_wrw.h"

#include <algorithm>

#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"
#include "tuner_core/solver/conv/gpu_fast_simt_wrw.h"
#include "tuner_core/solver/conv/gpu_winograd.h"

namespace tuna::solver {
namespace {

// F(3x3, 2x2): 2x2 dy tiles under 4x4 x tiles (winograd_f2x3.cu's input transform).
constexpr int64_t kTile = 2;
constexpr int64_t kPoints = winograd::Points(kTile);

// The GEMM of one transformed point as a backward-weights problem TunaFastSimtWrw runs:
// dw (K, C) = sum over the T4 tiles of DY (K, T4) x X (C, T4), a 1x1 convolution of one image.
Problem GemmProblem(const Problem& p) {
  const Dhw o = p.Out();
  Problem g = p;
  g.n = 1;
  g.in = {1, 1, winograd::T4(p.n, o[1], o[2], kTile)};
  g.fil = {1, 1, 1};
  g.pad = {0, 0, 0};
  g.stride = {1, 1, 1};
  g.dilation = {1, 1, 1};
  return g;
}

}  // namespace

absl::Status WinogradWrwSolver::IsApplicable(const Target& target, const Problem& p) const {
  gpu::FastConvRules rules;
  rules.direction = Direction::kBackwardWeights;
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp32, DataType::kFp32, Layout::kNCHW, rules);
      !st.ok()) {
    return st;
  }
  for (int d : {1, 2}) {
    if (p.fil[d] != 3) return NotApplicable(Name(), "3x3 filters only");
    if (p.stride[d] != 1 || p.dilation[d] != 1) return NotApplicable(Name(), "stride 1 and dilation 1 only");
    if (p.pad[d] > 2) return NotApplicable(Name(), "padding above 2");
  }
  const Problem g = GemmProblem(p);
  if (std::max(p.c, p.k) * g.in[2] > gpu::kMaxIndex) return NotApplicable(Name(), "tiles exceed 32-bit indices");
  return FastSimtWrwSolver().IsApplicable(target, g);
}

SearchSpace WinogradWrwSolver::Space(const Target&, const Problem&) const { return FastSimtWrwSolver::Axes(); }

absl::Status WinogradWrwSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = IsValidWhereApplicable(target, p, config); !st.ok()) return st;
  return FastSimtWrwSolver().IsValid(target, GemmProblem(p), config);
}

PerfConfig WinogradWrwSolver::DefaultConfig(const Target& target, const Problem& p) const {
  return FastSimtWrwSolver().DefaultConfig(target, GemmProblem(p));
}

absl::StatusOr<Solution> WinogradWrwSolver::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const Dhw o = p.Out();
  const Problem g = GemmProblem(p);
  const int64_t t4 = g.in[2], th = winograd::Tiles(o[1], kTile), tw = winograd::Tiles(o[2], kTile);
  const int64_t split = FastSimtWrwSolver::SplitK(config);
  const int64_t x_off = 0, dy_off = kPoints * p.c * t4, p_off = dy_off + kPoints * p.k * t4;
  Solution sol;
  sol.workspace_bytes = static_cast<uint64_t>(p_off + split * kPoints * p.k * p.c) * 4;
  sol.kernels.push_back(FastSimtWrwSolver::Build(g, config));
  KernelBuild transforms;
  transforms.source = "conv/winograd_f2x3.cu";
  transforms.entries = {"tuna_wino_input", "tuna_wino_dy", "tuna_wino_wrw_output"};
  sol.kernels.push_back(transforms);
  auto launch = [&](const char* entry, int64_t threads, std::vector<KernelArg> args) {
    return winograd::TransformLaunch(1, entry, threads, std::move(args));
  };
  using A = KernelArg;
  const BufferRole ws = BufferRole::kWorkspace;
  sol.launches.push_back(launch("tuna_wino_input", p.c * t4,
                                {A::Buffer(BufferRole::kX), A::Buffer(ws), A::I64(x_off), A::I32(p.n), A::I32(p.c),
                                 A::I32(p.in[1]), A::I32(p.in[2]), A::I32(p.pad[1]), A::I32(p.pad[2]), A::I32(th),
                                 A::I32(tw), A::I32(t4)}));
  sol.launches.push_back(launch("tuna_wino_dy", p.k * t4,
                                {A::Buffer(BufferRole::kY), A::Buffer(ws), A::I64(dy_off), A::I32(p.n), A::I32(p.k),
                                 A::I32(o[1]), A::I32(o[2]), A::I32(th), A::I32(tw), A::I32(t4)}));
  FastSimtWrwSolver::GemmBatch batch;
  batch.kernel = 0;
  batch.x = batch.dy = batch.out = ws;
  batch.count = kPoints;
  batch.x_off = x_off, batch.dy_off = dy_off, batch.out_off = p_off;
  batch.zx = p.c * t4, batch.zdy = p.k * t4;
  sol.launches.push_back(FastSimtWrwSolver::GemmLaunch(g, config, batch));
  sol.launches.push_back(launch("tuna_wino_wrw_output", p.k * p.c,
                                {A::Buffer(ws), A::I64(p_off), A::I32(split), A::Buffer(BufferRole::kW), A::I32(p.k),
                                 A::I32(p.c)}));
  return sol;
}

}  // namespace tuna::solver
