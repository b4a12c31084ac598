// A hang guard for the kernels bench: a kernel that never finishes (a deadlocked pipeline) blocks
// the host in its synchronize forever, and a device step's time limit then kills the bench with
// nothing said about which candidate hung. The guard watches the device work the bench marks:
// Arm(what) before it, Disarm() after; if one armed span lasts longer than `limit`, the guard
// calls `on_hang(what, limit)` once, from its own thread (the bench prints the candidate and
// exits: the device is lost, and the JSON already holds every finished row).
//
// Threads: Arm and Disarm from one thread (the bench's); on_hang runs on the guard's thread while
// that thread is still blocked. Destruction stops the watcher (after on_hang returned, if called).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tuna::bench {

class HangGuard {
 public:
  using OnHang = std::function<void(const std::string& what, absl::Duration limit)>;
  // limit <= 0: never fires (Arm and Disarm are cheap no-ops).
  HangGuard(absl::Duration limit, OnHang on_hang);
  ~HangGuard();
  HangGuard(const HangGuard&) = delete;
  HangGuard& operator=(const HangGuard&) = delete;

  void Arm(std::string what);
  void Disarm();

 private:
  void Watch();

  const absl::Duration limit_;
  const OnHang on_hang_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool stop_ = false;
  uint64_t span_ = 0;  // counts Arm calls: a span that ended is never reported
  absl::Time deadline_;
  std::string what_;
  std::thread watcher_;
};

}  // namespace tuna::bench
