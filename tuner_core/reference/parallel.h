// Blocking parallel-for over an index range, used by the reference kernels.
#pragma once

#include <cstdint>
#include <functional>

namespace tuna::reference {

// The thread count a request for `threads` resolves to: hardware_concurrency() (at least 1)
// when threads <= 0.
int ResolveThreads(int threads);

// Calls fn(begin, end) on disjoint chunks covering [0, count), from up to ResolveThreads(threads)
// std::threads (never more than there are chunks; one chunk runs on the caller's thread), and
// returns once every chunk is done. Which thread runs which chunk is unspecified, so fn must
// make each index's result independent of that (the reference kernels do: one index owns a
// fixed set of output elements). fn must not throw.
void ParallelFor(int64_t count, int threads, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace tuna::reference
