// `tuna heuristics train|eval` and `tuna export --heuristics`: the learned heuristics
// (tuner_core/heuristics) trained from and evaluated against tuning sessions in the store.
//
// Training data per session (SQL in schema/store: result_store for the verified find results,
// sample_store for eval_sample): every verified find result gives a solver's time for a config;
// every passed candidate of an eval step gives a (params, time) of a tunable solver for a config
// (the fastest when timed more than once). Configs are merged across sessions by the SHA-256 of
// their canonical driver line. All sessions must share one target (arch, CU count, backend):
// InvalidArgument naming the first that differs.
//
// Threads: the calling thread only. Errors: NotFound (no such session; no models of the session's
// basename in the model dir), InvalidArgument (mixed targets, nothing to train on, no held-out
// config), the store's codes, the models' errors.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "tuner_core/heuristics/evaluation.h"
#include "tuner_core/heuristics/training.h"

namespace tuna::heuristics_cli {

// The sessions' data as training records (one per config, merged across sessions).
absl::StatusOr<heuristics::TrainingSet> ReadTrainingSet(schema::Database& db, const std::vector<int64_t>& sessions,
                                                        int page_size = 10000);

struct TrainRequest {
  std::vector<int64_t> sessions;
  std::string output_dir;
  std::optional<std::string> basename;  // override (the exporter's file basename)
  heuristics::TrainOptions options;
};

struct TrainOutcome {
  heuristics::TrainReport report;
  std::string basename;
  std::vector<std::string> files;  // written, metadata last
  size_t predictors = 0;
  bool picker = false;
};

absl::StatusOr<TrainOutcome> TrainFromSessions(schema::Database& db, const TrainRequest& request);

struct EvalOutcome {
  heuristics::EvalReport report;
  std::string basename;
  int64_t session_configs = 0;  // configs of the session with timings
  int64_t trained_on = 0;       // of those, configs the models were trained on (not evaluated)
};

// Makes the MeasureFn of `heuristics eval --measure` for the session's data (its target and
// backend): called once, after the held-out configs are known; its error is EvaluateSession's.
using MeasureFactory = std::function<absl::StatusOr<heuristics::MeasureFn>(const heuristics::TrainingSet&)>;

// The models of the session's basename in `model_dir`, evaluated on the session's configs they
// were not trained on (metadata train_configs); with `measure`, configs the session never timed
// are timed by the MeasureFn it makes (evaluation.h).
absl::StatusOr<EvalOutcome> EvaluateSession(schema::Database& db, int64_t session_id, const std::string& model_dir,
                                            const MeasureFactory& measure = nullptr);

}  // namespace tuna::heuristics_cli
