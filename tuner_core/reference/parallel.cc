#include "tuner_core/reference/parallel.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace tuna::reference {

int ResolveThreads(int threads) {
  if (threads > 0) return threads;
  return std::max(1u, std::thread::hardware_concurrency());
}

void ParallelFor(int64_t count, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  if (count <= 0) return;
  const int64_t workers = std::min<int64_t>(ResolveThreads(threads), count);
  if (workers == 1) {
    fn(0, count);
    return;
  }
  // Several chunks per worker so uneven items (border planes, groups) still balance; chunks
  // are claimed dynamically.
  const int64_t chunk = std::max<int64_t>(1, count / (workers * 8));
  std::atomic<int64_t> next{0};
  auto work = [&] {
    for (;;) {
      const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= count) return;
      fn(begin, std::min(count, begin + chunk));
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (int64_t t = 1; t < workers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace tuna::reference
