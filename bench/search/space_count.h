// What a tunable solver's space holds for a problem, without compiling: its valid configs (every
// one, in odometer order) and the kernel builds they need (KernelIdentity: source, options,
// entries, arch; one per distinct key). distinct_builds counts a driver file with it and
// search_bench sizes its exhaustive tables with it before measuring.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {

// The valid configs of `s` for `p` in odometer order; the default config alone for a solver that
// is not tunable or whose space is empty.
std::vector<solver::PerfConfig> ValidConfigs(const solver::Solver& s, const solver::Target& t, const Problem& p);

// The build keys `configs` need (the compiler version is part of a key; counts do not depend on
// its value). Configs whose solution or build request fails add nothing; `solved` (optional)
// gets the number of configs whose solution succeeded.
std::set<std::string> BuildKeys(const solver::Solver& s, const solver::Target& t, const Problem& p,
                                const std::vector<solver::PerfConfig>& configs, uint64_t* solved = nullptr);

// The same builds with their compile requests, by key.
std::map<std::string, backend::CompileRequest> BuildRequests(const solver::Solver& s, const solver::Target& t,
                                                              const Problem& p,
                                                              const std::vector<solver::PerfConfig>& configs,
                                                              uint64_t* solved = nullptr);

}  // namespace tuna::search
