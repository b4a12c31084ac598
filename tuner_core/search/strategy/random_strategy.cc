#include <unordered_set>

#include "tuner_core/search/strategy/strategy_base.h"

namespace tuna::search {
namespace {

// MIOpen's GenericSearch order (shuffle, truncate to the budget), but seeded: the same seed
// gives the same sequence, so a search can be reproduced and compared between strategies.
class RandomStrategy final : public internal::StrategyBase {
 public:
  std::string_view Name() const override { return "random"; }

 protected:
  void OnStart() override {
    order_ = valid_points();
    internal::Shuffle(order_, rng());
    cursor_ = 0;
    drawn_.clear();
  }
  std::vector<uint64_t> Propose(size_t n) override {
    std::vector<uint64_t> out;
    if (enumerated()) {
      while (out.size() < n && cursor_ < order_.size()) {
        uint64_t index = order_[cursor_++];
        if (!Seen(index)) out.push_back(index);
      }
      return out;
    }
    // Too large to enumerate: rejection sampling; give up after many misses in a row (the
    // valid region is then too sparse to find by chance, or exhausted).
    int misses = 0;
    while (out.size() < n && misses < 100000) {
      uint64_t index = rng().Below(space_size());
      if (Seen(index) || drawn_.count(index) || !Valid(index)) {
        ++misses;
        continue;
      }
      misses = 0;
      drawn_.insert(index);
      out.push_back(index);
    }
    return out;
  }

 private:
  std::vector<uint64_t> order_;
  size_t cursor_ = 0;
  std::unordered_set<uint64_t> drawn_;
};

}  // namespace

std::unique_ptr<SearchStrategy> NewRandomStrategy() { return std::make_unique<RandomStrategy>(); }

}  // namespace tuna::search
