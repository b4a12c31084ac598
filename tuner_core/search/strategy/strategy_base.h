// Shared machinery of the strategies (internal to search/strategy): point indices, the
// deterministic PRNG, prior handling, the budget and the no-repeat rule.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tuner_core/search/strategy/strategy.h"

namespace tuna::search::internal {

// splitmix64: tiny, fast and identical on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed = 1) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n); n > 0. The modulo bias is below 2^-40 for the sizes used here.
  uint64_t Below(uint64_t n) { return Next() % n; }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

template <typename T>
void Shuffle(std::vector<T>& v, Rng& rng) {
  for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.Below(i)]);
}

// Orders `indices` (points of `space`) by a seeded hash of each point's values: a random
// permutation for one space, and the same relative order for the configs two spaces share (a
// solver's space on two problems), so searches of different problems draw their random points
// in the same order and share kernel builds wherever the same configs are valid for both.
void SortBySharedHash(const solver::SearchSpace& space, uint64_t seed, std::vector<uint64_t>& indices);

// Spaces up to this many points are enumerated (and filtered) once at Start.
inline constexpr uint64_t kEnumerateLimit = uint64_t{1} << 21;
// At most this many valid points are scored to choose the score's seeds (a seeded sample of the
// valid points when there are more).
inline constexpr uint64_t kScoreSampleLimit = 50000;

// Handles the contract common to all strategies; subclasses supply Propose().
class StrategyBase : public SearchStrategy {
 public:
  absl::Status Start(const StrategyInput& input) final;
  std::vector<solver::PerfConfig> Next(size_t n) final;
  void Observe(const std::vector<Observation>& observations) override;
  std::optional<uint64_t> PlannedTotal() const override;
  ScoreUse score_use() const override { return score_use_; }

 protected:
  // Called at the end of Start.
  virtual void OnStart() {}
  // Up to n indices of valid points not yet proposed (use IsFresh / MarkProposed helpers are
  // applied by Next: Propose must only avoid duplicates within its own batch and with seen_).
  // Empty when the strategy has nothing more to offer.
  virtual std::vector<uint64_t> Propose(size_t n) = 0;

  bool Seen(uint64_t index) const { return seen_.count(index) != 0; }
  bool Valid(uint64_t index) const;
  // Valid points (ascending) when the space is small enough to enumerate.
  bool enumerated() const { return enumerated_; }
  const std::vector<uint64_t>& valid_points() const { return valid_; }
  uint64_t space_size() const { return size_; }
  const StrategyInput& input() const { return input_; }
  Rng& rng() { return rng_; }
  // The score of each index (StrategyInput::score; scores are kept, so each point is scored
  // once): false, with `out` untouched, when there is no score or it failed.
  bool Scores(const std::vector<uint64_t>& indices, std::vector<double>& out);
  bool has_score() const { return input_.score != nullptr && score_use_.error.empty(); }

 private:
  // Puts the score's best valid points after the prior (Start).
  void SeedFromScore();

  StrategyInput input_;
  uint64_t size_ = 0;
  bool enumerated_ = false;
  std::vector<uint64_t> valid_;
  std::vector<uint64_t> prior_;  // valid prior indices, deduplicated, in order
  size_t prior_pos_ = 0;
  std::unordered_set<uint64_t> seen_;
  uint64_t proposed_ = 0;
  bool done_ = false;
  Rng rng_;
  ScoreUse score_use_;
  std::unordered_map<uint64_t, double> scores_;
};

}  // namespace tuna::search::internal
