// Test-only solvers for the search tests: a tunable "FaultSolver" whose single axis picks a
// correct candidate (the naive solver's solution) or a deliberately faulty one from
// kernels/cpu_conv/testonly_faults.cc. cpu backend only.
#pragma once

#include <memory>
#include <optional>

#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/solver.h"

namespace tuna::search::testing {

// Values of the "fault" axis.
enum Fault : int64_t {
  kCorrect = 0,       // the naive solver's solution
  kGarbage = 1,       // writes a wrong constant over the output       -> Incorrect
  kBrokenBuild = 2,   // #error at compile time                        -> CompileFailed
  kWritesNothing = 3, // leaves the (poisoned) output untouched        -> Incorrect
  kSpin = 4,          // busy-waits spin_ms in the launch              -> Timeout (watchdog)
  kSlow = 5,          // correct, but runs the naive kernel 3 times    -> Passed, slower
  kClobbersInputs = 6,  // correct output, then garbage over both inputs -> Passed; the next
                        // candidate still gets the original inputs
};

// Axis "fault" with the given values; DefaultConfig is the first value.
std::unique_ptr<solver::Solver> NewFaultSolver(std::vector<int64_t> faults, float spin_ms = 2000);

// A registry with the FaultSolver (id 9001, name "TestFaultSolver") and the three naive solvers.
std::unique_ptr<solver::SolverRegistry> FaultRegistry(std::vector<int64_t> faults, float spin_ms = 2000);

// The forward naive solver and the FaultSolver with a second axis, "SPECIAL" (not searched, 0),
// that its Specialize sets to 1: that build runs the fault `specialized` whatever "fault" says.
std::unique_ptr<solver::SolverRegistry> SpecializingRegistry(std::vector<int64_t> faults, int64_t specialized);

// The forward naive solver, "TestGenericSolver" (id 9002: the FaultSolver marked generic) and,
// with `with_specialised`, the FaultSolver itself (not generic).
std::unique_ptr<solver::SolverRegistry> GenericRegistry(std::vector<int64_t> faults, bool with_specialised);

}  // namespace tuna::search::testing
