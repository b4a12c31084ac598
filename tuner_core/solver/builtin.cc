#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna::solver {

const SolverRegistry& SolverRegistry::Builtin() {
  // Built once, never mutated afterwards: safe to share between threads.
  static const SolverRegistry* registry = [] {
    SolverList all;
    auto append = [&all](SolverList set) {
      for (auto& entry : set) all.push_back(std::move(entry));
    };
    append(NaiveSolvers());
    append(GpuTunableSolvers());
    append(CpuTunableSolvers());
    return new SolverRegistry(std::move(all));
  }();
  return *registry;
}

}  // namespace tuna::solver
