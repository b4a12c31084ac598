// The fastest verified time per config (any solver) that reports of this process showed: the
// rival of a perf search on that config, which stops once its best so far stays far slower
// (the outclassed stop, JobTuning::outclassed). An executor keeps one for the jobs it ran; the
// worker's supervisor keeps one for every lane, because a lease's rival is read at the claim,
// before the other lanes' reports of the same config are committed. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "coordinator/api.h"

namespace tuna::worker {

class FastestByConfig {
 public:
  // Keeps the report's time if it is a verified result, the fastest of the config's so far.
  void Note(int64_t config_id, const coordinator::Report& report);
  // The config's fastest time; 0 when none.
  double Get(int64_t config_id) const;
  // The lower of `leased` (0: none) and Get(config_id); 0 when neither has one.
  double Rival(int64_t config_id, double leased) const;

 private:
  mutable std::mutex mu_;
  std::map<int64_t, double> best_;  // guarded by mu_
};

}  // namespace tuna::worker
