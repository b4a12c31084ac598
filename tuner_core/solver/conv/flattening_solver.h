// Every solver on the 3-D problems that are 2-D problems on the same bytes (problem/flatten.h).
//
// FlatteningSolver wraps one solver (`inner`) under its own name and id and plans every problem
// with FlattenTo2d(problem) where that exists, the problem itself otherwise: a 2-D solver then
// serves R(2+1)D's 1x3x3 and 3x1x1 layers and the 1x1x1 layers of 3-D networks with no copies, and
// its params, space, default, validity and finishing step are those of the 2-D problem. The
// buffers are the 3-D problem's (same element counts and order), so the solution runs on them and
// is verified against the 3-D reference like any other. Problems FlattenTo2d leaves alone
// (2-D ones, 3-D ones without identity dimensions) reach the inner solver unchanged.
// The builtin registry wraps every tunable solver so (builtin.cc; not the naive solvers, the device
// reference results are verified against), as do the channels-last and channel-pad adapters their
// inner solvers. Stateless; thread-safe like every solver.
#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <utility>

#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/conv/wrapping_solver.h"

namespace tuna::solver {

class FlatteningSolver : public WrappingSolver {
 public:
  explicit FlatteningSolver(std::unique_ptr<Solver> inner) : WrappingSolver(std::move(inner)) {}  // non-null

  std::string_view Name() const override { return inner().Name(); }

  TUNA_TUNABLE_SOLVER_VERBS
  std::optional<PerfConfig> Specialize(const Target& target, const Problem& problem,
                                       const PerfConfig& config) const override;
};

// `s` wrapped (a solver already wrapped is returned as it is).
std::unique_ptr<Solver> Flattening(std::unique_ptr<Solver> s);
// Every solver of `list` wrapped, ids kept.
SolverList Flattening(SolverList list);
// The solver a FlatteningSolver wraps, or `s` itself.
const Solver& Unflattened(const Solver& s);

}  // namespace tuna::solver
