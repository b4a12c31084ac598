#include "exporter/output_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tuna::exporter {
namespace {

namespace fs = std::filesystem;

std::string ReadSmallFile(int fd) {
  char buf[64] = {};
  const ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// The pid the lock's holder wrote, "pid N", or "pid unknown". The holder writes it just after
// taking the lock (truncate, then write), so a writer refused in between reads an empty file:
// it reads again for up to 200 ms (in 30 rounds of two concurrent exports, 5 of the 30
// refusals said "pid unknown" before this).
std::string HolderPid(int fd) {
  for (int attempt = 0;; ++attempt) {
    const std::string holder(absl::StripAsciiWhitespace(ReadSmallFile(fd)));
    int64_t pid = 0;
    if (absl::SimpleAtoi(holder, &pid)) return absl::StrCat("pid ", pid);
    if (attempt == 20) return "pid unknown";
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

absl::StatusOr<OutputDirLock> OutputDirLock::Acquire(const std::string& dir_in) {
  const std::string dir = dir_in.empty() ? "." : dir_in;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  const std::string path = (fs::path(dir) / kLockFileName).string();
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    if (err == EWOULDBLOCK) {
      const std::string holder = HolderPid(fd);
      close(fd);
      return absl::FailedPreconditionError(
          absl::StrCat("output directory ", dir, " is being written by another tuna process (",
                       holder, ", lock ", path,
                       "); wait for it to finish or choose another directory"));
    }
    close(fd);
    return absl::InternalError(absl::StrCat("cannot lock ", path, ": ", std::strerror(err)));
  }
  const std::string pid = absl::StrCat(getpid(), "\n");
  if (ftruncate(fd, 0) != 0 || pwrite(fd, pid.data(), pid.size(), 0) < 0) {
    // The pid is informational only; the lock holds without it.
  }
  return OutputDirLock(fd);
}

OutputDirLock& OutputDirLock::operator=(OutputDirLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

OutputDirLock::~OutputDirLock() {
  if (fd_ >= 0) close(fd_);  // releases the flock
}

void RemoveStaleTemps(const std::string& dir_in, const std::vector<std::string>& names) {
  const fs::path dir(dir_in.empty() ? "." : dir_in);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const std::string suffix = kNewSuffix;
    if (absl::EndsWith(name, suffix) || absl::EndsWith(name, suffix + ".tmp") ||
        absl::EndsWith(name, suffix + ".tmp-journal")) {
      std::error_code rm;
      fs::remove(it->path(), rm);
    }
  }
  for (const std::string& n : names) {
    std::error_code rm;
    fs::remove(dir / (n + ".tmp"), rm);
    fs::remove(dir / (n + ".tmp-journal"), rm);
  }
}

absl::Status CommitNewFiles(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) {
    const std::string tmp = p + kNewSuffix;
    if (std::rename(tmp.c_str(), p.c_str()) != 0) {
      return absl::InternalError(
          absl::StrCat("cannot rename ", tmp, " to ", p, ": ", std::strerror(errno)));
    }
  }
  return absl::OkStatus();
}

void DiscardNewFiles(const std::vector<std::string>& paths) {
  for (const std::string& p : paths) std::remove((p + kNewSuffix).c_str());
}

}  // namespace tuna::exporter
