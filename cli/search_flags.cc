#include "cli/search_flags.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/heuristics/search_predictor.h"

namespace tuna::cli {

void AddSearchFlags(CLI::App* cmd, SearchFlags* f, const std::string& unit,
                    const std::string& strategy_help) {
  cmd->add_option("--strategy", f->strategy, strategy_help)
      ->check(CLI::IsMember({"exhaustive", "random", "model"}))
      ->capture_default_str();
  f->budget_option = cmd->add_option(
      "--budget", f->budget,
      "candidates per " + unit + " (0 = all valid; default 48 for model, all for exhaustive/random)");
  f->patience_option = cmd->add_option(
      "--patience", f->patience,
      "stop a " + unit + "'s search after N candidates in a row without a 1 % gain (0 = never; "
      "default 16 for model)");
  f->whole_space_option = cmd->add_option(
      "--whole-space", f->whole_space,
      "time every valid config of a " + unit + " whose space has at most N valid configs (no "
      "budget, no patience; 0 = never; default " + std::to_string(search::kWholeSpace) +
      ", 0 when --budget or --patience is given)");
  cmd->add_option("--time-limit-per-job", f->time_limit_s,
                  "seconds a " + unit + "'s search may take; the batch in flight finishes (0 = none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", f->seed, "strategy and data seed");
  cmd->add_option("--outclassed", f->outclassed,
                  "stop a " + unit + "'s search once, after 8 candidates, its best is more than F times "
                  "slower than another solver's verified time on the same problem (it cannot be "
                  "picked; 0 = never)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--no-specialize", f->no_specialize,
               "keep each " + unit + "'s winner as the build that serves every problem: skip the "
               "finishing step that rebuilds it for its problem alone (sizes compiled in, where its "
               "solver offers that), times both and keeps the faster");
  cmd->add_option("--heuristics-model", f->heuristics_model,
                  "warm-start each " + unit + "'s search from the perf-config predictors in DIR "
                  "(`tuna heuristics train -o DIR`, `tuna export --heuristics`): their best "
                  "configs are tried right after the default");
}

absl::StatusOr<ResolvedSearch> ResolveSearch(const SearchFlags& f) {
  absl::StatusOr<search::StrategyKind> kind = search::ParseStrategyKind(f.strategy);
  if (!kind.ok()) return kind.status();
  const bool budget_set = f.budget_option != nullptr && f.budget_option->count() > 0;
  const bool patience_set = f.patience_option != nullptr && f.patience_option->count() > 0;
  const bool whole_set = f.whole_space_option != nullptr && f.whole_space_option->count() > 0;
  ResolvedSearch r;
  r.strategy = *kind;
  r.budget = budget_set ? f.budget : search::DefaultBudget(*kind);
  r.patience = patience_set ? f.patience : search::DefaultPatience(*kind);
  r.whole_space = whole_set ? f.whole_space : (budget_set || patience_set ? 0 : search::kWholeSpace);
  r.time_limit_s = std::max(0.0, f.time_limit_s);
  r.seed = f.seed;
  r.outclassed = f.outclassed;
  r.specialize = !f.no_specialize;
  if (!f.heuristics_model.empty()) {
    absl::StatusOr<heuristics::SearchPredictor> p = heuristics::LoadSearchPredictor(f.heuristics_model);
    if (!p.ok()) return absl::Status(p.status().code(), absl::StrCat("--heuristics-model: ", p.status().message()));
    for (const std::string& set : p->sets) spdlog::info("search warm start from heuristics models {}", set);
    std::error_code ec;  // absolute, for executor children that may start elsewhere
    const std::filesystem::path dir = std::filesystem::absolute(f.heuristics_model, ec);
    r.heuristics_model = ec ? f.heuristics_model : dir.string();
    r.predictor = std::move(p->predictor);
  }
  return r;
}

}  // namespace tuna::cli
