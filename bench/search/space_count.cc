#include "bench/search/space_count.h"

#include "tuner_core/backend/kernel_identity.h"
#include "tuner_core/solver/invoker.h"

namespace tuna::search {

std::vector<solver::PerfConfig> ValidConfigs(const solver::Solver& s, const solver::Target& t, const Problem& p) {
  if (!s.IsTunable() || s.Space(t, p).empty()) return {s.DefaultConfig(t, p)};
  const solver::SearchSpace space = s.Space(t, p);
  std::vector<solver::PerfConfig> out;
  for (uint64_t i = 0; i < space.Size(); ++i) {
    solver::PerfConfig c = space.At(i);
    if (s.IsValid(t, p, c).ok()) out.push_back(std::move(c));
  }
  return out;
}

std::map<std::string, backend::CompileRequest> BuildRequests(const solver::Solver& s, const solver::Target& t,
                                                              const Problem& p,
                                                              const std::vector<solver::PerfConfig>& configs,
                                                              uint64_t* solved) {
  std::map<std::string, backend::CompileRequest> out;
  for (const solver::PerfConfig& c : configs) {
    absl::StatusOr<solver::Solution> sol = s.GetSolution(t, p, c);
    if (!sol.ok()) continue;
    if (solved != nullptr) ++*solved;
    for (const solver::KernelBuild& k : sol->kernels) {
      absl::StatusOr<backend::CompileRequest> req = solver::CompileRequestFor(k, t.arch);
      if (req.ok()) out.try_emplace(backend::KernelIdentity(t.backend, "any", *req), *std::move(req));
    }
  }
  return out;
}

std::set<std::string> BuildKeys(const solver::Solver& s, const solver::Target& t, const Problem& p,
                                const std::vector<solver::PerfConfig>& configs, uint64_t* solved) {
  std::set<std::string> keys;
  for (auto& [key, req] : BuildRequests(s, t, p, configs, solved)) keys.insert(key);
  return keys;
}

}  // namespace tuna::search
