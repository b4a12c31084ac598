#include "tuner_core/solver/conv/gpu_hopper_tma.h"

#include "tuner_core/solver/conv/gpu_common.h"

namespace tuna::solver {

absl::Status HopperTmaBwdSolver::Admits(const Problem& p) const {
  if (p.direction != Direction::kBackwardData) return NotApplicable(Name(), "backward data only");
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only (3-D: TunaHopperTmaBwd3d)");
  if ((p.stride[1] > 1 || p.stride[2] > 1) && (p.dilation[1] > 1 || p.dilation[2] > 1)) {
    return NotApplicable(Name(), "strided and dilated together (the sub-pixel phases assume dilation 1)");
  }
  if (p.groups * p.fil[1] * p.fil[2] > gpu::kMaxGridYZ) return NotApplicable(Name(), "too many groups x taps for grid.z");
  return absl::OkStatus();
}

absl::Status HopperTmaBwd3dSolver::Admits(const Problem& p) const {
  if (p.direction != Direction::kBackwardData) return NotApplicable(Name(), "backward data only");
  if (p.spatial_dims != 3) return NotApplicable(Name(), "3-D only");
  if (p.stride[0] != 1 || p.stride[1] != 1 || p.stride[2] != 1) return NotApplicable(Name(), "stride 1 only");
  if (p.groups * gpu::FilterTaps(p) > gpu::kMaxGridYZ) {
    return NotApplicable(Name(), "too many groups x taps for grid.z");
  }
  return absl::OkStatus();
}

absl::StatusOr<Solution> HopperTmaBwdSolver::GetSolution(const Target& target, const Problem& p,
                                                         const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const hopper_tma::ConvPlan plan = hopper_tma::BackwardDataPlan(p);
  Solution sol;
  sol.kernels.push_back(hopper_tma::Build(plan, config));
  if (plan.flip_w || plan.trans_a) {  // w read in place, rotated and transposed by the kernel
    sol.launches.push_back(
        hopper_tma::ConvLaunch(target, plan, config, BufferRole::kY, BufferRole::kW, 0, BufferRole::kX));
    return sol;
  }
  const int64_t taps = gpu::FilterTaps(p);
  const int64_t kpg = p.k / p.groups, cg = p.c / p.groups;
  sol.workspace_bytes = static_cast<uint64_t>(p.c * taps * kpg) * 2;
  Launch flip;
  flip.kernel = 0;
  flip.entry = "tuna_flip_filter";
  flip.grid.x = static_cast<uint32_t>(gpu::CeilDiv(cg, 32));
  flip.grid.y = static_cast<uint32_t>(gpu::CeilDiv(kpg, 32));
  flip.grid.z = static_cast<uint32_t>(p.groups * taps);
  flip.block.x = 32;
  flip.block.y = 8;
  flip.args = {KernelArg::Buffer(BufferRole::kW), KernelArg::Buffer(BufferRole::kWorkspace), KernelArg::I64(0),
               KernelArg::I32(p.k),           KernelArg::I32(p.c),  KernelArg::I32(p.fil[0] * p.fil[1]),
               KernelArg::I32(p.fil[2]),      KernelArg::I32(p.groups)};
  sol.launches.push_back(flip);
  // dy is the forward's x (role y), w' its w (the workspace), dx its y (role x).
  sol.launches.push_back(
      hopper_tma::ConvLaunch(target, plan, config, BufferRole::kY, BufferRole::kWorkspace, 0, BufferRole::kX));
  return sol;
}

}  // namespace tuna::solver
