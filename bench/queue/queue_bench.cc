// Queue benchmark (DESIGN §3): N simulated workers (threads, each with its own gRPC channel)
// lease one compile job at a time from a coordinator over loopback gRPC and report it done,
// against a private MariaDB holding a large job table. Prints leases/s, lease latency p50/p99
// and double leases (a job id leased twice; must be 0).
//
//   bazel run -c opt //bench/queue:queue_bench -- [workers=64] [jobs=200000] [seconds=15] [rate=0]
//
// rate 0 (the default): every worker leases again as soon as its report is committed, so the run
// is saturated and the latencies include the queueing of a saturated coordinator and database.
// rate > 0: the workers together start `rate` leases per second, each on a fixed schedule (like
// workers that spend time on their jobs); "send lag" then says how late the sends were against
// the schedule (large lag: the rate was not sustained).
//
// What is measured: every worker registers first; the timed window starts when all have, and
// ends `seconds` later. A lease counts when its reply arrived inside the window; its latency runs
// from just before the client sends the request to just after the reply is decoded. Each leased
// job (also those leased after the window, which do not count) is reported and committed before
// the worker exits, so "jobs compiled in db" equals every job leased. The MariaDB counters and
// CPU seconds (this process: coordinator and clients; mariadbd) are deltas over the window, so
// the work per lease can be compared between runs on a machine too noisy for raw rates.
//
// TUNA_QUEUE_PROFILE=1: MariaDB's slow log (every statement, to a table) over the window, then the
// statement shapes (digits folded) that took the most server time, with their count and rows
// examined per lease: where the database's CPU per lease goes. The log costs throughput itself,
// so compare profiles with profiles, never with plain runs.
#include <pthread.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "schema/store/job_store.h"
#include "schema/store/server_profile.h"
#include "spdlog/spdlog.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "worker/coordinator_client.h"

