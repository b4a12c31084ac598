#include "tuner_core/search/strategy/strategy.h"

#include <cmath>
#include <string>

namespace tuna::search {

double AxisFeature(int64_t value) {
  return value > 0 ? std::log2(static_cast<double>(value)) : -std::log2(1.0 + static_cast<double>(-value));
}

absl::StatusOr<StrategyKind> ParseStrategyKind(std::string_view name) {
  if (name == "exhaustive") return StrategyKind::kExhaustive;
  if (name == "random") return StrategyKind::kRandom;
  if (name == "model") return StrategyKind::kModel;
  return absl::InvalidArgumentError("unknown strategy '" + std::string(name) +
                                    "' (exhaustive, random, model)");
}

std::string_view StrategyKindName(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kExhaustive: return "exhaustive";
    case StrategyKind::kRandom: return "random";
    case StrategyKind::kModel: return "model";
  }
  return "?";
}

uint64_t DefaultBudget(StrategyKind kind) { return kind == StrategyKind::kModel ? 48 : 0; }

uint64_t DefaultPatience(StrategyKind kind) { return kind == StrategyKind::kModel ? 16 : 0; }

std::unique_ptr<SearchStrategy> MakeStrategy(StrategyKind kind) {
  switch (kind) {
    case StrategyKind::kExhaustive: return NewExhaustiveStrategy();
    case StrategyKind::kRandom: return NewRandomStrategy();
    case StrategyKind::kModel: return NewModelStrategy();
  }
  return NewExhaustiveStrategy();
}

}  // namespace tuna::search
