#include "tuner_core/search/strategy/strategy_base.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tuna::search::internal {

void SortBySharedHash(const solver::SearchSpace& space, uint64_t seed, std::vector<uint64_t>& indices) {
  std::vector<std::pair<uint64_t, uint64_t>> keyed;
  keyed.reserve(indices.size());
  for (uint64_t index : indices) {
    Rng h(seed);
    uint64_t key = h.Next();
    for (int64_t v : space.At(index).values) key = Rng(key ^ static_cast<uint64_t>(v)).Next();
    keyed.push_back({key, index});
  }
  std::sort(keyed.begin(), keyed.end());
  for (size_t i = 0; i < keyed.size(); ++i) indices[i] = keyed[i].second;
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
  score_use_ = {};
  scores_.clear();
  enumerated_ = size_ <= kEnumerateLimit;
  if (enumerated_) {
    for (uint64_t i = 0; i < size_; ++i)
      if (Valid(i)) valid_.push_back(i);
  }
  std::unordered_set<uint64_t> in_prior;
  for (const auto& config : input_.prior) {
    std::optional<uint64_t> index = input_.space.Index(config);
    if (!index || !in_prior.insert(*index).second) continue;
    if (!input_.is_valid || input_.is_valid(config)) prior_.push_back(*index);
  }
  if (input_.score && input_.scored_first > 0) SeedFromScore();
  OnStart();
  return absl::OkStatus();
}

bool StrategyBase::Scores(const std::vector<uint64_t>& indices, std::vector<double>& out) {
  if (!has_score()) return false;
  std::vector<uint64_t> missing;
  std::unordered_set<uint64_t> asked;
  std::vector<solver::PerfConfig> configs;
  for (uint64_t index : indices) {
    if (scores_.count(index) || !asked.insert(index).second) continue;
    missing.push_back(index);
    configs.push_back(input_.space.At(index));
  }
  if (!configs.empty()) {
    absl::StatusOr<std::vector<float>> s = input_.score(configs);
    if (s.ok() && s->size() != configs.size()) {
      s = absl::InternalError(absl::StrCat("the score gave ", s->size(), " values for ", configs.size(), " configs"));
    }
    if (!s.ok()) {
      score_use_.error = s.status().ToString();
      scores_.clear();
      return false;
    }
    score_use_.scored += configs.size();
    for (size_t i = 0; i < missing.size(); ++i) {
      const double v = (*s)[i];
      scores_[missing[i]] = std::isfinite(v) ? v : std::numeric_limits<double>::max();
    }
  }
  out.clear();
  out.reserve(indices.size());
  for (uint64_t index : indices) out.push_back(scores_.at(index));
  return true;
}

void StrategyBase::SeedFromScore() {
  // The candidates: every valid point not in the prior, or a seeded sample of them (its own
  // generator, so that a score leaves the strategy's own random choices as they were).
  std::unordered_set<uint64_t> in_prior(prior_.begin(), prior_.end());
  std::vector<uint64_t> candidates;
  Rng sample_rng(input_.seed * 0x9e3779b97f4a7c15ULL + 0x5eed5c0eULL);
  if (enumerated_) {
    for (uint64_t index : valid_)
      if (!in_prior.count(index)) candidates.push_back(index);
    if (candidates.size() > kScoreSampleLimit) {
      Shuffle(candidates, sample_rng);
      candidates.resize(kScoreSampleLimit);
    }
  } else {
    std::unordered_set<uint64_t> drawn;
    for (int misses = 0; candidates.size() < kScoreSampleLimit && misses < 10000;) {
      const uint64_t index = sample_rng.Below(size_);
      if (in_prior.count(index) || drawn.count(index) || !Valid(index)) {
        ++misses;
        continue;
      }
      misses = 0;
      drawn.insert(index);
      candidates.push_back(index);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  std::vector<double> s;
  if (candidates.empty() || !Scores(candidates, s)) return;
  std::vector<std::pair<double, uint64_t>> ranked;
  ranked.reserve(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) ranked.push_back({s[i], candidates[i]});
  // Seeds beyond the budget would never be proposed: they are not counted as seeded.
  uint64_t room = input_.scored_first;
  if (input_.budget > 0) room = std::min<uint64_t>(room, input_.budget - std::min<uint64_t>(input_.budget, prior_.size()));
  const size_t k = static_cast<size_t>(std::min<uint64_t>(room, ranked.size()));
  // Ties are broken by index: the same seeds on every platform.
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<ptrdiff_t>(k), ranked.end());
  for (size_t i = 0; i < k; ++i) prior_.push_back(ranked[i].second);
  score_use_.seeded = k;
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
