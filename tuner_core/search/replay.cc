#include "tuner_core/search/replay.h"

#include <utility>
#include <vector>

#include "tuner_core/search/stop_rule.h"

namespace tuna::search {

ReplayResult ReplaySearch(SearchStrategy& strategy, const StrategyInput& input, const ReplayOptions& options,
                          const ReplayLookup& lookup) {
  ReplayResult r;
  if (absl::Status st = strategy.Start(input); !st.ok()) {
    r.error = st.ToString();
    return r;
  }
  StopRule stop(options.tune, /*tunable=*/true, options.tune.patience);
  const size_t batch = std::max<size_t>(1, options.batch);
  std::optional<std::vector<solver::PerfConfig>> pending = strategy.Next(batch);
  while (pending && !pending->empty()) {
    const std::vector<solver::PerfConfig> current = *std::exchange(pending, std::nullopt);
    if (options.ahead && !stop.MayStopWithin(current.size())) pending = strategy.Next(batch);
    std::vector<Observation> observations;
    for (const solver::PerfConfig& c : current) {
      const std::optional<ReplayPoint> p = lookup(c);
      const bool ok = p && p->ok;
      const double ms = ok ? p->ms : 0;
      ++r.tried;
      if (ok && (r.best_ms == 0 || ms < r.best_ms)) r.best_ms = ms, r.best = c;
      if (ok && r.reached_at == 0 && ms <= options.target_ms) r.reached_at = r.tried;
      stop.Note(ok, ms);
      observations.push_back({c, ok, ms});
      if (stop.Outclassed()) break;  // as the Tuner: mid-batch
    }
    strategy.Observe(observations);
    r.observed.insert(r.observed.end(), observations.begin(), observations.end());
    if (options.stop_at_target && r.reached_at > 0) {
      r.stopped_by = "target";
      break;
    }
    r.stopped_by = stop.Reason();
    if (!r.stopped_by.empty()) break;
    if (!pending) pending = strategy.Next(batch);
  }
  return r;
}

ReplayOptions DefaultSearchReplay(int compile_threads) {
  ReplayOptions o;
  o.tune.strategy = kDefaultStrategy;
  o.tune.budget = DefaultBudget(kDefaultStrategy);
  o.tune.patience = DefaultPatience(kDefaultStrategy);
  o.tune.whole_space = kWholeSpace;
  o.batch = DefaultBatch(compile_threads);
  o.ahead = true;
  return o;
}

}  // namespace tuna::search
