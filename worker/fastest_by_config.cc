#include "worker/fastest_by_config.h"

#include <algorithm>

namespace tuna::worker {

void FastestByConfig::Note(int64_t config_id, const coordinator::Report& r) {
  if (!r.succeeded || !r.has_result || !r.verified || r.kernel_time_ms <= 0) return;
  std::lock_guard<std::mutex> l(mu_);
  auto [it, fresh] = best_.try_emplace(config_id, r.kernel_time_ms);
  if (!fresh) it->second = std::min(it->second, r.kernel_time_ms);
}

double FastestByConfig::Get(int64_t config_id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = best_.find(config_id);
  return it == best_.end() ? 0.0 : it->second;
}

double FastestByConfig::Rival(int64_t config_id, double leased) const {
  const double seen = Get(config_id);
  return seen > 0 && leased > 0 ? std::min(seen, leased) : std::max(seen, leased);
}

}  // namespace tuna::worker
