// The launch watchdog: device work runs on one dedicated thread (so the Device is used by one
// thread at a time, as backend.h requires) while the caller waits with a deadline.
//
// A task that misses its deadline makes Run return DeadlineExceeded and leaves the worker
// "wedged": the hung task still owns the device thread, later Runs fail at once with
// FailedPrecondition, and the device must be considered lost. Killing the process is the
// job of the worker/executor that runs tuning in a child; this class only detects the hang.
//
// Destruction joins the thread; if a wedged task is still running, it waits up to
// `grace` for it and then detaches the thread (its task and state are leaked on purpose:
// freeing what a running kernel uses would be worse). Callers that hit a timeout should keep
// the Device alive, or exit the process, rather than destroy it.
//
// Threads: Run may be called from one thread at a time.
#pragma once

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace tuna::search {

class DeviceWatchdog {
 public:
  explicit DeviceWatchdog(absl::Duration grace = absl::Seconds(5));
  ~DeviceWatchdog();
  DeviceWatchdog(const DeviceWatchdog&) = delete;
  DeviceWatchdog& operator=(const DeviceWatchdog&) = delete;

  // Runs `task` on the device thread and returns its status, or DeadlineExceeded when it does
  // not finish within `timeout` (then wedged() becomes true).
  absl::Status Run(std::function<absl::Status()> task, absl::Duration timeout);
  bool wedged() const;

 private:
  struct State {
    std::mutex mu;
    std::condition_variable cv;
    std::function<absl::Status()> task;  // pending task; empty when none
    bool has_task = false;
    bool done = false;
    bool stop = false;
    bool wedged = false;
    uint64_t generation = 0;
    absl::Status result;
  };
  static void Loop(std::shared_ptr<State> state);

  std::shared_ptr<State> state_;
  std::thread thread_;
  absl::Duration grace_;
};

}  // namespace tuna::search
