#include "tuner_core/search/measure/watchdog.h"

#include <chrono>

#include "spdlog/spdlog.h"

namespace tuna::search {

DeviceWatchdog::DeviceWatchdog(absl::Duration grace)
    : state_(std::make_shared<State>()), grace_(grace) {
  thread_ = std::thread(&DeviceWatchdog::Loop, state_);
}

void DeviceWatchdog::Loop(std::shared_ptr<State> state) {
  std::unique_lock<std::mutex> lock(state->mu);
  for (;;) {
    state->cv.wait(lock, [&] { return state->stop || state->has_task; });
    if (state->has_task) {
      std::function<absl::Status()> task = std::move(state->task);
      state->has_task = false;
      lock.unlock();
      absl::Status result = task();
      lock.lock();
      state->result = std::move(result);
      state->done = true;
      state->cv.notify_all();
      continue;
    }
    if (state->stop) return;
  }
}

absl::Status DeviceWatchdog::Run(std::function<absl::Status()> task, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(state_->mu);
  if (state_->wedged) {
    return absl::FailedPreconditionError("device unusable: an earlier launch timed out");
  }
  state_->task = std::move(task);
  state_->has_task = true;
  state_->done = false;
  state_->cv.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(timeout);
  if (!state_->cv.wait_until(lock, deadline, [&] { return state_->done; })) {
    state_->wedged = true;
    return absl::DeadlineExceededError(
        "launch did not complete within " + absl::FormatDuration(timeout) + " (watchdog)");
  }
  return state_->result;
}

bool DeviceWatchdog::wedged() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->wedged;
}

DeviceWatchdog::~DeviceWatchdog() {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->stop = true;
  state_->cv.notify_all();
  if (state_->wedged && !state_->done) {
    const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoNanoseconds(grace_);
    if (!state_->cv.wait_until(lock, deadline, [&] { return state_->done; })) {
      lock.unlock();
      spdlog::error("watchdog: a timed-out device task is still running; detaching its thread");
      thread_.detach();
      return;
    }
  }
  lock.unlock();
  thread_.join();
}

}  // namespace tuna::search
