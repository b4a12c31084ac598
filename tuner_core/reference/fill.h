// Deterministic seeded random tensors for tests, benchmarks and GPU verification.
//
// Element i depends only on (seed, i) (a counter-based splitmix64 hash), so a fill is identical
// across platforms, standard libraries and chunkings, and a prefix of a longer fill equals the
// shorter fill. Values are drawn uniformly from a small range so that FP16 sums of a few
// thousand products stay far from overflow and keep most of their precision; each value is
// rounded once (nearest-even) to the buffer's type, so FP16/BF16 buffers hold exactly the
// values their float conversion gives back.
// Thread-safe: no state; distinct calls may run concurrently on distinct buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tuner_core/reference/element.h"

namespace tuna::reference {

struct FillOptions {
  double lo = -0.5, hi = 0.5;      // floating types: uniform in [lo, hi)
  int int_lo = -8, int_hi = 8;     // integer types: uniform in [int_lo, int_hi]
};

// The fill value of element i before rounding to a floating type (in [lo, hi)).
double RandomValue(uint64_t seed, int64_t i, double lo, double hi);

// Fills count elements of `data` (count * ElementSize(type) bytes).
void FillRandom(ElementType type, void* data, int64_t count, uint64_t seed,
                const FillOptions& options = {});

// A new buffer of count elements, filled as FillRandom does.
std::vector<std::byte> RandomBuffer(ElementType type, int64_t count, uint64_t seed,
                                    const FillOptions& options = {});

// The same values as RandomBuffer(type, ...) gives, as doubles (what a typed buffer holds).
std::vector<double> RandomDoubles(ElementType type, int64_t count, uint64_t seed,
                                  const FillOptions& options = {});

// All elements of a buffer as doubles (exact).
std::vector<double> ToDoubles(ElementType type, const void* data, int64_t count);

}  // namespace tuna::reference
