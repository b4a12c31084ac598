// The solver registry: the only place solver ids are assigned.
//
// Ids are stable forever (results and exported files refer to them): a removed solver keeps
// its id reserved; a new solver takes a new id. MIOpen's own solver names keep MIOpen's ids
// (ConvDirectNaiveConv{Fwd,Bwd,Wrw} = 85, 86, 87) so our find-db entries read naturally in
// MIOpen; tuna's own solvers use ids from 1000. The table is checked by a unit test.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

struct RegisteredSolver {
  uint64_t id = 0;
  const Solver* solver = nullptr;
};

class SolverRegistry {
 public:
  // Every solver tuna ships. Immutable and safe to share between threads.
  static const SolverRegistry& Builtin();

  // Takes ownership; ids must be unique and non-zero, names unique (checked: aborts otherwise,
  // since a bad table is a programming error caught by the registry test).
  explicit SolverRegistry(std::vector<std::pair<uint64_t, std::unique_ptr<Solver>>> solvers);

  const std::vector<RegisteredSolver>& All() const { return all_; }
  const RegisteredSolver* ById(uint64_t id) const;
  const RegisteredSolver* ByName(std::string_view name) const;
  // The solvers for this direction that are applicable to (target, problem), in id order.
  std::vector<RegisteredSolver> Applicable(const Target& target, const Problem& problem) const;

 private:
  std::vector<std::unique_ptr<Solver>> owned_;
  std::vector<RegisteredSolver> all_;
};

}  // namespace tuna::solver
