// A cross-process exclusive lock per device of this host, so that several executor processes
// can share one device (worker.h, executors_per_device) while only one of them runs device work
// (loads, verified runs, timed launches) at a time; the others compile and prepare on the host
// meanwhile. The executor hands it to the search as its device-work guard
// (tuner_core/search/measure/device_guard.h).
//
// Mechanism: flock(2) LOCK_EX on a file named by backend and device index in a host-local
// directory (DeviceLockPath). The lock belongs to the open file description, so:
//   processes  two processes (or two DeviceLock objects, each with its own open of the file,
//              in one process) exclude each other;
//   threads    the threads of one DeviceLock are serialised by an in-process mutex taken before
//              the flock, so Acquire on one object is safe from any thread (and not re-entrant:
//              a second Acquire on a thread that holds it deadlocks);
//   death      when a holder dies (exit, crash, SIGKILL) the kernel closes its descriptors and
//              the lock is released; a waiter then gets it. The descriptor is opened O_CLOEXEC,
//              so an exec'd child never keeps it; a fork without exec shares the open file
//              description (and the lock) until both have closed it.
//   order      not fair: waiters are not served first come first served, and a holder that
//              releases and asks again at once may get it again before a waiter wakes.
// The directory must be local to the host (a lock file on a shared file system such as NFS could
// make two hosts' device 0 exclude each other): DefaultDeviceLockDir is $XDG_RUNTIME_DIR/tuna,
// else /tmp/tuna-<uid>. The lock files are never removed (removing one while held would let a
// later process lock a new file of the same name).
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::worker {

class DeviceLock {
 public:
  // Holds the lock while it lives (move-only); destruction releases it.
  class Held {
   public:
    Held(Held&& other) noexcept : lock_(other.lock_), thread_lock_(std::move(other.thread_lock_)) {
      other.lock_ = nullptr;
    }
    Held& operator=(Held&&) = delete;
    ~Held();

   private:
    friend class DeviceLock;
    Held(DeviceLock* lock, std::unique_lock<std::mutex> thread_lock)
        : lock_(lock), thread_lock_(std::move(thread_lock)) {}
    DeviceLock* lock_;
    std::unique_lock<std::mutex> thread_lock_;
  };

  // Opens (creating, mode 600) the lock file at `path`; its directory must exist. Errors:
  // the open's, as Unavailable with the path.
  static absl::StatusOr<std::unique_ptr<DeviceLock>> Open(const std::string& path);
  ~DeviceLock();  // closes the file: a lock still held is released (Held must not outlive it)
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;

  // Blocks until this process holds the lock (signals interrupting the wait are retried).
  // Errors: flock's (Internal with the path); then nothing is held.
  absl::StatusOr<Held> Acquire();
  // Takes the lock only if it is free now. Errors: Unavailable when another process (or
  // another DeviceLock object) holds it; flock's as for Acquire. Blocks only for this object's
  // own threads (the in-process mutex).
  absl::StatusOr<Held> TryAcquire();
  const std::string& path() const { return path_; }

 private:
  DeviceLock(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  absl::StatusOr<Held> Lock(bool wait);
  std::string path_;
  int fd_;
  std::mutex thread_mu_;
};

// "<dir>/device-<backend>-<index>.lock".
std::string DeviceLockPath(const std::string& dir, const std::string& backend, int device_index);

// $XDG_RUNTIME_DIR/tuna when XDG_RUNTIME_DIR is set, else /tmp/tuna-<uid>.
std::string DefaultDeviceLockDir();

// Creates `dir` (mode 700, parents as needed) unless it exists; FailedPrecondition when it is
// not a directory owned by this user (a directory someone else made in /tmp is not used) or
// cannot be made.
absl::Status PrepareDeviceLockDir(const std::string& dir);

}  // namespace tuna::worker
