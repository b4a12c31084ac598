// One writer per output directory, and the files of an export replaced as a set.
//
//   lock    `<dir>/.tuna.lock`, flock(LOCK_EX | LOCK_NB) held for the whole write; the holder's
//           pid is written into the file so a refused writer can name it. Non-blocking: a
//           second writer fails at once (FailedPrecondition) instead of waiting. The lock is
//           released when the OutputDirLock is destroyed or its process dies (a killed writer
//           never leaves a stale lock; the file itself stays and is reused).
//   temps   each file is first written as `<name>.tuna-new` (itself via `<name>.tuna-new.tmp`);
//           only when every file is written are they renamed over their names, in the order
//           perf db, find db, kdb. A failure before the renames leaves the old set untouched.
//   stale   temps of an earlier killed writer (`*.tuna-new`, `*.tuna-new.tmp`,
//           `*.tuna-new.tmp-journal`, and `<name>.tmp` / `<name>.tmp-journal` of the names being
//           written) are removed at start, under the lock.
// Not thread-safe: one OutputDirLock per directory per process (flock locks conflict between
// two descriptors of one process too).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::exporter {

inline constexpr char kLockFileName[] = ".tuna.lock";
inline constexpr char kNewSuffix[] = ".tuna-new";

class OutputDirLock {
 public:
  // Creates `dir` when missing. FailedPrecondition naming the holder's pid when another writer
  // holds the lock; Internal for I/O errors.
  static absl::StatusOr<OutputDirLock> Acquire(const std::string& dir);

  OutputDirLock(OutputDirLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  OutputDirLock& operator=(OutputDirLock&& other) noexcept;
  OutputDirLock(const OutputDirLock&) = delete;
  OutputDirLock& operator=(const OutputDirLock&) = delete;
  ~OutputDirLock();

 private:
  explicit OutputDirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// Removes the stale temps of `dir` (see above); `names` are the final file names about to be
// written. Files that cannot be removed are left (the writers replace or report them).
void RemoveStaleTemps(const std::string& dir, const std::vector<std::string>& names);

// Renames every `<path>.tuna-new` over `<path>`, in the given order. Internal on the first
// failed rename (the files renamed before it stay replaced).
absl::Status CommitNewFiles(const std::vector<std::string>& paths);
// Removes every `<path>.tuna-new` (after a failed write).
void DiscardNewFiles(const std::vector<std::string>& paths);

}  // namespace tuna::exporter
