#include "worker/device_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace tuna::worker {

DeviceLock::Held::~Held() {
  if (lock_ != nullptr) flock(lock_->fd_, LOCK_UN);
  // thread_lock_ unlocks the in-process mutex after the flock is released.
}

absl::StatusOr<std::unique_ptr<DeviceLock>> DeviceLock::Open(const std::string& path) {
  int fd = -1;
  do {
    fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("device lock ", path, ": ", std::strerror(errno)));
  }
  return std::unique_ptr<DeviceLock>(new DeviceLock(path, fd));
}

DeviceLock::~DeviceLock() { close(fd_); }

absl::StatusOr<DeviceLock::Held> DeviceLock::Acquire() { return Lock(true); }
absl::StatusOr<DeviceLock::Held> DeviceLock::TryAcquire() { return Lock(false); }

absl::StatusOr<DeviceLock::Held> DeviceLock::Lock(bool wait) {
  std::unique_lock<std::mutex> thread_lock(thread_mu_);
  for (;;) {
    if (flock(fd_, wait ? LOCK_EX : LOCK_EX | LOCK_NB) == 0) return Held(this, std::move(thread_lock));
    if (errno == EINTR) continue;
    if (!wait && errno == EWOULDBLOCK) {
      return absl::UnavailableError(absl::StrCat("device lock ", path_, " is held"));
    }
    return absl::InternalError(absl::StrCat("device lock ", path_, ": flock: ", std::strerror(errno)));
  }
}

std::string DeviceLockPath(const std::string& dir, const std::string& backend, int device_index) {
  return (std::filesystem::path(dir) / absl::StrCat("device-", backend, "-", device_index, ".lock"))
      .string();
}

std::string DefaultDeviceLockDir() {
  const char* runtime = std::getenv("XDG_RUNTIME_DIR");
  if (runtime != nullptr && runtime[0] == '/') return (std::filesystem::path(runtime) / "tuna").string();
  return absl::StrCat("/tmp/tuna-", getuid());
}

absl::Status PrepareDeviceLockDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::path p(dir);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrCat("device lock dir ", dir, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (lstat(dir.c_str(), &st) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("device lock dir ", dir, ": ", std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode) || st.st_uid != getuid()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "device lock dir ", dir, " is not a directory owned by this user (uid ", getuid(), ")"));
  }
  return absl::OkStatus();
}

}  // namespace tuna::worker
