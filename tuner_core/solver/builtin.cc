#include "tuner_core/solver/conv/flattening_solver.h"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna::solver {

const SolverRegistry& SolverRegistry::Builtin() {
  // Built once, never mutated afterwards: safe to share between threads. Every tunable solver
  // also takes the 3-D problems that are 2-D problems on the same bytes (conv/flattening_solver.h);
  // the naive solvers, the device reference every result is verified against, compute each
  // problem as it is written.
  static const SolverRegistry* registry = [] {
    SolverList all;
    auto append = [&all](SolverList set) {
      for (auto& entry : set) all.push_back(std::move(entry));
    };
    append(NaiveSolvers());
    append(Flattening(GpuTunableSolvers()));
    append(Flattening(CpuTunableSolvers()));
    return new SolverRegistry(std::move(all));
  }();
  return *registry;
}

}  // namespace tuna::solver
