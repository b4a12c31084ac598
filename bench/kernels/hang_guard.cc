#include "bench/kernels/hang_guard.h"

#include <utility>

namespace tuna::bench {

HangGuard::HangGuard(absl::Duration limit, OnHang on_hang) : limit_(limit), on_hang_(std::move(on_hang)) {
  if (limit_ > absl::ZeroDuration()) watcher_ = std::thread([this] { Watch(); });
}

HangGuard::~HangGuard() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
}

void HangGuard::Arm(std::string what) {
  if (limit_ <= absl::ZeroDuration()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    ++span_;
    deadline_ = absl::Now() + limit_;
    what_ = std::move(what);
  }
  cv_.notify_all();
}

void HangGuard::Disarm() {
  if (limit_ <= absl::ZeroDuration()) return;
  std::lock_guard<std::mutex> lock(mu_);
  armed_ = false;
}

void HangGuard::Watch() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!armed_) {
      cv_.wait(lock, [this] { return stop_ || armed_; });
      continue;
    }
    const uint64_t span = span_;
    const absl::Time deadline = deadline_;
    cv_.wait_until(lock, absl::ToChronoTime(deadline), [&] { return stop_ || !armed_ || span_ != span; });
    if (stop_ || !armed_ || span_ != span || absl::Now() < deadline) continue;
    const std::string what = what_;
    armed_ = false;
    lock.unlock();
    on_hang_(what, limit_);
    lock.lock();
  }
}

}  // namespace tuna::bench
