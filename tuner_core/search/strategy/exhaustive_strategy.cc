#include "tuner_core/search/strategy/strategy_base.h"

namespace tuna::search {
namespace {

// Odometer order over the valid points; the prior only moves some points to the front.
class ExhaustiveStrategy final : public internal::StrategyBase {
 public:
  std::string_view Name() const override { return "exhaustive"; }

 protected:
  void OnStart() override { cursor_ = 0; }
  std::vector<uint64_t> Propose(size_t n) override {
    std::vector<uint64_t> out;
    if (enumerated()) {
      const auto& valid = valid_points();
      while (out.size() < n && cursor_ < valid.size()) {
        uint64_t index = valid[cursor_++];
        if (!Seen(index)) out.push_back(index);
      }
    } else {
      while (out.size() < n && cursor_ < space_size()) {
        uint64_t index = cursor_++;
        if (!Seen(index) && Valid(index)) out.push_back(index);
      }
    }
    return out;
  }

 private:
  uint64_t cursor_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> NewExhaustiveStrategy() { return std::make_unique<ExhaustiveStrategy>(); }

}  // namespace tuna::search
