#include "coordinator/host_faults.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "spdlog/spdlog.h"

namespace tuna::coordinator {

namespace {
constexpr size_t kMaxUnsupportedWorkers = 4096;  // bounds the memory a flood of ids can take
}  // namespace

std::string HostFaults::HostOf(const std::string& worker_id) {
  return worker_id.substr(0, worker_id.find('/'));
}

bool HostFaults::NoteFault(const std::string& worker_id, const std::string& error, absl::Time now) {
  absl::MutexLock l(&mu_);
  Host& h = hosts_[HostOf(worker_id)];
  ++h.in_a_row;
  h.last_error = error.substr(0, 500);
  if (h.in_a_row < max_in_a_row_ || h.benched_until > now) return false;
  h.benched_until = now + bench_;
  h.in_a_row = max_in_a_row_ - 1;  // after the bench, one more failure benches it again
  spdlog::warn("coordinator: host {} benched for {} s after {} infrastructure failures in a row "
               "(last: {}); its jobs were handed back without a retry charged",
               HostOf(worker_id), absl::ToInt64Seconds(bench_), max_in_a_row_, h.last_error);
  return true;
}

void HostFaults::NoteSuccess(const std::string& worker_id) {
  absl::MutexLock l(&mu_);
  auto it = hosts_.find(HostOf(worker_id));
  if (it == hosts_.end()) return;
  if (it->second.benched_until != absl::InfinitePast() || it->second.in_a_row > 0) {
    spdlog::info("coordinator: host {} succeeded again; its infrastructure failures are cleared",
                 it->first);
  }
  hosts_.erase(it);
}

absl::Status HostFaults::CheckEvalLease(const std::string& worker_id, absl::Time now) {
  absl::MutexLock l(&mu_);
  auto it = hosts_.find(HostOf(worker_id));
  if (it == hosts_.end() || it->second.benched_until <= now) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "host ", it->first, " is benched for another ",
      absl::ToInt64Seconds(it->second.benched_until - now), " s after ", max_in_a_row_,
      " infrastructure failures in a row (last: ", it->second.last_error, "); no eval leases"));
}

int HostFaults::Benched(absl::Time now) {
  absl::MutexLock l(&mu_);
  int n = 0;
  for (const auto& [host, h] : hosts_) n += h.benched_until > now;
  return n;
}

void HostFaults::NoteUnsupported(const std::string& worker_id, int64_t session_id,
                                 int64_t solver_id) {
  absl::MutexLock l(&mu_);
  if (unsupported_.size() >= kMaxUnsupportedWorkers && !unsupported_.count(worker_id)) {
    unsupported_.erase(unsupported_.begin());
  }
  unsupported_[worker_id][session_id].insert(solver_id);
}

std::map<int64_t, std::set<int64_t>> HostFaults::Unsupported(const std::string& worker_id) {
  absl::MutexLock l(&mu_);
  auto it = unsupported_.find(worker_id);
  return it == unsupported_.end() ? std::map<int64_t, std::set<int64_t>>{} : it->second;
}

}  // namespace tuna::coordinator
