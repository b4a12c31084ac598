#include "tuner_core/heuristics/config_scorer.h"

#include <algorithm>
#include <numeric>

namespace tuna::heuristics {

absl::StatusOr<ConfigScoreFn> MakeConfigScorer(std::shared_ptr<const Models> models, const Problem& problem,
                                               const solver::Target& target, const solver::Solver& solver) {
  const std::string name(solver.Name());
  if (!models->HasPredictor(name)) return absl::NotFoundError("no perf-config predictor for " + name);
  if (absl::Status st = models->CheckRange(problem, target); !st.ok()) return st;
  solver::SearchSpace space = solver.Space(target, problem);
  return ConfigScoreFn([models = std::move(models), problem, target, name, space = std::move(space)](
                           const std::vector<solver::PerfConfig>& configs) {
    return models->ScoreConfigs(problem, target, name, space, configs);
  });
}

absl::StatusOr<std::vector<solver::PerfConfig>> TopPredicted(const ConfigScoreFn& score, const Problem& problem,
                                                             const solver::Target& target, const solver::Solver& solver,
                                                             size_t k, uint64_t max_points) {
  const solver::SearchSpace space = solver.Space(target, problem);
  std::vector<solver::PerfConfig> valid;
  const uint64_t n = std::min(space.Size(), max_points);
  for (uint64_t i = 0; i < n; ++i) {
    solver::PerfConfig c = space.At(i);
    if (solver.IsValid(target, problem, c).ok()) valid.push_back(std::move(c));
  }
  absl::StatusOr<std::vector<float>> s = score(valid);
  if (!s.ok()) return s.status();
  std::vector<size_t> order(valid.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*s)[a] < (*s)[b]; });
  std::vector<solver::PerfConfig> out;
  for (size_t i = 0; i < order.size() && out.size() < k; ++i) out.push_back(valid[order[i]]);
  return out;
}

}  // namespace tuna::heuristics
