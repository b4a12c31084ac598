// CompilePool: every item runs once, never more at once than the pool's threads, older tickets
// are served first, a small batch is not starved by a large one; and a Compiler on a pool builds the same candidates as one on its own
// threads (cpu backend, the real C++ compiler).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "catch2/catch.hpp"
#include "tests/search/cpu_fixture.h"
#include "tests/search/test_solvers.h"
#include "tuner_core/search/measure/compile_pool.h"
#include "tuner_core/search/measure/compiler.h"

namespace tuna::search {
namespace {

TEST_CASE("compile pool: each item once, at most `threads` at a time") {
  CompilePool pool(3);
  REQUIRE(pool.threads() == 3);
  std::atomic<int> running{0}, most{0};
  std::vector<std::atomic<int>> runs(4 * 25);
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&, c] {
      pool.Run(pool.NewTicket(), 25, [&](size_t i) {
        const int now = ++running;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++runs[static_cast<size_t>(c) * 25 + i];
        --running;
      });
    });
  }
  for (auto& t : callers) t.join();
  for (size_t i = 0; i < runs.size(); ++i) {
    INFO("item " << i);
    CHECK(runs[i] == 1);
  }
  CHECK(most.load() <= 3);
  CHECK(most.load() >= 2);  // the threads do work at once
  pool.Run(pool.NewTicket(), 0, [](size_t) { FAIL("no item to run"); });
}

TEST_CASE("compile pool: a large job cannot starve a small one") {
  CompilePool pool(2);
  const uint64_t big_ticket = pool.NewTicket();
  const uint64_t small_ticket = pool.NewTicket();
  std::atomic<int> big_done{0};
  std::promise<void> big_running;
  std::atomic<bool> signalled{false};
  std::thread big([&] {
    pool.Run(big_ticket, 400, [&](size_t) {
      if (!signalled.exchange(true)) big_running.set_value();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++big_done;
    });
  });
  big_running.get_future().wait();
  const int before = big_done.load();
  int during = -1;
  pool.Run(small_ticket, 1, [&](size_t) { during = big_done.load(); });
  big.join();
  INFO("big items done when the small job was queued: " << before << ", when it ran: " << during);
  REQUIRE(during >= before);
  // Oldest-first alone would have run all 400 first; fair: at most the items in flight.
  CHECK(during - before <= 2 * pool.threads() + 2);
  CHECK(big_done.load() == 400);
}

TEST_CASE("compile pool: the oldest ticket's items go first, whenever they arrive") {
  CompilePool pool(1);
  const uint64_t gate_ticket = pool.NewTicket();
  const uint64_t older = pool.NewTicket();
  const uint64_t newer = pool.NewTicket();
  REQUIRE(gate_ticket < older);
  REQUIRE(older < newer);
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  std::promise<void> gate_running;
  std::mutex mu;
  std::string order;
  auto record = [&](char tag) {
    return [&, tag](size_t) {
      std::lock_guard<std::mutex> l(mu);
      order += tag;
    };
  };
  // The only thread is held by the gate while the newer job arrives before the older one.
  std::thread gate([&] {
    pool.Run(gate_ticket, 1, [&](size_t) {
      gate_running.set_value();
      opened.wait();
    });
  });
  gate_running.get_future().wait();
  std::thread late([&] { pool.Run(newer, 3, record('n')); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let it queue first
  std::thread early([&] { pool.Run(older, 3, record('o')); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  open.set_value();
  gate.join();
  late.join();
  early.join();
  CHECK(order == "ooonnn");
}

TEST_CASE("compile pool: with a nice value its threads, and only they, run at a lower priority") {
  auto nice_of_this_thread = [] {
    errno = 0;
    return getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
  };
  const int caller = nice_of_this_thread();
  if (caller > 14) return;  // already run far down: nothing to compare
  std::mutex mu;
  std::vector<int> seen;
  {
    CompilePool pool(2, 5);
    pool.Run(pool.NewTicket(), 8, [&](size_t) {
      const int n = nice_of_this_thread();
      std::lock_guard<std::mutex> l(mu);
      seen.push_back(n);
    });
  }
  REQUIRE(seen.size() == 8);
  for (int n : seen) CHECK(n == std::min(caller + 5, 19));
  CHECK(nice_of_this_thread() == caller);
  CompilePool normal(1);
  int in_normal = -100;
  normal.Run(normal.NewTicket(), 1, [&](size_t) { in_normal = nice_of_this_thread(); });
  CHECK(in_normal == caller);
}

TEST_CASE("a Compiler on a pool builds what one on its own threads builds") {
  testing::CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect, testing::kBrokenBuild, testing::kSlow});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  const Problem p = testing::ParseOne("conv -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -F 1");
  std::vector<solver::PerfConfig> configs;
  for (int64_t v : {0, 2, 5, 9}) configs.push_back(solver::PerfConfig{{v}});  // 9: not in space

  CompilePool pool(2);
  Compiler pooled(*f.backend, f.target, {0, &pool});
  Compiler own(*f.backend, f.target, {2});
  CHECK(pooled.threads() == 2);
  const auto a = pooled.Compile(faults, p, configs);
  const auto b = own.Compile(faults, p, configs);
  REQUIRE(a.size() == configs.size());
  REQUIRE(b.size() == configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    INFO("candidate " << i);
    CHECK(a[i].config == configs[i]);
    CHECK(a[i].disposition == b[i].disposition);
    CHECK(a[i].code.size() == b[i].code.size());
  }
  CHECK(a[0].disposition == Disposition::kPassed);
  CHECK(a[1].disposition == Disposition::kCompileFailed);
  CHECK(a[3].disposition == Disposition::kNotApplicable);
}

TEST_CASE("a Compiler on a pool answers cached candidates without waiting for the pool's threads") {
  testing::CpuFixture f;
  if (!f.ok) return;
  auto registry = testing::FaultRegistry({testing::kCorrect});
  const solver::Solver& faults = *registry->ByName("TestFaultSolver")->solver;
  const Problem p = testing::ParseOne("conv -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -F 1");
  const std::vector<solver::PerfConfig> configs = {solver::PerfConfig{{0}}, solver::PerfConfig{{9}}};
  CompilePool pool(1);
  Compiler pooled(*f.backend, f.target, {0, &pool});
  const auto first = pooled.Compile(faults, p, configs);
  REQUIRE(first[0].disposition == Disposition::kPassed);
  // Another job's long build holds the pool's only thread.
  std::promise<void> release;
  std::promise<void> holding;
  std::thread other([&] {
    pool.Run(pool.NewTicket(), 1, [&](size_t) {
      holding.set_value();
      release.get_future().wait();
    });
  });
  holding.get_future().wait();
  // The same candidates again: their kernel is at hand, so no pool thread is needed (before, the
  // call queued behind the other job's build and returned only after it).
  auto again = std::async(std::launch::async, [&] { return pooled.Compile(faults, p, configs); });
  const bool answered = again.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  release.set_value();
  other.join();
  CHECK(answered);
  const auto second = again.get();
  CHECK(second[0].disposition == Disposition::kPassed);
  CHECK(second[0].code.size() == first[0].code.size());
  CHECK(second[1].disposition == Disposition::kNotApplicable);
}

}  // namespace
}  // namespace tuna::search
