#include "tuner_core/search/measure/compile_pool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "spdlog/spdlog.h"

namespace tuna::search {
namespace {

// Lowers the calling thread's priority by `nice` (Linux: nice is per thread).
void LowerThisThread(int nice) {
  if (nice <= 0) return;
  const id_t tid = static_cast<id_t>(syscall(SYS_gettid));
  errno = 0;
  const int now = getpriority(PRIO_PROCESS, tid);  // the creator's, inherited
  if (errno != 0 || setpriority(PRIO_PROCESS, tid, std::min(now + nice, 19)) != 0) {
    spdlog::warn("compile pool: cannot lower thread {}'s priority by {}: {}", tid, nice,
                 std::strerror(errno));
  }
}

}  // namespace

CompilePool::CompilePool(int threads, int nice) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this, nice] {
      LowerThisThread(nice);
      Serve();
    });
  }
}

CompilePool::~CompilePool() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
  }
  work_.notify_all();
  for (std::thread& t : threads_) t.join();
}

uint64_t CompilePool::NewTicket() {
  std::lock_guard<std::mutex> l(mu_);
  return tickets_++;
}

void CompilePool::Run(uint64_t ticket, size_t n, const std::function<void(size_t)>& fn) {
  if (n == 0) return;
  Batch batch{&fn, n};
  std::unique_lock<std::mutex> l(mu_);
  queue_.emplace(std::make_pair(ticket, arrivals_++), &batch);
  work_.notify_all();
  done_.wait(l, [&] { return batch.done == batch.n; });
}

std::map<std::pair<uint64_t, uint64_t>, CompilePool::Batch*>::iterator CompilePool::Pick() {
  for (auto it = queue_.begin(); it != queue_.end(); ++it) {
    if (it->second->n - it->second->next <= threads_.size()) return it;
  }
  return queue_.begin();
}

void CompilePool::Serve() {
  std::unique_lock<std::mutex> l(mu_);
  for (;;) {
    work_.wait(l, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and nothing is waiting for an item
    auto first = Pick();
    Batch* batch = first->second;
    const size_t i = batch->next++;
    if (batch->next == batch->n) queue_.erase(first);  // every item handed out
    l.unlock();
    (*batch->fn)(i);
    l.lock();
    if (++batch->done == batch->n) done_.notify_all();
  }
}

}  // namespace tuna::search
