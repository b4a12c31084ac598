#include "admin/solver_records.h"

#include <algorithm>

namespace tuna::admin {

std::string DirectionLetters(const solver::Solver& s) {
  const std::vector<Direction> dirs = s.Directions();
  std::string out;
  for (Direction d : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    if (std::find(dirs.begin(), dirs.end(), d) != dirs.end()) out += DirectionName(d);
  }
  return out;
}

std::vector<schema::SolverRecord> SolverRecords(const solver::SolverRegistry& registry) {
  std::vector<schema::SolverRecord> out;
  for (const solver::RegisteredSolver& r : registry.All()) {
    schema::SolverRecord rec;
    rec.id = static_cast<int64_t>(r.id);
    rec.name = std::string(r.solver->Name());
    rec.tunable = r.solver->IsTunable();
    rec.directions = DirectionLetters(*r.solver);
    rec.is_dynamic = r.solver->IsDynamic();
    rec.valid = true;
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace tuna::admin
