#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna::solver {

absl::Status HopperTmaFwdSolver::Admits(const Problem& p) const {
  if (p.direction != Direction::kForward) return NotApplicable(Name(), "forward only");
  if (p.spatial_dims != 2) return NotApplicable(Name(), "2D only (3-D: TunaHopperTmaFwd3d)");
  return absl::OkStatus();
}

absl::Status HopperTmaFwd3dSolver::Admits(const Problem& p) const {
  if (p.direction != Direction::kForward) return NotApplicable(Name(), "forward only");
  if (p.spatial_dims != 3) return NotApplicable(Name(), "3-D only");
  return absl::OkStatus();
}

absl::StatusOr<Solution> HopperTmaFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                         const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  const hopper_tma::ConvPlan plan = hopper_tma::ForwardPlan(p);
  Solution sol;
  sol.kernels.push_back(hopper_tma::Build(plan, config));
  sol.launches.push_back(
      hopper_tma::ConvLaunch(target, plan, config, BufferRole::kX, BufferRole::kW, 0, BufferRole::kY));
  return sol;
}

}  // namespace tuna::solver
