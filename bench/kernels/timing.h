// The one timing method of the kernels bench, used for tuna's kernels and for cuDNN alike:
// `warmup` untimed launches, then `reps` timed launches, each preceded (outside the timed
// region) by an L2 flush, a memset of a `flush_bytes` buffer (256 MiB: over 5x the H100's
// 50 MB L2), and timed alone between two CUDA events; the median of the per-launch times.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"

namespace tuna::bench {

struct TimingMethod {
  int warmup = 3;
  int reps = 25;  // >= 20 for reported figures
  size_t flush_bytes = size_t{256} << 20;
  // The sentence the JSON's meta records.
  std::string Describe() const;
};

class FlushedTimer {
 public:
  // Allocates the flush buffer on `dev`. InvalidArgument for reps < 1 or warmup < 0.
  static absl::StatusOr<FlushedTimer> Create(backend::Device& dev, const TimingMethod& method);

  // Median milliseconds of one `launch` (which must queue its work on the default stream).
  // The first error of a launch, the flush or the events is returned.
  absl::StatusOr<double> MedianMs(const std::function<absl::Status()>& launch);
  // The same with `reps` overriding the method's (a short screening of many candidates).
  absl::StatusOr<double> MedianMs(const std::function<absl::Status()>& launch, int reps);

  const TimingMethod& method() const { return method_; }

 private:
  FlushedTimer(backend::Device& dev, const TimingMethod& m, backend::DeviceBuffer flush)
      : dev_(&dev), method_(m), flush_(std::move(flush)) {}
  backend::Device* dev_;
  TimingMethod method_;
  backend::DeviceBuffer flush_;
  int round_ = 0;
};

}  // namespace tuna::bench
