#include "tuner_core/solver/conv/gpu_fast_simt.h"

#include "tuner_core/solver/conv/gpu_fast_common.h"

namespace tuna::solver {

absl::Status FastSimtFwdSolver::IsApplicable(const Target& target, const Problem& p) const {
  if (absl::Status st = gpu::CheckFastConv(Name(), target, p, DataType::kFp32, DataType::kFp32, Layout::kNCHW);
      !st.ok()) {
    return st;
  }
  if (p.fil[1] > fast_simt::kMaxFilter || p.fil[2] > fast_simt::kMaxFilter) {
    return NotApplicable(Name(), "filter larger than 11");
  }
  return absl::OkStatus();
}

absl::StatusOr<Solution> FastSimtFwdSolver::GetSolution(const Target& target, const Problem& p,
                                                        const PerfConfig& config) const {
  if (absl::Status st = IsValid(target, p, config); !st.ok()) return st;
  Solution sol;
  fast_simt::AppendConv(PlanOf(p), config, BufferRole::kX, BufferRole::kW, BufferRole::kY, sol);
  return sol;
}

}  // namespace tuna::solver
