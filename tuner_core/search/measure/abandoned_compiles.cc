#include "tuner_core/search/measure/abandoned_compiles.h"

#include <algorithm>
#include <chrono>

namespace tuna::search {
namespace {

bool Ended(const std::future<std::vector<CompiledCandidate>>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

}  // namespace

AbandonedCompiles::~AbandonedCompiles() {
  for (auto& f : held_) f.wait();
}

double AbandonedCompiles::Add(std::future<std::vector<CompiledCandidate>> compile) {
  if (!compile.valid()) return 0;
  ++added_;
  held_.erase(std::remove_if(held_.begin(), held_.end(), [](const auto& f) { return Ended(f); }),
              held_.end());
  const auto t0 = std::chrono::steady_clock::now();
  while (held_.size() >= max_running_) {
    held_.front().wait();
    held_.erase(held_.begin());
  }
  held_.push_back(std::move(compile));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

size_t AbandonedCompiles::running() const {
  return static_cast<size_t>(std::count_if(held_.begin(), held_.end(), [](const auto& f) { return !Ended(f); }));
}

}  // namespace tuna::search
