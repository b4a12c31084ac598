#include "admin/worker_activity.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "schema/store/worker_store.h"

namespace tuna::admin {

absl::StatusOr<std::vector<WorkerActivity>> ReadWorkerActivity(schema::Database& db,
                                                               std::optional<int64_t> session_id,
                                                               absl::Duration within,
                                                               int max_workers) {
  schema::WorkerStore store(db);
  auto seen = store.SeenWithin(within, max_workers);
  if (!seen.ok()) return seen.status();
  std::vector<WorkerActivity> out;
  std::map<std::string, std::vector<std::string>> jobs_by_host;
  for (const schema::WorkerSeen& s : *seen) {
    jobs_by_host[s.host];
    out.push_back(WorkerActivity{s, {}});
  }
  // Leases held right now, by owner host ("<host>/<random>").
  auto leases = store.HeldLeases(session_id, 2000);
  if (!leases.ok()) return leases.status();
  for (const schema::HeldLease& l : *leases) {
    auto it = jobs_by_host.find(schema::LeaseOwnerHost(l.owner));
    if (it == jobs_by_host.end() || it->second.size() >= 8) continue;
    it->second.push_back(absl::StrCat("job ", l.job_id, " ", l.state, " (", l.solver_name, ")"));
  }
  std::set<std::string> shown;
  for (WorkerActivity& w : out) {
    // A host's leases belong to its worker process, not to one device: list them once.
    if (shown.insert(w.host).second) w.current_jobs = jobs_by_host[w.host];
  }
  return out;
}

}  // namespace tuna::admin
