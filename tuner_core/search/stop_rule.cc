#include "tuner_core/search/stop_rule.h"

#include <algorithm>

namespace tuna::search {

StopRule::StopRule(const TuneOptions& options, bool tunable, uint64_t patience)
    : patience_(tunable ? patience : 0),
      min_gain_(options.min_gain),
      limit_s_(tunable ? options.time_limit_s : 0),
      rival_ms_(tunable && options.outclassed_factor > 0 ? options.rival_ms : nullptr),
      outclassed_factor_(options.outclassed_factor),
      outclassed_after_(options.outclassed_after),
      start_(std::chrono::steady_clock::now()) {}

void StopRule::Note(bool timed_ok, double ms) {
  ++noted_;
  if (timed_ok && (best_ == 0 || ms < best_ * (1.0 - min_gain_))) {
    best_ = best_ == 0 ? ms : std::min(best_, ms);
    since_gain_ = 0;
    return;
  }
  if (timed_ok) best_ = std::min(best_, ms);
  if (best_ > 0) ++since_gain_;
}

std::string StopRule::Reason() const {
  if (patience_ > 0 && since_gain_ >= patience_) return "patience";
  if (limit_s_ > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() >= limit_s_) {
    return "time limit";
  }
  if (Outclassed()) return "outclassed";
  return "";
}

bool StopRule::Outclassed() const {
  if (!rival_ms_ || best_ <= 0 || noted_ < outclassed_after_) return false;
  const double rival = rival_ms_();
  return rival > 0 && best_ > outclassed_factor_ * rival;
}

}  // namespace tuna::search
