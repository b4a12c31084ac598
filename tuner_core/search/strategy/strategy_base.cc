#include "tuner_core/search/strategy/strategy_base.h"

#include <algorithm>

namespace tuna::search::internal {

std::optional<uint64_t> IndexOf(const solver::SearchSpace& space, const solver::PerfConfig& config) {
  const auto& axes = space.axes();
  if (config.values.size() != axes.size()) return std::nullopt;
  uint64_t index = 0;
  for (size_t a = 0; a < axes.size(); ++a) {
    const auto& values = axes[a].values;
    auto it = std::find(values.begin(), values.end(), config.values[a]);
    if (it == values.end()) return std::nullopt;
    index = index * values.size() + static_cast<uint64_t>(it - values.begin());
  }
  return index;
}

bool StrategyBase::Valid(uint64_t index) const {
  if (!input_.is_valid) return true;
  return input_.is_valid(input_.space.At(index));
}

absl::Status StrategyBase::Start(const StrategyInput& input) {
  if (input.space.empty()) return absl::InvalidArgumentError("search space has no axes");
  for (const auto& axis : input.space.axes()) {
    if (axis.values.empty()) {
      return absl::InvalidArgumentError("search space axis '" + axis.name + "' has no values");
    }
  }
  input_ = input;
  size_ = input_.space.Size();
  rng_ = Rng(input_.seed * 0x2545f4914f6cdd1dULL + 0x1234567ULL);
  seen_.clear();
  valid_.clear();
  prior_.clear();
  prior_pos_ = 0;
  proposed_ = 0;
  done_ = false;
  enumerated_ = size_ <= kEnumerateLimit;
  if (enumerated_) {
    for (uint64_t i = 0; i < size_; ++i)
      if (Valid(i)) valid_.push_back(i);
  }
  std::unordered_set<uint64_t> in_prior;
  for (const auto& config : input_.prior) {
    std::optional<uint64_t> index = IndexOf(input_.space, config);
    if (!index || !in_prior.insert(*index).second) continue;
    if (!input_.is_valid || input_.is_valid(config)) prior_.push_back(*index);
  }
  OnStart();
  return absl::OkStatus();
}

std::vector<solver::PerfConfig> StrategyBase::Next(size_t n) {
  std::vector<solver::PerfConfig> out;
  if (done_ || n == 0) return out;
  auto room = [&] {
    return input_.budget == 0 ? n - out.size()
                              : std::min<uint64_t>(n - out.size(), input_.budget - proposed_);
  };
  auto take = [&](uint64_t index) {
    seen_.insert(index);
    ++proposed_;
    out.push_back(input_.space.At(index));
  };
  while (room() > 0 && prior_pos_ < prior_.size()) {
    uint64_t index = prior_[prior_pos_++];
    if (!Seen(index)) take(index);
  }
  if (room() > 0) {
    for (uint64_t index : Propose(room())) {
      if (room() == 0) break;
      if (!Seen(index)) take(index);  // Propose should never repeat; this keeps the contract
    }
  }
  if (out.empty()) done_ = true;
  return out;
}

void StrategyBase::Observe(const std::vector<Observation>& observations) { (void)observations; }

std::optional<uint64_t> StrategyBase::PlannedTotal() const {
  if (!enumerated_) return input_.budget == 0 ? std::nullopt : std::optional<uint64_t>(input_.budget);
  uint64_t total = valid_.size();
  return input_.budget == 0 ? total : std::min(total, input_.budget);
}

}  // namespace tuna::search::internal
