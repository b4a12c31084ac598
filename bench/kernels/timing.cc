#include "bench/kernels/timing.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tuna::bench {

std::string TimingMethod::Describe() const {
  return absl::StrCat(warmup, " warm-up launches, then ", reps, " timed launches, each preceded by an L2 flush (memset of ",
                      flush_bytes >> 20,
                      " MiB, outside the timed region) and timed alone between two CUDA events on the default "
                      "stream; the median is reported. Same method, process and buffers for tuna and cuDNN.");
}

absl::StatusOr<FlushedTimer> FlushedTimer::Create(backend::Device& dev, const TimingMethod& method) {
  if (method.reps < 1 || method.warmup < 0) return absl::InvalidArgumentError("reps >= 1 and warmup >= 0 required");
  absl::StatusOr<backend::DeviceBuffer> flush = dev.Alloc(method.flush_bytes);
  if (!flush.ok()) return flush.status();
  return FlushedTimer(dev, method, *std::move(flush));
}

absl::StatusOr<double> FlushedTimer::MedianMs(const std::function<absl::Status()>& launch) {
  return MedianMs(launch, method_.reps);
}

absl::StatusOr<double> FlushedTimer::MedianMs(const std::function<absl::Status()>& launch, int reps) {
  if (reps < 1) return absl::InvalidArgumentError("reps must be positive");
  for (int i = 0; i < method_.warmup; ++i) {
    if (absl::Status st = launch(); !st.ok()) return st;
  }
  auto flush = [&]() { return dev_->Memset(flush_, static_cast<uint8_t>(++round_), method_.flush_bytes); };
  absl::StatusOr<std::vector<double>> t = dev_->TimeLaunches(launch, reps, flush);
  if (!t.ok()) return t.status();
  std::vector<double> v = *std::move(t);
  std::sort(v.begin(), v.end());
  // Median: the mean of the two middle values for an even count.
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace tuna::bench
