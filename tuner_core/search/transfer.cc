#include "tuner_core/search/transfer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace tuna::search {

std::vector<TransferPoint> AggregateTransfer(const std::vector<TransferRun>& runs, size_t limit) {
  // The fastest time of each (problem, params), then of each problem.
  std::map<std::pair<size_t, std::string>, double> fastest;
  std::map<size_t, double> problem_best;
  for (size_t problem = 0; problem < runs.size(); ++problem) {
    for (const TransferTime& s : runs[problem].times) {
      if (!std::isfinite(s.ms) || s.ms <= 0) continue;
      auto [it, fresh] = fastest.try_emplace({problem, s.params}, s.ms);
      if (!fresh) it->second = std::min(it->second, s.ms);
      auto [best, first] = problem_best.try_emplace(problem, s.ms);
      if (!first) best->second = std::min(best->second, s.ms);
    }
  }
  std::map<std::string, TransferPoint> by_params;
  for (const auto& [key, ms] : fastest) {
    TransferPoint& p = by_params[key.second];
    p.slowdown += std::log2(ms / problem_best[key.first]);
    ++p.problems;
  }
  std::vector<TransferPoint> points;
  points.reserve(by_params.size());
  for (auto& [params, p] : by_params) {
    p.params = params;
    p.slowdown /= p.problems;
    points.push_back(std::move(p));
  }
  std::sort(points.begin(), points.end(), [](const TransferPoint& a, const TransferPoint& b) {
    if (a.slowdown != b.slowdown) return a.slowdown < b.slowdown;
    if (a.problems != b.problems) return a.problems > b.problems;
    return a.params < b.params;
  });
  if (points.size() > limit) points.resize(limit);
  return points;
}

}  // namespace tuna::search
