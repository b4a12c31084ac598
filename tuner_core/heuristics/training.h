// Training the learned heuristics (models.h) from tuning data given as plain values: the caller
// (heuristics/, `tuna heuristics train`) reads the sessions from the store; nothing here knows a
// database.
//
// Picker: a row per (problem, timed solver) whose features are the problem's and a one-hot of
// the solver; target = log2(time / the problem's fastest solver time), a regression (a pairwise
// ranking objective cannot split on the one-hot when, as is common, each solver wins on half of
// the problems: the pair gradients cancel at the root and greedy trees never start).
// Predictor, per tunable solver with samples: a row per (problem, timed config) with the
// problem's features and the config's axis values; target = log2(time / the problem's fastest
// sampled time of that solver). Samples whose params do not parse in the solver's space for the
// problem are skipped and counted.
//
// Split by config: a problem is held out when HeldOut(config_key, holdout, seed) (a hash of the
// key, so the same config is held out in every session and every run); held-out problems are
// neither trained on nor used for the feature ranges; the metadata lists the trained keys.
// Pure functions, thread-safe. Errors: InvalidArgument (no problem left to train on, a holdout
// outside [0, 1)), the model's errors.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/model/gbt_model.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::heuristics {

struct TimedParams {
  std::string params;
  double ms = 0;
};

// What the sessions measured for one config.
struct ProblemRecord {
  std::string config_key;  // SHA-256 of the canonical driver line
  Problem problem;
  std::map<std::string, double> solver_ms;                 // verified find time per solver
  std::map<std::string, std::vector<TimedParams>> samples;  // passed candidates per solver (fastest per params)
};

struct TrainingSet {
  solver::Target target;  // arch, num_cu, backend of the sessions
  std::string backend;    // "HIP", "CUDA", "CPU"
  std::string basename;   // db::DbBasename of the target
  std::vector<int64_t> sessions;
  std::vector<ProblemRecord> problems;
};

struct TrainOptions {
  double holdout = 0.2;  // share of configs held out for `tuna heuristics eval`
  uint64_t seed = 1;
  model::TrainParams picker{model::Objective::kRegression, 200, 6, 0.1, 1, 1, 0, 0};
  model::TrainParams predictor{model::Objective::kRegression, 200, 8, 0.1, 1, 1, 0, 0};
  std::string tuna_version;
  const solver::SolverRegistry* registry = nullptr;  // null = Builtin()
};

bool HeldOut(const std::string& config_key, double holdout, uint64_t seed);

struct TrainReport {
  int64_t train_problems = 0, held_out_problems = 0;
  int64_t picker_rows = 0;
  std::map<std::string, int64_t> predictor_rows;  // per solver
  int64_t skipped_samples = 0;                    // params that do not parse for their problem
};

absl::StatusOr<std::shared_ptr<const Models>> TrainModels(const TrainingSet& set, const TrainOptions& options,
                                                          TrainReport* report);

}  // namespace tuna::heuristics
