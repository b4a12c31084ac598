// The search flags `tuna tune` and `tuna worker` share (--strategy, --budget, --patience,
// --time-limit-per-job, --seed, --outclassed, --no-specialize, --heuristics-model, --whole-space) and how an unset
// budget or patience follows from the strategy (search::DefaultBudget / DefaultPatience), and an
// unset --whole-space from them (search::kWholeSpace unless --budget or --patience is given).
#pragma once

#include <cstdint>
#include <string>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/tuner.h"

namespace tuna::cli {

struct SearchFlags {
  std::string strategy = std::string(search::StrategyKindName(search::kDefaultStrategy));
  uint64_t budget = 0;
  uint64_t patience = 0;
  double time_limit_s = 0;
  uint64_t seed = 1;
  double outclassed = 2.0;
  bool no_specialize = false;
  std::string heuristics_model;  // a directory of learned models; empty = none
  uint64_t whole_space = 0;
  // Set by AddSearchFlags: whether --budget / --patience / --whole-space were given (read after
  // parsing).
  const CLI::Option* budget_option = nullptr;
  const CLI::Option* patience_option = nullptr;
  const CLI::Option* whole_space_option = nullptr;
};

// The flags on `cmd`; `unit` names what one search covers ("tunable solver", "perf job") and
// `strategy_help` describes --strategy. `flags` must outlive the parse.
void AddSearchFlags(CLI::App* cmd, SearchFlags* flags, const std::string& unit,
                    const std::string& strategy_help);

struct ResolvedSearch {
  search::StrategyKind strategy = search::kDefaultStrategy;
  uint64_t budget = 0;
  uint64_t patience = 0;
  uint64_t whole_space = 0;  // search::TuneOptions::whole_space
  double time_limit_s = 0;
  uint64_t seed = 1;
  double outclassed = 2.0;  // search::TuneOptions::outclassed_factor (0 = off)
  bool specialize = true;   // search::TuneOptions::specialize
  // --heuristics-model: the directory (for child processes to load again) and its perf-config
  // predictors, loaded once here (tuner_core/heuristics/search_predictor.h); null without it.
  std::string heuristics_model;
  search::PredictorFn predictor;
};

// InvalidArgument for an unknown strategy; LoadSearchPredictor's error for a --heuristics-model
// directory that does not load. Logs the model sets loaded.
absl::StatusOr<ResolvedSearch> ResolveSearch(const SearchFlags& flags);

}  // namespace tuna::cli
