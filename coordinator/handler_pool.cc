#include "coordinator/handler_pool.h"

#include <algorithm>
#include <utility>

namespace tuna::coordinator {

HandlerPool::HandlerPool(int max_threads, int keep_idle)
    : max_threads_(std::max(1, max_threads)), keep_idle_(std::max(0, keep_idle)) {}

HandlerPool::~HandlerPool() {
  std::map<std::thread::id, std::thread> threads;
  {
    absl::MutexLock l(&mu_);
    stopping_ = true;
  }
  JoinExited();
  {
    absl::MutexLock l(&mu_);
    threads.swap(threads_);
  }
  // The threads still running leave Loop once the queue is empty; none exits into exited_ now
  // without being in `threads`, which holds them all.
  for (auto& [id, t] : threads) t.join();
}

void HandlerPool::Run(std::function<void()> task) {
  JoinExited();
  absl::MutexLock l(&mu_);
  queue_.push_back(std::move(task));
  // Every queued task has an idle thread to take it, unless the pool is at its limit.
  if (static_cast<int>(queue_.size()) > idle_ && live_ < max_threads_) {
    ++live_;
    std::thread t([this] { Loop(); });
    const auto id = t.get_id();
    threads_.emplace(id, std::move(t));
  }
}

void HandlerPool::JoinExited() {
  std::vector<std::thread> done;
  {
    absl::MutexLock l(&mu_);
    for (const auto& id : exited_) {
      auto it = threads_.find(id);
      if (it == threads_.end()) continue;
      done.push_back(std::move(it->second));
      threads_.erase(it);
    }
    exited_.clear();
  }
  for (auto& t : done) t.join();
}

void HandlerPool::Loop() {
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stopping_ || !queue_.empty();
  };
  for (;;) {
    std::function<void()> task;
    {
      absl::MutexLock l(&mu_);
      ++idle_;
      mu_.Await(absl::Condition(&ready));
      --idle_;
      if (queue_.empty()) return;  // stopping, and nothing left to run
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task();
    task = nullptr;  // its captures go now, not when the next task arrives
    absl::MutexLock l(&mu_);
    if (!stopping_ && queue_.empty() && idle_ >= keep_idle_) {
      exited_.push_back(std::this_thread::get_id());
      --live_;
      return;
    }
  }
}

}  // namespace tuna::coordinator
