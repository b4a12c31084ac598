// The solver registry as `solver` table rows (`tuna solvers update`, MITuna's --update_solvers).
#pragma once

#include <string>
#include <vector>

#include "schema/store/solver_store.h"
#include "tuner_core/solver/registry.h"

namespace tuna::admin {

// "FBW", "F", "BW", ...: the solver's directions in that fixed order.
std::string DirectionLetters(const solver::Solver& s);

// One record per registered solver, in registry order, all valid.
std::vector<schema::SolverRecord> SolverRecords(const solver::SolverRegistry& registry);

}  // namespace tuna::admin
