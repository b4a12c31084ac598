// Threads for the coordinator's gRPC handlers that block (on the database: Register, Renew,
// Release, the kernel calls, a Lease's hand-back), off gRPC's callback threads, which must never
// block. Lease and Report do not run here (the coordinator answers them from its own threads).
// Internal to coordinator/.
//
// Elastic: a task starts at once on an idle thread, or on a new one while fewer than
// `max_threads` run (a fleet's workers may all renew at once); at the limit, tasks wait in
// order for a thread. A thread that finds `keep_idle`
// others idle when its task ends exits: starting a thread per call costs about a third of the
// CPU per lease (measured on gRPC's own pool in bench/queue), so a fleet's worth stays.
//
// Threads: Run may be called from any thread; a task must not throw. The destructor runs every
// task already queued, then joins (the tasks' own references must stay valid until then).
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace tuna::coordinator {

class HandlerPool {
 public:
  HandlerPool(int max_threads, int keep_idle);
  ~HandlerPool();
  HandlerPool(const HandlerPool&) = delete;
  HandlerPool& operator=(const HandlerPool&) = delete;

  void Run(std::function<void()> task);

 private:
  void Loop();
  // Joins the threads that exited since the last call (they have left Loop).
  void JoinExited();

  const int max_threads_, keep_idle_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  std::map<std::thread::id, std::thread> threads_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> exited_ ABSL_GUARDED_BY(mu_);  // in threads_, not yet joined
  int live_ ABSL_GUARDED_BY(mu_) = 0;  // threads_ less exited_
  int idle_ ABSL_GUARDED_BY(mu_) = 0;  // threads waiting for a task
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace tuna::coordinator
