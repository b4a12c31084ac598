// Hosts take the blame for host faults (issue 15 part 5, docs/RELIABILITY.md): what the
// coordinator remembers about each worker's failures that are not the jobs' fault.
//
//   infrastructure failures  reports blamed on the host (jobs::Blame::kHost: the device cannot be
//                            opened, the executor cannot start) are counted per worker host (the
//                            worker id's part before '/', so a restarted worker keeps its count);
//                            after `max_in_a_row` of them with no success between, the host is
//                            benched: it gets no eval leases for `bench` (then one more failure
//                            benches it again, one success clears it);
//   unsupported jobs         reports blamed as unsupported (a solver, arch or version the worker
//                            does not know) exclude that (session, solver) from the worker's
//                            later claims, so the job goes to another worker instead of coming
//                            back to this one.
// In memory only: a restarted coordinator forgets (a benched host that is still broken is
// benched again after `max_in_a_row` more failures, none of them charged to a job); several
// coordinators on one database count separately.
//
// Threads: every method is thread-safe and never blocks on anything but its own mutex.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tuna::coordinator {

class HostFaults {
 public:
  HostFaults(int max_in_a_row, absl::Duration bench) : max_in_a_row_(max_in_a_row), bench_(bench) {}

  // An applied report blamed on the worker's host. True when this failure benched the host.
  bool NoteFault(const std::string& worker_id, const std::string& error, absl::Time now);
  // An applied success: the host's failures in a row start again from zero.
  void NoteSuccess(const std::string& worker_id);
  // OK, or FailedPrecondition naming the host, its failures and when the bench ends.
  absl::Status CheckEvalLease(const std::string& worker_id, absl::Time now);
  int Benched(absl::Time now);  // hosts benched now (for the gauge)

  // The worker cannot run `solver_id` of `session_id`: not claimed for it again.
  void NoteUnsupported(const std::string& worker_id, int64_t session_id, int64_t solver_id);
  // Per session, the solver ids the worker reported unsupported (empty for most workers).
  std::map<int64_t, std::set<int64_t>> Unsupported(const std::string& worker_id);

  static std::string HostOf(const std::string& worker_id);

 private:
  struct Host {
    int in_a_row = 0;
    std::string last_error;
    absl::Time benched_until = absl::InfinitePast();
  };
  const int max_in_a_row_;
  const absl::Duration bench_;
  absl::Mutex mu_;
  std::map<std::string, Host> hosts_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::map<int64_t, std::set<int64_t>>> unsupported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tuna::coordinator
