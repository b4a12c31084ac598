// The learned heuristics of one target (MIOpen's TunaNet `<arch>.tn.model` and KernelTuningNet
// `*.ktn.model`, tuna's own format): a solver picker and a perf-config predictor per tunable
// solver, gradient-boosted trees (tuner_core/model) trained from tuning sessions
// (`tuna heuristics train`, training.h), plus a metadata file saying what they were trained on.
//
// Files in a db directory, next to the find / perf dbs of the same <base> (db::DbBasename):
//   <base>_metadata.tn.json   metadata (JSON): format, feature layout and names, feature ranges
//                             and seen categories, arch / CU count / backend, solver ids and
//                             names, predictor axes, training sessions and configs, holdout,
//                             XGBoost and tuna versions
//   <base>.tn.model           the picker: reg:squarederror over (problem features, one-hot
//                             solver) of log2(time / fastest solver's time): lower ranks earlier
//   <base>_<Solver>.ktn.model the predictor of one tunable solver: reg:squarederror over (problem
//                             features, axis values) of log2(time / best time of the problem), so
//                             a lower score is a faster config
// Model files are GbtModel's "TGBT" forests (tuner_core/model: trees grown by XGBoost, evaluated
// natively); every file is written as a temp and renamed, the metadata last.
//
// Range: a problem is in range when every categorical feature (direction, data type, layouts,
// mode, spatial dims) takes a value seen in training and every numeric feature lies within
// [min / 2, max * 2] of the training values; out of range, the runtime keeps its analytic
// fallback and default configs (and says so).
//
// Ownership and threads: a Models is immutable once built (Load / training.h) and every method
// is const and safe from any number of threads. Errors: NotFound (no metadata file, or no model
// for the solver asked), DataLoss (a file that does not parse), FailedPrecondition (a model of
// another feature layout or target), OutOfRange (the problem is outside the training range).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/model/gbt_model.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::heuristics {

inline constexpr int kModelFormatVersion = 1;

struct FeatureStats {
  float min = 0, max = 0;
  std::vector<float> seen;  // categorical features only: the values seen in training, sorted
};

struct PickerMeta {
  std::string file;
  std::vector<std::pair<uint64_t, std::string>> solvers;  // (id, name), the one-hot order
  int64_t problems = 0;
};

struct PredictorMeta {
  std::string solver;
  std::string file;
  std::vector<std::string> axes;  // the config columns after the problem features
  int64_t problems = 0;
  int64_t rows = 0;
};

struct ModelMetadata {
  int format = kModelFormatVersion;
  int feature_layout = 0;
  std::string basename, arch, backend;
  int num_cu = 0;
  std::string library;       // "xgboost 1.7.4"
  std::string tuna_version;
  std::vector<int64_t> sessions;
  std::vector<std::string> problem_features;
  std::vector<FeatureStats> feature_stats;  // one per problem feature
  std::optional<PickerMeta> picker;
  std::vector<PredictorMeta> predictors;
  double holdout = 0;
  std::vector<std::string> train_configs;  // config keys (SHA-256 of the canonical line) trained on
};

// File names of a basename.
std::string MetadataFileName(const std::string& basename);                           // _metadata.tn.json
std::string PickerFileName(const std::string& basename);                             // .tn.model
std::string PredictorFileName(const std::string& basename, const std::string& solver);  // _<S>.ktn.model

class Models {
 public:
  Models(ModelMetadata meta, std::optional<model::GbtModel> picker,
         std::map<std::string, model::GbtModel> predictors);

  // The models of `basename` in `dir`. NotFound when the metadata file is absent.
  static absl::StatusOr<std::shared_ptr<const Models>> Load(const std::string& dir, const std::string& basename);
  // Writes every file into `dir` (created if missing): temps first, renamed at the end, metadata
  // last. Returns the paths written.
  absl::StatusOr<std::vector<std::string>> Write(const std::string& dir) const;

  const ModelMetadata& metadata() const { return meta_; }
  bool has_picker() const { return picker_.has_value(); }
  bool HasPredictor(const std::string& solver) const { return predictors_.count(solver) > 0; }

  // OK, or OutOfRange naming the first feature outside the training range.
  absl::Status CheckRange(const Problem& problem, const solver::Target& target) const;

  // `applicable` (given in the caller's fallback order) ranked by the picker; solvers the picker
  // was not trained on keep their given order after the ones it knows. OutOfRange when the
  // problem is out of range or the picker knows none of them; NotFound without a picker.
  absl::StatusOr<std::vector<solver::RegisteredSolver>> RankSolvers(
      const Problem& problem, const solver::Target& target,
      const std::vector<solver::RegisteredSolver>& applicable) const;

  // Predicted log2 slowdown of each config against the problem's best (lower is faster).
  // NotFound without a predictor for `solver`; OutOfRange as CheckRange.
  absl::StatusOr<std::vector<float>> ScoreConfigs(const Problem& problem, const solver::Target& target,
                                                  const std::string& solver, const solver::SearchSpace& space,
                                                  const std::vector<solver::PerfConfig>& configs) const;

 private:
  ModelMetadata meta_;
  std::optional<model::GbtModel> picker_;
  std::map<std::string, model::GbtModel> predictors_;
};

}  // namespace tuna::heuristics
