// Control over a Compiler::Compile in progress, from another thread (compiler.h): the tuner
// cancels a batch it compiled ahead once its search stops without it (tuner.h).
//
// Cancel(nice): the candidates not started yet are not built (Compile returns them kSkipped,
// "cancelled"); the threads still building one (NVRTC cannot be interrupted) are lowered by
// `nice` (Linux: setpriority per thread; a failure is ignored), so that the builds nobody waits
// for yield the cores to those a device waits for. Only the Compiler's own threads are lowered,
// never a CompilePool's (shared with other work) nor a caller's thread (Enter's `own` false).
//
// Threads: every member may be called from any thread.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace tuna::search {

class CompileControl {
 public:
  void Cancel(int nice = 0);
  bool cancelled() const { return cancelled_.load(); }
  int lowered() const;  // threads lowered by Cancel (for tests and logs)

  // The calling thread is about to build a candidate: false when cancelled (skip it). With
  // `own` (a thread of the Compiler's own), it is lowered by a Cancel until Leave.
  bool Enter(bool own);
  void Leave(bool own);

 private:
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mu_;
  std::vector<pid_t> building_;  // own threads between Enter and Leave; guarded by mu_
  int nice_ = 0;                 // guarded by mu_
  int lowered_ = 0;              // guarded by mu_
};

}  // namespace tuna::search
