// Queue benchmark (DESIGN §3): N simulated workers (threads, each with its own gRPC channel)
// lease one compile job at a time from a coordinator over loopback gRPC and report it done,
// against a private MariaDB holding a large job table. Prints leases/s, lease latency p50/p99
// and double leases (a job id leased twice; must be 0).
//
//   bazel run -c opt //bench/queue:queue_bench -- [workers=64] [jobs=200000] [seconds=15]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "spdlog/spdlog.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "worker/coordinator_client.h"

int main(int argc, char** argv) {
  using namespace tuna;
  const int workers = argc > 1 ? std::atoi(argv[1]) : 64;
  const int64_t jobs = argc > 2 ? std::atoll(argv[2]) : 200000;
  const int seconds = argc > 3 ? std::atoi(argv[3]) : 15;
  spdlog::set_level(spdlog::level::warn);
  auto tdb = testing::CreateTestDatabase(true, 4);
  if (!tdb.ok()) {
    std::fprintf(stderr, "database: %s\n", tdb.status().ToString().c_str());
    return 1;
  }
  schema::Database& db = *tdb->db;
  const int solvers = 100;
  auto seeded = testing::SeedQueue(db, jobs / solvers, solvers, "perf");
  if (!seeded.ok()) {
    std::fprintf(stderr, "seed: %s\n", seeded.status().ToString().c_str());
    return 1;
  }
  std::printf("job table: %lld jobs (state new), %d workers, %d s\n",
              static_cast<long long>(seeded->jobs), workers, seconds);
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
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<double> latencies_ms;
  std::unordered_map<int64_t, int> leased;
  std::atomic<int64_t> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < workers; ++t) {
    threads.emplace_back([&, t] {
      auto client = worker::MakeGrpcClient({(*server)->address(), "bench-token"});
      coordinator::WorkerRegistration reg;
      reg.host = "bench-" + std::to_string(t);
      auto r = client->Register(reg);
      if (!r.ok()) {
        ++errors;
        return;
      }
      std::vector<double> lat;
      std::vector<int64_t> ids;
      while (!stop) {
        coordinator::LeaseRequest req;
        req.worker_id = r->worker_id;
        req.step = schema::JobStep::kCompile;
        req.compile_backends = {"cpu"};
        req.max_jobs = 1;
        req.wait = absl::Seconds(1);
        const auto t0 = std::chrono::steady_clock::now();
        auto got = client->Lease(req);
        const auto t1 = std::chrono::steady_clock::now();
        if (!got.ok()) {
          ++errors;
          continue;
        }
        if (got->empty()) continue;
        lat.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        for (const auto& j : *got) {
          ids.push_back(j.job_id);
          coordinator::Report rep;
          rep.worker_id = r->worker_id;
          rep.job_id = j.job_id;
          rep.attempt = j.attempt;
          rep.step = schema::JobStep::kCompile;
          rep.succeeded = true;
          if (!client->Report(rep).ok()) ++errors;
        }
      }
      std::lock_guard<std::mutex> l(mu);
      latencies_ms.insert(latencies_ms.end(), lat.begin(), lat.end());
      for (int64_t id : ids) ++leased[id];
    });
  }
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t doubles = 0;
  for (const auto& [id, n] : leased) doubles += n - 1;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  auto pct = [&](double p) {
    if (latencies_ms.empty()) return 0.0;
    return latencies_ms[std::min(latencies_ms.size() - 1,
                                 static_cast<size_t>(p * latencies_ms.size()))];
  };
  auto compiled = db.Query("SELECT COUNT(*) FROM job WHERE state = 'compiled'");
  std::printf("leases: %zu in %.1f s = %.0f leases/s (each leased, reported, committed)\n",
              latencies_ms.size(), elapsed, latencies_ms.size() / elapsed);
  std::printf("lease latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n", pct(0.5), pct(0.99),
              latencies_ms.empty() ? 0.0 : latencies_ms.back());
  std::printf("double leases: %lld; rpc errors: %lld; jobs compiled in db: %lld\n",
              static_cast<long long>(doubles), static_cast<long long>(errors.load()),
              compiled.ok() ? static_cast<long long>((*compiled)[0].Int(0)) : -1LL);
  (*server)->Shutdown();
  testing::DropTestDatabase(tdb->name);
  return doubles == 0 ? 0 : 2;
}
