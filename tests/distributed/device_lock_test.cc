// The per-device lock of executors that share a device (worker/device_lock.h), with real
// processes: a second process gets the lock only after the first has released it; a holder
// killed with SIGKILL releases it (the kernel closes its descriptor); two DeviceLock objects of
// one process exclude each other, and one object serialises its threads.
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "catch2/catch.hpp"
#include "worker/device_lock.h"

namespace tuna::worker {
namespace {

std::string TestDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::filesystem::path dir =
      std::filesystem::path(tmp ? tmp : "/tmp") / ("device_lock_" + name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  REQUIRE(PrepareDeviceLockDir(dir.string()).ok());
  return dir.string();
}

// One byte from `fd` within `ms` milliseconds; -1 when none came.
int ReadByte(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  if (poll(&p, 1, ms) != 1) return -1;
  char c = 0;
  return read(fd, &c, 1) == 1 ? c : -1;
}

void WriteByte(int fd, char c) { (void)!write(fd, &c, 1); }

// Reaps `pid` within 10 s (SIGKILL after that); its exit status, or -1.
int Reap(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

TEST_CASE("a second process acquires the device lock only after the first releases it") {
  const std::string path = DeviceLockPath(TestDir("order"), "cuda", 0);
  CHECK(path.substr(path.size() - 18) == "device-cuda-0.lock");
  auto lock = DeviceLock::Open(path);
  REQUIRE(lock.ok());
  auto held = (*lock)->Acquire();
  REQUIRE(held.ok());
  int to_parent[2];
  REQUIRE(pipe(to_parent) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // Its own open of the file (an inherited descriptor would share the parent's lock).
    auto mine = DeviceLock::Open(path);
    if (!mine.ok()) _exit(10);
    WriteByte(to_parent[1], absl::IsUnavailable((*mine)->TryAcquire().status()) ? 'b' : 'x');
    auto got = (*mine)->Acquire();  // blocks until the parent releases
    WriteByte(to_parent[1], got.ok() ? 'a' : 'x');
    _exit(0);
  }
  close(to_parent[1]);
  CHECK(ReadByte(to_parent[0], 10000) == 'b');  // busy while the parent holds it
  CHECK(ReadByte(to_parent[0], 500) == -1);     // and still waiting half a second later
  { auto released = std::move(*held); }         // the Held moved out and destroyed: released
  CHECK(ReadByte(to_parent[0], 10000) == 'a');
  CHECK(Reap(child) == 0);
  // The child has exited (and so released it): this process can take it again at once.
  CHECK((*lock)->TryAcquire().ok());
  close(to_parent[0]);
}

TEST_CASE("a holder killed with SIGKILL releases the device lock") {
  const std::string path = DeviceLockPath(TestDir("kill"), "hip", 3);
  int to_parent[2];
  REQUIRE(pipe(to_parent) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto mine = DeviceLock::Open(path);
    if (!mine.ok()) _exit(10);
    auto got = (*mine)->Acquire();
    WriteByte(to_parent[1], got.ok() ? 'h' : 'x');
    for (;;) pause();  // holds it until killed
  }
  close(to_parent[1]);
  REQUIRE(ReadByte(to_parent[0], 10000) == 'h');
  auto lock = DeviceLock::Open(path);
  REQUIRE(lock.ok());
  CHECK(absl::IsUnavailable((*lock)->TryAcquire().status()));
  // A waiter blocked in Acquire gets it once the holder is killed.
  std::atomic<bool> acquired{false};
  std::thread waiter([&] {
    auto got = (*lock)->Acquire();
    acquired = got.ok();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  CHECK_FALSE(acquired);
  REQUIRE(kill(child, SIGKILL) == 0);
  waitpid(child, nullptr, 0);
  waiter.join();  // Acquire returned (and its Held was released at the end of the lambda)
  CHECK(acquired);
  CHECK((*lock)->TryAcquire().ok());
  close(to_parent[0]);
}

TEST_CASE("two lock objects of one process exclude each other; one object serialises threads") {
  const std::string path = DeviceLockPath(TestDir("threads"), "cpu", 0);
  auto a = DeviceLock::Open(path);
  auto b = DeviceLock::Open(path);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  {
    auto held = (*a)->Acquire();
    REQUIRE(held.ok());
    CHECK(absl::IsUnavailable((*b)->TryAcquire().status()));
  }
  CHECK((*b)->TryAcquire().ok());

  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto held = (*a)->Acquire();
        if (!held.ok()) continue;
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {}
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --inside;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(most == 1);
}

TEST_CASE("the device lock dir is created private and must be this user's directory") {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::filesystem::path base =
      std::filesystem::path(tmp ? tmp : "/tmp") / ("device_lock_dir_" + std::to_string(getpid()));
  std::filesystem::remove_all(base);
  const std::string dir = (base / "a" / "locks").string();
  REQUIRE(PrepareDeviceLockDir(dir).ok());
  struct stat st {};
  REQUIRE(stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(PrepareDeviceLockDir(dir).ok());  // again: it exists
  const std::string file = (base / "file").string();
  std::ofstream(file) << "x";
  CHECK(absl::IsFailedPrecondition(PrepareDeviceLockDir(file)));
  CHECK(!DefaultDeviceLockDir().empty());
  CHECK(absl::IsUnavailable(DeviceLock::Open((base / "missing" / "x.lock").string()).status()));
}

}  // namespace
}  // namespace tuna::worker
