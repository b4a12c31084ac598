#include "tuner_core/solver/conv/gpu_hopper_tma_fwd.h"

#include "tuner_core/solver/conv/gpu_hopper_tma.h"

namespace tuna::solver {

absl::Status HopperTmaFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (p.direction != Direction::kForward) return NotApplicable(Name(), "forward only");
  return hopper_tma::CheckApplicable(Name(), target, p, hopper_tma::ForwardPlan(p));
}

SearchSpace HopperTmaFwdSolver::Space(const Target&, const Problem&) const { return hopper_tma::Space(); }

absl::Status HopperTmaFwdSolver::IsValid(const Target& target, const Problem& p, const PerfConfig& config) const {
  if (absl::Status st = Solver::IsValid(target, p, config); !st.ok()) return st;
  if (absl::Status st = IsApplicable(target, p); !st.ok()) return absl::InvalidArgumentError(st.message());
  return hopper_tma::CheckValid(Name(), target, hopper_tma::ForwardPlan(p), config);
}

PerfConfig HopperTmaFwdSolver::DefaultConfig(const Target& target, const Problem& p) const {
  return hopper_tma::Default(target, hopper_tma::ForwardPlan(p));
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

std::optional<PerfConfig> HopperTmaFwdSolver::Specialize(const Target& target, const Problem& p,
                                                          const PerfConfig& config) const {
  if (!IsValid(target, p, config).ok()) return std::nullopt;
  return hopper_tma::Specialize(hopper_tma::ForwardPlan(p), config);
}

}  // namespace tuna::solver
