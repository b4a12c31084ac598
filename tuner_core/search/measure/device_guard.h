// The device-work guard: an optional hook through which the evaluator (evaluator.h) asks for
// the device to itself before it runs anything on it. The search knows nothing of who else uses
// the device: a worker that runs several executor processes per device (worker/worker.h,
// executors_per_device) fills the hook with a cross-process lock (worker/device_lock.h), so that
// only one of them loads, verifies and times candidates at a time while the others compile or
// prepare on the host. Without a guard (null) nothing is waited for.
//
// Contract of a DeviceWorkGuard: it blocks until the device is the caller's and returns the scope
// that holds it; destroying the scope gives the device back. It may return null when exclusivity
// cannot be had (the implementer logs why): the work then runs unguarded rather than not at all.
// It is called, and its scope destroyed, on the thread that does the device work; it need not be
// re-entrant (the evaluator never asks again while it holds a scope), and it must be safe to call
// from any thread.
#pragma once

#include <functional>
#include <memory>

namespace tuna::search {

// Holds the device while it lives.
class DeviceWorkScope {
 public:
  virtual ~DeviceWorkScope() = default;
};

using DeviceWorkGuard = std::function<std::unique_ptr<DeviceWorkScope>()>;

// One guarded section: takes `guard` (when set) at construction, adding the time it waited to
// *wait_ms, and gives the device back at Release() or destruction (unless Take() took the
// scope). Not copyable.
class GuardedDeviceWork {
 public:
  GuardedDeviceWork(const DeviceWorkGuard& guard, double* wait_ms);
  GuardedDeviceWork(const GuardedDeviceWork&) = delete;
  GuardedDeviceWork& operator=(const GuardedDeviceWork&) = delete;
  void Release() { scope_.reset(); }
  // The scope (null when none is held), for a caller that must keep the device past the section.
  std::unique_ptr<DeviceWorkScope> Take() { return std::move(scope_); }

 private:
  std::unique_ptr<DeviceWorkScope> scope_;
};

}  // namespace tuna::search
