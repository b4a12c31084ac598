#include "tuner_core/search/measure/compile_control.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace tuna::search {
namespace {

pid_t ThisThread() { return static_cast<pid_t>(syscall(SYS_gettid)); }

// Lowers thread `tid` by `nice` (to 19 at most); false when it could not.
bool Lower(pid_t tid, int nice) {
  if (nice <= 0) return false;
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, static_cast<id_t>(tid));
  if (errno != 0) return false;
  return setpriority(PRIO_PROCESS, static_cast<id_t>(tid), std::min(now + nice, 19)) == 0;
}

}  // namespace

void CompileControl::Cancel(int nice) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_.exchange(true)) return;
  nice_ = nice;
  for (pid_t tid : building_) lowered_ += Lower(tid, nice_) ? 1 : 0;
}

int CompileControl::lowered() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lowered_;
}

bool CompileControl::Enter(bool own) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_.load()) return false;
  if (own) building_.push_back(ThisThread());
  return true;
}

void CompileControl::Leave(bool own) {
  if (!own) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = std::find(building_.begin(), building_.end(), ThisThread());
  if (it != building_.end()) building_.erase(it);
}

}  // namespace tuna::search
