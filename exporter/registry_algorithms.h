// The find db's algorithm field from tuna's solver registry (solver -> Algorithm family ->
// MIOpen's directional name). Kept out of //exporter so the exporter does not link solvers.
#pragma once

#include "exporter/exporter.h"
#include "tuner_core/solver/registry.h"

namespace tuna::exporter {

// NotFound for a solver name the registry does not hold. The registry must outlive the resolver.
AlgorithmResolver RegistryAlgorithmResolver(const solver::SolverRegistry& registry);

}  // namespace tuna::exporter
