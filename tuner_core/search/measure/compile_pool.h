// CPU threads shared by every Compiler of a process that serve the oldest work first, without
// letting a large job starve a small one.
//
// Why: a worker compiles several leased jobs at once. With a thread per job, each job's
// candidates build one after another, so the first job (and the GPU waiting for its eval step)
// waits for all of them in sequence while the others are equally half done. Here every
// Compiler takes a ticket when it is made, and the pool's threads take the next candidate of
// the lowest ticket that has any left: the oldest job's candidates are built by all threads
// first, jobs finish in the order they were leased, one every few seconds instead of all at
// the end, and later jobs fill the threads the older ones leave idle.
// Fairness: a batch with no more items left than the pool has threads (it finishes in one round:
// a find job's single candidate, the last few of a search) is served before larger ones, oldest
// such batch first. So a 1,000-candidate job delays a 1-candidate job by one item per thread at
// most, instead of by its whole remaining space.
//
// Priority: with `nice` > 0 the pool's threads (and the compiler processes they start) run that
// much below the process's other threads (setpriority on each thread, Linux): a worker's ahead-
// of-time compiles then yield the cores to the executors' in-search compiles, which a device
// waits for. Work-conserving: an idle core still runs the pool.
//
// Threads: every member may be called from any thread. Run blocks its caller until its items
// are done (the caller does not run items itself: the pool's size is the number of compiles
// at once). fn must not throw. The pool must outlive every Run in progress.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace tuna::search {

class CompilePool {
 public:
  // threads <= 0: hardware concurrency; nice: 0..19 (see the file comment; a failure to lower
  // the priority is logged and the thread runs at the normal one).
  explicit CompilePool(int threads, int nice = 0);
  ~CompilePool();                     // serves every queued item, then joins
  CompilePool(const CompilePool&) = delete;
  CompilePool& operator=(const CompilePool&) = delete;

  int threads() const { return static_cast<int>(threads_.size()); }

  // Increasing numbers: work run under a lower ticket is served first.
  uint64_t NewTicket();

  // Calls fn(i) for every i in [0, n) on the pool's threads and returns when all are done.
  // Batches with at most threads() items left go first; then items of lower tickets; among
  // equal tickets, earlier Run calls first.
  void Run(uint64_t ticket, size_t n, const std::function<void(size_t)>& fn);

 private:
  struct Batch {
    const std::function<void(size_t)>* fn;
    size_t n;
    size_t next = 0;  // next index to hand out
    size_t done = 0;
  };
  void Serve();
  // The queue entry to hand an item from: the oldest small batch, else the oldest. mu_ held.
  std::map<std::pair<uint64_t, uint64_t>, Batch*>::iterator Pick();

  std::mutex mu_;
  std::condition_variable work_;  // an item was queued, or stopping
  std::condition_variable done_;  // some batch finished an item
  std::map<std::pair<uint64_t, uint64_t>, Batch*> queue_;  // (ticket, arrival) -> batch with items left
  uint64_t tickets_ = 0;
  uint64_t arrivals_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tuna::search
