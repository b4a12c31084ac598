#include "tuner_core/solver/registry.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

namespace tuna::solver {

SolverRegistry::SolverRegistry(
    std::vector<std::pair<uint64_t, std::unique_ptr<Solver>>> solvers) {
  std::set<uint64_t> ids;
  std::set<std::string> names;
  for (auto& [id, solver] : solvers) {
    const std::string name(solver->Name());
    if (id == 0 || !ids.insert(id).second || !names.insert(name).second) {
      std::fprintf(stderr, "tuna: solver table is broken at id %llu (%s)\n",
                   static_cast<unsigned long long>(id), name.c_str());
      std::abort();
    }
    all_.push_back({id, solver.get()});
    owned_.push_back(std::move(solver));
  }
}

const RegisteredSolver* SolverRegistry::ById(uint64_t id) const {
  for (const auto& r : all_)
    if (r.id == id) return &r;
  return nullptr;
}

const RegisteredSolver* SolverRegistry::ByName(std::string_view name) const {
  for (const auto& r : all_)
    if (r.solver->Name() == name) return &r;
  return nullptr;
}

std::vector<RegisteredSolver> SolverRegistry::Applicable(const Target& target,
                                                         const Problem& problem) const {
  std::vector<RegisteredSolver> out;
  for (const auto& r : all_) {
    if (r.solver->IsApplicable(target, problem).ok()) out.push_back(r);
  }
  return out;
}

}  // namespace tuna::solver
