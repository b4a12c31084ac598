#include "tuner_core/solver/conv/gpu_fast_simt.h"

#include "tuner_core/solver/conv/gpu_common.h"
#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {
namespace {

constexpr int64_t kMaxStride = 4;  // s x s launches; beyond, most phases would be empty

}  // namespace

absl::Status FastSimtBwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  gpu::FastConvRules rules;
  rules.direction = Direction::kBackwardData;
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp32, DataType::kFp32, Layout::kNCHW, rules);
      !st.ok()) {
    return st;
  }
  if (p.fil[1] > fast_simt::kMaxFilter || p.fil[2] > fast_simt::kMaxFilter) {
    return NotApplicable(Name(), "filter larger than 11");
  }
  for (int d : {1, 2}) {
    if (p.stride[d] > kMaxStride) return NotApplicable(Name(), "stride above 4");
    if (p.stride[d] > 1 && p.dilation[d] > 1) {
      return NotApplicable(Name(), "strided and dilated in one dimension (the sub-pixel phases assume dilation 1)");
    }
  }
  if (p.k * p.c * p.fil[1] * p.fil[2] > gpu::kMaxIndex) return NotApplicable(Name(), "filter exceeds 32-bit indices");
  return absl::OkStatus();
}

absl::StatusOr<Solution> FastSimtBwdSolver::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const int64_t filter = p.k * p.c * p.fil[1] * p.fil[2];
  Solution sol;
  sol.workspace_bytes = static_cast<uint64_t>(filter) * 4;
  // dy is the kernel's x (role y), w' its w (the workspace), dx its y (role x).
  fast_simt::AppendConv(PlanOf(p), config, BufferRole::kY, BufferRole::kWorkspace, BufferRole::kX, sol);
  Launch flip;
  flip.kernel = 0;
  flip.entry = "tuna_simt_bwd_filter";
  flip.grid.x = static_cast<uint32_t>(gpu::CeilDiv(filter, 256));
  flip.block.x = 256;
  flip.args = {KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kWorkspace)};
  for (int64_t v : {p.k, p.c, p.fil[1], p.fil[2], p.pad[1], p.pad[2], p.stride[1], p.stride[2]}) {
    flip.args.push_back(KernelArg::I32(v));
  }
  sol.launches.insert(sol.launches.begin(), std::move(flip));
  return sol;
}

}  // namespace tuna::solver
