// Feature rows of the learned heuristics: a problem (MIOpen-key fields, data type, layouts,
// direction, the target's CU count) as floats, and a perf config's axis values appended by axis
// name. The names are written into the models' metadata, so a model is only used with the
// feature layout it was trained on (FeatureLayoutVersion). Pure functions, thread-safe.
#pragma once

#include <string>
#include <vector>

#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/perf_config.h"
#include "tuner_core/solver/target.h"

namespace tuna::heuristics {

// Bumped whenever ProblemFeatures changes meaning; a model of another layout is not used.
inline constexpr int kFeatureLayoutVersion = 1;

// The names of ProblemFeatures' columns, in order.
const std::vector<std::string>& ProblemFeatureNames();
// Categorical columns (direction, data_type, layouts, mode, spatial_dims): a value never seen
// in training puts a problem out of a model's range.
bool IsCategoricalFeature(const std::string& name);

std::vector<float> ProblemFeatures(const Problem& p, const solver::Target& target);

// The config's values for `axes` (by name; NaN where the config's space has no such axis).
std::vector<float> ConfigFeatures(const solver::SearchSpace& space, const solver::PerfConfig& config,
                                  const std::vector<std::string>& axes);

}  // namespace tuna::heuristics
