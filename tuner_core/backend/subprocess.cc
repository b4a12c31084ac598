#include "tuner_core/backend/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tuna::backend {
namespace {

int DecodeWaitStatus(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

// Waits for `pid` until `deadline`, draining `fd` (if >= 0) into `out`. Kills on timeout.
absl::StatusOr<int> WaitChild(pid_t pid, int fd, std::string* out, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  bool open = fd >= 0;
  char buf[4096];
  while (true) {
    if (open) {
      pollfd p{fd, POLLIN, 0};
      int wait_ms = static_cast<int>(
          std::max<int64_t>(0, absl::ToInt64Milliseconds(deadline - absl::Now())));
      int r = poll(&p, 1, std::min(wait_ms, 200));
      if (r > 0) {
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n > 0) {
          out->append(buf, static_cast<size_t>(n));
          continue;
        }
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) open = false;
      }
    }
    int status = 0;
    pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid && !open) return DecodeWaitStatus(status);
    if (w == pid && open) {
      // Child gone: drain what is left in the pipe.
      ssize_t n;
      while ((n = read(fd, buf, sizeof(buf))) > 0) out->append(buf, static_cast<size_t>(n));
      return DecodeWaitStatus(status);
    }
    if (absl::Now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::DeadlineExceededError(
          absl::StrCat("child process ", pid, " killed after ", absl::FormatDuration(timeout)));
    }
    if (!open) usleep(10000);
  }
}

}  // namespace

absl::StatusOr<ProcessResult> RunProcess(const std::vector<std::string>& argv,
                                         absl::Duration timeout) {
  if (argv.empty()) return absl::InvalidArgumentError("empty command line");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  int err_fds[2];  // tells the parent that exec failed
  if (pipe2(err_fds, O_CLOEXEC) != 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("pipe: ", strerror(errno)));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], err_fds[0], err_fds[1]}) close(fd);
    return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  }
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execvp(args[0], args.data());
    int e = errno;
    (void)!write(err_fds[1], &e, sizeof(e));
    _exit(127);
  }
  close(fds[1]);
  close(err_fds[1]);
  int exec_errno = 0;
  bool exec_failed = read(err_fds[0], &exec_errno, sizeof(exec_errno)) == sizeof(exec_errno);
  close(err_fds[0]);
  ProcessResult result;
  absl::StatusOr<int> code = WaitChild(pid, fds[0], &result.output, timeout);
  close(fds[0]);
  if (exec_failed) {
    return absl::UnavailableError(
        absl::StrCat("cannot run ", argv[0], ": ", strerror(exec_errno)));
  }
  if (!code.ok()) {
    return absl::DeadlineExceededError(
        absl::StrCat(absl::StrJoin(argv, " "), ": ", code.status().message()));
  }
  result.exit_code = *code;
  return result;
}

absl::StatusOr<int> RunInChild(const std::function<int()>& fn, absl::Duration timeout) {
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError(absl::StrCat("fork: ", strerror(errno)));
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    _exit(fn());
  }
  return WaitChild(pid, -1, nullptr, timeout);
}

}  // namespace tuna::backend
