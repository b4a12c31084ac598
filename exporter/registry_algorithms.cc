#include "exporter/registry_algorithms.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace tuna::exporter {

AlgorithmResolver RegistryAlgorithmResolver(const solver::SolverRegistry& registry) {
  return [&registry](std::string_view name,
                     Direction direction) -> absl::StatusOr<std::string> {
    const solver::RegisteredSolver* s = registry.ByName(name);
    if (s == nullptr) {
      return absl::NotFoundError(absl::StrCat("solver ", std::string(name), " is not in the solver registry"));
    }
    return std::string(solver::FindDbAlgorithmName(s->solver->Algo(), direction));
  };
}

}  // namespace tuna::exporter
