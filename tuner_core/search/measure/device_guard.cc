#include "tuner_core/search/measure/device_guard.h"

#include <chrono>

namespace tuna::search {

GuardedDeviceWork::GuardedDeviceWork(const DeviceWorkGuard& guard, double* wait_ms) {
  if (!guard) return;
  const auto t0 = std::chrono::steady_clock::now();
  scope_ = guard();
  if (wait_ms != nullptr) {
    *wait_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
}

}  // namespace tuna::search