namespace {

using Clock = std::chrono::steady_clock;

// The server counters whose per-lease deltas say how much SQL work one lease costs (statements
// executed and prepared, transactions, and row lock waits, which should stay 0).
constexpr const char* kCounters[] = {"Com_stmt_execute", "Com_stmt_prepare", "Com_commit",
                                     "Com_select",       "Com_update",       "Com_delete",
                                     "Com_insert",       "Innodb_row_lock_waits"};

std::map<std::string, double> ServerCounters(tuna::schema::Database& db) {
  auto counters = tuna::schema::GlobalStatus(db, std::vector<std::string>(std::begin(kCounters), std::end(kCounters)));
  return counters.ok() ? *counters : std::map<std::string, double>{};
}

// CPU seconds (user + system) of a process from /proc; 0 when unreadable.
double ProcessCpuSeconds(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream in(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int k = 3; k <= 15 && in >> field; ++k) {
    if (k == 14 || k == 15) ticks += std::atof(field.c_str());  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

double SelfCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// The slow log's top statement shapes (TUNA_QUEUE_PROFILE): `leases` divides the counts.
void PrintProfile(tuna::schema::Database& db, double leases) {
  auto rows = tuna::schema::SlowLogTop(db, 15);
  if (!rows.ok()) {
    std::printf("profile: %s\n", rows.status().ToString().c_str());
    return;
  }
  std::printf("profile (slow log over the window; per lease: count, server us, rows examined):\n");
  for (const auto& r : *rows) {
    std::printf("  %6.2f %8.1f %8.1f  %s\n", r.count / leases, 1e6 * r.seconds / leases, r.rows_examined / leases,
                r.text.c_str());
  }
}

double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0.0;
  return sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tuna;
  // As `tuna` runs the coordinator (cli/main.cc): Abseil's mutex deadlock detection off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  const int workers = argc > 1 ? std::atoi(argv[1]) : 64;
  const int64_t jobs = argc > 2 ? std::atoll(argv[2]) : 200000;
  const int seconds = argc > 3 ? std::atoi(argv[3]) : 15;
  const double rate = argc > 4 ? std::atof(argv[4]) : 0;
  spdlog::set_level(spdlog::level::warn);
  auto tdb = testing::CreateTestDatabase(true, 4);
  if (!tdb.ok()) {
    std::fprintf(stderr, "database: %s\n", tdb.status().ToString().c_str());
    return 1;
  }
  schema::Database& db = *tdb->db;
  const bool profile = std::getenv("TUNA_QUEUE_PROFILE") != nullptr;
  if (profile) {  // long_query_time is read when a connection opens: set it before the coordinator's
    if (auto st = schema::StartSlowLog(db); !st.ok()) std::fprintf(stderr, "profile: %s\n", st.ToString().c_str());
  }
  int server_pid = 0;
  if (auto server = testing::SharedMariadb(); server.ok()) {
    if (auto st = (*server)->Status(); st.ok()) server_pid = st->pid;
  }
  const int solvers = 100;
  auto seeded = testing::SeedQueue(db, jobs / solvers, solvers, "perf");
  if (!seeded.ok()) {
    std::fprintf(stderr, "seed: %s\n", seeded.status().ToString().c_str());
    return 1;
  }
  const std::string mode =
      rate > 0 ? "paced at " + std::to_string(static_cast<int>(rate)) + " leases/s" : "saturated";
  std::printf("job table: %lld jobs (state new), %d workers, %d s, %s\n",
              static_cast<long long>(seeded->jobs), workers, seconds, mode.c_str());
  coordinator::CoordinatorOptions co;
  co.dispatcher_threads = 2;
  co.max_claim_batch = 64;
  co.reap_interval = absl::ZeroDuration();
  auto coord = coordinator::Coordinator::Create(db, co);
  if (!coord.ok()) return 1;
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  so.token = "bench-token";
  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  if (!server.ok()) {
    std::fprintf(stderr, "server: %s\n", server.status().ToString().c_str());
    return 1;
  }

  std::atomic<int> registered{0};
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  // Written by main before `go` / `stop` are set, read by workers after they see them.
  Clock::time_point start = Clock::time_point::max();
  Clock::time_point window_end = Clock::time_point::max();
  std::mutex mu;
  std::vector<double> lease_ms, report_ms, lag_ms;
  std::unordered_map<int64_t, int> leased;
  int64_t leased_after_window = 0;
  double client_cpu = 0;  // the worker threads' own CPU time in the window (their gRPC calls)
  std::atomic<int64_t> errors{0};
  std::atomic<int64_t> empty_replies{0};  // the queue ran dry or a long-poll ended: not counted
  std::vector<std::thread> threads;
  for (int t = 0; t < workers; ++t) {
    threads.emplace_back([&, t] {
      pthread_setname_np(pthread_self(), "bench-worker");  // told apart from the coordinator's
      auto client = worker::MakeGrpcClient({(*server)->address(), "bench-token"});
      coordinator::WorkerRegistration reg;
      reg.host = "bench-" + std::to_string(t);
      auto r = client->Register(reg);
      ++registered;
      if (!r.ok()) {
        ++errors;
        return;
      }
      while (!go) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      std::vector<double> lat, rlat, lag;
      // Paced: worker t starts its leases at start + (t / workers + k) * period.
      const auto period = std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(rate > 0 ? workers / rate : 0));
      Clock::time_point next = start + period * t / workers;
      std::vector<int64_t> ids;
      int64_t late = 0;
      const double cpu0 = ThreadCpuSeconds();
      double cpu_in_window = -1;
      while (!stop) {
        coordinator::LeaseRequest req;
        req.worker_id = r->worker_id;
        req.step = jobs::JobStep::kCompile;
        req.compile_backends = {"cpu"};
        req.max_jobs = 1;
        req.wait = absl::Seconds(1);
        if (rate > 0) {
          std::this_thread::sleep_until(next);
          lag.push_back(std::chrono::duration<double, std::milli>(Clock::now() - next).count());
          next += period;
        }
        const auto t0 = Clock::now();
        auto got = client->Lease(req);
        const auto t1 = Clock::now();
        if (!got.ok()) {
          ++errors;
          continue;
        }
        if (got->empty()) {
          ++empty_replies;
          continue;
        }
        if (stop && t1 > window_end) {
          if (cpu_in_window < 0) cpu_in_window = ThreadCpuSeconds() - cpu0;
          ++late;  // still reported below, not counted
        } else {
          lat.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        }
        for (const auto& j : *got) {
          ids.push_back(j.job_id);
          coordinator::Report rep;
          rep.worker_id = r->worker_id;
          rep.job_id = j.job_id;
          rep.attempt = j.attempt;
          rep.step = jobs::JobStep::kCompile;
          rep.succeeded = true;
          const auto r0 = Clock::now();
          if (!client->Report(rep).ok()) ++errors;
          rlat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - r0).count());
        }
      }
      if (cpu_in_window < 0) cpu_in_window = ThreadCpuSeconds() - cpu0;
      std::lock_guard<std::mutex> l(mu);
      client_cpu += cpu_in_window;
      lease_ms.insert(lease_ms.end(), lat.begin(), lat.end());
      report_ms.insert(report_ms.end(), rlat.begin(), rlat.end());
      lag_ms.insert(lag_ms.end(), lag.begin(), lag.end());
      for (int64_t id : ids) ++leased[id];
      leased_after_window += late;
    });
  }
  while (registered < workers) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto counters0 = ServerCounters(db);
  const double self_cpu0 = SelfCpuSeconds();
  const double server_cpu0 = server_pid > 0 ? ProcessCpuSeconds(server_pid) : 0;
  if (profile) (void)schema::SetSlowLog(db, true);
  start = Clock::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  window_end = Clock::now();
  stop = true;
  const double elapsed = std::chrono::duration<double>(window_end - start).count();
  const double self_cpu = SelfCpuSeconds() - self_cpu0;
  const double server_cpu = server_pid > 0 ? ProcessCpuSeconds(server_pid) - server_cpu0 : 0;
  const auto counters1 = ServerCounters(db);
  if (profile) (void)schema::SetSlowLog(db, false);
  for (auto& t : threads) t.join();

  int64_t doubles = 0;
  for (const auto& [id, n] : leased) doubles += n - 1;
  std::sort(lease_ms.begin(), lease_ms.end());
  std::sort(report_ms.begin(), report_ms.end());
  std::sort(lag_ms.begin(), lag_ms.end());
  const double n = static_cast<double>(lease_ms.size());
  long long compiled = -1;
  if (auto counts = schema::JobStore(db).CountByState(std::nullopt); counts.ok()) {
    compiled = 0;
    for (const schema::StateCount& c : *counts) compiled += c.state == "compiled" ? c.jobs : 0;
  }
  std::printf("leases: %zu in %.1f s = %.0f leases/s (each leased, reported, committed)\n",
              lease_ms.size(), elapsed, n / elapsed);
  std::printf("lease latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", Percentile(lease_ms, 0.5),
              Percentile(lease_ms, 0.99), lease_ms.empty() ? 0.0 : lease_ms.back());
  std::printf("report latency: p50 %.2f ms, p99 %.2f ms\n", Percentile(report_ms, 0.5),
              Percentile(report_ms, 0.99));
  if (rate > 0) {
    std::printf("send lag behind the schedule: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                Percentile(lag_ms, 0.5), Percentile(lag_ms, 0.99),
                lag_ms.empty() ? 0.0 : lag_ms.back());
  }
  if (n > 0) {
    std::printf(
        "cpu per lease: %.0f us this process (of which %.0f us in the %d client threads), "
        "%.0f us mariadbd\n",
        1e6 * self_cpu / n, 1e6 * client_cpu / n, workers, 1e6 * server_cpu / n);
    std::printf("per lease:");
    for (const char* c : kCounters) {
      auto a = counters0.find(c);
      auto b = counters1.find(c);
      if (a != counters0.end() && b != counters1.end()) {
        std::printf(" %s %.2f", c, (b->second - a->second) / n);
      }
    }
    std::printf("\n");
    if (profile) PrintProfile(db, n);
  }
  std::printf(
      "double leases: %lld; rpc errors: %lld; empty lease replies: %lld; leased after the "
      "window: %lld; jobs compiled in db: %lld (leased in all: %zu)\n",
      static_cast<long long>(doubles), static_cast<long long>(errors.load()),
      static_cast<long long>(empty_replies.load()),
      static_cast<long long>(leased_after_window),
      compiled, leased.size());
  (*server)->Shutdown();
  testing::DropTestDatabase(tdb->name);
  return doubles == 0 ? 0 : 2;
}
