// Several executors per device (worker.h executors_per_device, issue #19) on the CPU backend,
// end to end against a real coordinator (gRPC on loopback) and a real MariaDB:
//  * a `tuna worker --executors-per-device 2` PROCESS (compile and eval) tunes 16 small configs
//    (perf + find of TunaCpuGemmConv): both executor children run jobs, every job is evaluated
//    exactly once (one eval lease each, one result, one attempt's samples), the device lock file
//    is used and every job's timing line says how long it waited for it; SIGTERM ends it with 0;
//  * `tuna tune -f`'s pipeline (RunLocalPipeline) with executors_per_device = 2 finishes every
//    job once too.
#include <signal.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "pipeline/local_pipeline.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using testing::CountRows;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int64_t Occurrences(const std::string& text, const std::string& what) {
  int64_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

std::string FreshDir(const std::string& name) {
  const std::string dir = testing::TestOutputDir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "a worker with two executors per device evaluates every job exactly once",
                 "[mariadb][distributed]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  auto session = testing::LoadCpuWorkload(db(), registry, testing::SmallDriverLines(16), "x2",
                                          {"TunaCpuGemmConv"}, {"perf", "find"});
  REQUIRE(session.ok());
  const int64_t jobs = CountRows(db(), "SELECT COUNT(*) FROM job");
  REQUIRE(jobs == 32);

  coordinator::CoordinatorOptions co;
  co.registry = &registry;
  co.lease_seconds = 20;
  co.reap_interval = absl::Milliseconds(300);
  co.empty_poll_interval = absl::Milliseconds(50);
  co.max_wait = absl::Seconds(1);
  auto coord = coordinator::Coordinator::Create(db(), co);
  REQUIRE(coord.ok());
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  REQUIRE(server.ok());

  const std::string dir = FreshDir("executors_per_device");
  const std::string locks = dir + "/locks";
  const std::string log = dir + "/worker.log";
  pid_t w = testing::Spawn({tuna_bin, "worker", "--coordinator", (*server)->address(), "--backend",
                            "cpu", "--host", "x2", "--budget", "2", "--repetitions", "2",
                            "--lease-batch", "2", "--compile-jobs", "1", "--executors-per-device",
                            "2", "--device-lock-dir", locks},
                           log);
  REQUIRE(w > 0);
  const bool finished = testing::WaitUntil(150, [&] {
    return CountRows(db(), "SELECT COUNT(*) FROM job WHERE state NOT IN ('evaluated', 'failed')") == 0;
  });
  kill(w, SIGTERM);
  const int status = testing::WaitFor(w, 30);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE(finished);

  const std::string text = ReadAll(log);
  INFO("worker log: " << log);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'") == jobs);
  // Leased once for compile and once for eval (attempt 2), never retried or leased again.
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE attempt = 2 AND retries = 0") == jobs);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM perf_result WHERE verified") == 16);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM find_result WHERE verified") == 16);
  CHECK(CountRows(db(), "SELECT COUNT(DISTINCT job_id, attempt) FROM eval_sample") == jobs);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM eval_sample s JOIN job j ON j.id = s.job_id WHERE j.kind = 'perf'") == 32);
  // Two executor children, both of which ran jobs, under the device lock.
  CHECK(Occurrences(text, "2 executor(s) per device") == 1);
  CHECK(Occurrences(text, "started executor pid") >= 2);
  CHECK(Occurrences(text, "device 0 (executor 1 of 2)") > 0);
  CHECK(Occurrences(text, "device 0 (executor 2 of 2)") > 0);
  CHECK(Occurrences(text, "(2 executor(s) on the device)") >= 2);
  CHECK(Occurrences(text, "device lock wait ") == jobs);  // one timing line per eval job
  CHECK(std::filesystem::exists(locks + "/device-cpu-0.lock"));
  CHECK(Occurrences(text, "executor killed") == 0);
  (*server)->Shutdown();
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "tune -f's pipeline with two executors per device finishes every job once",
                 "[mariadb][distributed]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  const std::string dir = FreshDir("executors_per_device_pipeline");
  const std::string file = dir + "/four.txt";
  std::ofstream(file) << testing::SmallDriverLines(4);
  pipeline::LocalPipelineOptions o;
  o.file = file;
  o.backend = "cpu";
  o.workers = 1;
  o.executors_per_device = 2;
  o.device_lock_dir = dir + "/locks";
  o.compile_jobs = 1;
  o.solvers = {"TunaCpuGemmConv"};
  o.tuning.budget = 2;
  o.tuning.repetitions = 2;
  o.output_dir = dir + "/out";
  o.executor_argv = {tuna_bin, "worker", "--executor"};
  o.max_duration = absl::Seconds(150);
  o.progress = [](const std::string&) {};
  auto r = pipeline::RunLocalPipeline(db(), o);
  REQUIRE(r.ok());
  INFO(pipeline::FormatPipelineSummary(*r));
  CHECK(r->jobs == 8);
  CHECK(r->jobs_done == r->jobs);
  CHECK(r->jobs_failed == 0);
  CHECK(r->jobs_unfinished == 0);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM job WHERE attempt = 2 AND retries = 0") == r->jobs);
  CHECK(CountRows(db(), "SELECT COUNT(DISTINCT job_id, attempt) FROM eval_sample") == r->jobs);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM perf_result WHERE verified") == 4);
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM find_result WHERE verified") == 4);
  CHECK(std::filesystem::exists(o.device_lock_dir + "/device-cpu-0.lock"));
}

}  // namespace
}  // namespace tuna
