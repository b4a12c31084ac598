#include "tuner_core/reference/fill.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <thread>
#include <vector>

namespace tuna::reference {
namespace {

uint64_t SplitMix64(uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t Hash(uint64_t seed, int64_t i) {
  return SplitMix64(SplitMix64(seed) ^ static_cast<uint64_t>(i) * 0xd1b54a32d192ed03ull);
}

bool IsInteger(ElementType t) { return t == ElementType::kInt8 || t == ElementType::kInt32; }

}  // namespace

double RandomValue(uint64_t seed, int64_t i, double lo, double hi) {
  const double u = static_cast<double>(Hash(seed, i) >> 11) * 0x1.0p-53;  // [0, 1)
  return lo + (hi - lo) * u;
}

static void FillRange(ElementType type, void* data, int64_t begin, int64_t end, uint64_t seed,
               const FillOptions& o) {
  for (int64_t i = begin; i < end; ++i) {
    double v;
    if (IsInteger(type)) {
      const uint64_t span = static_cast<uint64_t>(int64_t(o.int_hi) - o.int_lo + 1);
      v = static_cast<double>(o.int_lo + static_cast<int64_t>(Hash(seed, i) % span));
    } else {
      v = RandomValue(seed, i, o.lo, o.hi);
    }
    StoreFromDouble(type, data, i, v);
  }
}

void FillRandom(ElementType type, void* data, int64_t count, uint64_t seed,
                const FillOptions& o) {
  // Element i depends only on (seed, i): chunks on several threads give the same bytes.
  constexpr int64_t kChunk = int64_t{1} << 20;
  const int64_t threads = std::min<int64_t>((count + kChunk - 1) / kChunk,
                                            std::max(1u, std::thread::hardware_concurrency()));
  if (threads <= 1) {
    FillRange(type, data, 0, count, seed, o);
    return;
  }
  std::vector<std::thread> pool;
  const int64_t per = (count + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    const int64_t begin = t * per, end = std::min(count, begin + per);
    if (begin < end) pool.emplace_back(FillRange, type, data, begin, end, seed, std::cref(o));
  }
  for (std::thread& t : pool) t.join();
}

std::vector<std::byte> RandomBuffer(ElementType type, int64_t count, uint64_t seed,
                                    const FillOptions& o) {
  std::vector<std::byte> buf(static_cast<size_t>(count) * ElementSize(type));
  FillRandom(type, buf.data(), count, seed, o);
  return buf;
}

std::vector<double> RandomDoubles(ElementType type, int64_t count, uint64_t seed,
                                  const FillOptions& o) {
  const std::vector<std::byte> buf = RandomBuffer(type, count, seed, o);
  return ToDoubles(type, buf.data(), count);
}

std::vector<double> ToDoubles(ElementType type, const void* data, int64_t count) {
  std::vector<double> out(count);
  for (int64_t i = 0; i < count; ++i) out[i] = LoadAsDouble(type, data, i);
  return out;
}

}  // namespace tuna::reference
