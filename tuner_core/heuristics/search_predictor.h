// The learned perf-config predictors of a model directory as the search's warm start
// (search::PredictorFn, TuneOptions::predictor): what `tuna tune --heuristics-model DIR` and
// `tuna worker --heuristics-model DIR` pass to the tuner.
//
// DIR is what `tuna heuristics train -o DIR` or `tuna export --heuristics` wrote (an exported
// db directory, the runtime's MIOPEN_SYSTEM_DB_PATH): one set of models per target, each named
// by its <base>_metadata.tn.json (models.h). Every set in DIR is loaded once, here. A problem on
// a target is served by the set of the target's db basename (runtime::MakeDbFiles, as the
// runtime finds its models), else by a set trained on the same arch and backend (the CU count
// is a feature whose range the models check); then by that set's predictor of the solver
// (config_scorer.h), when the problem is in its training range.
//
// Threads: the predictor and the scores it returns hold shared pointers to immutable models and
// may be used from any thread. Errors (LoadSearchPredictor): NotFound for a DIR that does not
// exist, InvalidArgument for one without models, and Models::Load's error (naming the file) for
// a set that does not load: nothing is half-loaded. The predictor itself answers NotFound (no
// set for the target, no predictor for the solver) or OutOfRange (the problem is outside the
// training range): the search then runs without it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/search/tuner.h"

namespace tuna::heuristics {

struct SearchPredictor {
  search::PredictorFn predictor;
  // One line per model set loaded: "<base>: predictors for A, B (sessions 1, 2)".
  std::vector<std::string> sets;
};

absl::StatusOr<SearchPredictor> LoadSearchPredictor(const std::string& dir);

}  // namespace tuna::heuristics
