#include "tuner_core/solver/conv/flattening_solver.h"

#include <utility>

#include "tuner_core/problem/flatten.h"

namespace tuna::solver {
namespace {

Problem Planned(const Problem& p) { return FlattenTo2d(p).value_or(p); }

}  // namespace

absl::Status FlatteningSolver::IsApplicable(const Target& target, const Problem& problem) const {
  return inner().IsApplicable(target, Planned(problem));
}

SearchSpace FlatteningSolver::Space(const Target& target, const Problem& problem) const {
  return inner().Space(target, Planned(problem));
}

PerfConfig FlatteningSolver::DefaultConfig(const Target& target, const Problem& problem) const {
  return inner().DefaultConfig(target, Planned(problem));
}

absl::Status FlatteningSolver::IsValid(const Target& target, const Problem& problem, const PerfConfig& config) const {
  return inner().IsValid(target, Planned(problem), config);
}

absl::StatusOr<Solution> FlatteningSolver::GetSolution(const Target& target, const Problem& problem,
                                                       const PerfConfig& config) const {
  return inner().GetSolution(target, Planned(problem), config);
}

std::optional<PerfConfig> FlatteningSolver::Specialize(const Target& target, const Problem& problem,
                                                       const PerfConfig& config) const {
  return inner().Specialize(target, Planned(problem), config);
}

std::unique_ptr<Solver> Flattening(std::unique_ptr<Solver> s) {
  if (dynamic_cast<const FlatteningSolver*>(s.get()) != nullptr) return s;
  return std::make_unique<FlatteningSolver>(std::move(s));
}

SolverList Flattening(SolverList list) {
  for (auto& entry : list) entry.second = Flattening(std::move(entry.second));
  return list;
}

const Solver& Unflattened(const Solver& s) {
  const auto* f = dynamic_cast<const FlatteningSolver*>(&s);
  return f != nullptr ? f->inner() : s;
}

}  // namespace tuna::solver
