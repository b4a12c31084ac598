// Acceptance of the coordinator's metrics against a real MariaDB: seed jobs, run a Coordinator
// with the queue sampler and the /metrics HTTP server on a free port, drive leases and reports
// through the in-process client, and scrape /metrics over HTTP while the jobs move: the lease,
// report and failure counters, the latency histogram, the sampled queue depth per state and the
// workers alive must follow what happened. Also the live view's worker query.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <string>
#include <thread>

#include "absl/strings/numbers.h"
#include "tuner_core/hash/sha256.h"
#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "coordinator/metrics.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "admin/worker_activity.h"
#include "coordinator/in_process_client.h"

namespace tuna {
namespace {

using coordinator::LeaseRequest;
using coordinator::Report;
using jobs::JobStep;

std::string Scrape(int port, const std::string& path = "/metrics") {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  const std::string req = "GET " + path + " HTTP/1.1\r\nHost: test\r\n\r\n";
  REQUIRE(write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size()));
  std::string out;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

// The value of one series ("name{labels}") in a scrape; NaN when absent.
double Sample(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  const size_t at = text.find(key);
  if (at == std::string::npos) return std::nan("");
  const size_t start = at + key.size();
  double v = 0;
  if (!absl::SimpleAtod(text.substr(start, text.find('\n', start) - start), &v)) {
    return std::nan("");
  }
  return v;
}

// Scrapes until `series` reaches `want` (the queue gauges follow the sampler's interval).
double AwaitSample(int port, const std::string& series, double want) {
  double v = std::nan("");
  for (int k = 0; k < 100; ++k) {
    v = Sample(Scrape(port), series);
    if (v == want) return v;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return v;
}

TEST_CASE_METHOD(testing::MariadbTest, "metrics follow a run of jobs", "[mariadb]") {
  auto registry = testing::MakeTestRegistry();
  auto seeded = testing::SeedQueue(db(), 12, 0, "perf", "new", "cpu-test", 4, "CPU",
                                   {"TestSolver9001"});
  REQUIRE(seeded.ok());
  REQUIRE(seeded->jobs == 12);
  const std::string session = absl::StrCat(seeded->session_id);
  auto queue = [&](const std::string& state) {
    return "tuna_queue_jobs{session=\"" + session + "\",state=\"" + state + "\"}";
  };

  auto metrics = coordinator::Metrics::ForCoordinator();
  coordinator::CoordinatorOptions o;
  o.reap_interval = absl::ZeroDuration();
  o.empty_poll_interval = absl::Milliseconds(50);
  o.registry = registry.get();
  o.metrics = metrics.get();
  auto coord = coordinator::Coordinator::Create(db(), o);
  REQUIRE(coord.ok());
  coordinator::QueueSamplerOptions qo;
  qo.interval = absl::Milliseconds(100);
  auto sampler = coordinator::QueueSampler::Start(db(), *metrics, qo);
  coordinator::MetricsHttpOptions ho;
  ho.listen = "127.0.0.1:0";
  ho.healthy = [s = sampler.get()] { return s->Healthy(); };
  auto http = coordinator::MetricsHttpServer::Start(*metrics, ho);
  REQUIRE(http.ok());
  const int port = (*http)->port();

  // Before any work: the queue is sampled, the counters exist at zero.
  CHECK(AwaitSample(port, queue("new"), 12) == 12);
  std::string text = Scrape(port);
  CHECK(Sample(text, "tuna_leases_total{step=\"compile\"}") == 0);
  CHECK(Sample(text, "tuna_workers_alive") == 0);
  CHECK(Scrape(port, "/healthz").find("200 OK") != std::string::npos);

  auto client = coordinator::MakeInProcessClient(**coord);
  coordinator::Device dev{"cpu", "cpu-test", 4, 0, 0};
  auto reg = client->Register({coordinator::kProtocolVersion, "gpu-host-1", "test", {dev}});
  REQUIRE(reg.ok());
  const std::string id = reg->worker_id;

  auto lease = [&](JobStep step, int max) {
    LeaseRequest req;
    req.worker_id = id;
    req.step = step;
    req.compile_backends = {"cpu"};
    req.device = dev;
    req.max_jobs = max;
    req.wait = absl::Seconds(2);
    auto jobs = client->Lease(req);
    REQUIRE(jobs.ok());
    return *jobs;
  };
  auto compile = [&](const coordinator::LeasedJob& j) {
    coordinator::KernelBlob k{hash::Sha256Hex(j.driver), j.arch, "test", "k.cc", "-DX=1",
                           "f", "code of " + j.driver};
    auto ids = client->PutKernels(id, j.job_id, j.attempt, {k});
    REQUIRE(ids.ok());
    Report rep;
    rep.worker_id = id;
    rep.job_id = j.job_id;
    rep.attempt = j.attempt;
    rep.step = JobStep::kCompile;
    rep.succeeded = true;
    rep.kernels = {{(*ids)[0], k.build_key}};
    REQUIRE(client->Report(rep).ok());
  };

  // First lease: 4 compile jobs held. The live view sees them on the worker's host.
  auto first = lease(JobStep::kCompile, 4);
  REQUIRE(first.size() == 4);
  text = Scrape(port);
  CHECK(Sample(text, "tuna_leases_total{step=\"compile\"}") == 4);
  CHECK(Sample(text, "tuna_lease_requests_total{step=\"compile\"}") == 1);
  CHECK(Sample(text, "tuna_lease_latency_seconds_count{step=\"compile\"}") == 1);
  CHECK(Sample(text, "tuna_claim_duration_seconds_count{step=\"compile\"}") >= 1);
  CHECK(Sample(text, "tuna_worker_registrations_total") == 1);
  CHECK(AwaitSample(port, queue("compile_start"), 4) == 4);
  CHECK(AwaitSample(port, "tuna_workers_alive", 1) == 1);
  auto activity = admin::ReadWorkerActivity(db(), seeded->session_id, absl::Minutes(5));
  REQUIRE(activity.ok());
  REQUIRE(activity->size() == 1);
  CHECK((*activity)[0].host == "gpu-host-1");
  CHECK((*activity)[0].arch == "cpu-test");
  CHECK((*activity)[0].backend == "CPU");
  REQUIRE((*activity)[0].current_jobs.size() == 4);
  CHECK((*activity)[0].current_jobs[0].find("compile_start (TestSolver9001)") !=
        std::string::npos);

  for (const auto& j : first) compile(j);
  text = Scrape(port);
  CHECK(Sample(text, "tuna_reports_total{outcome=\"applied\",result=\"success\",step=\"compile\"}") == 4);
  CHECK(Sample(text, "tuna_kernels_stored_total") == 4);
  CHECK(AwaitSample(port, queue("compiled"), 4) == 4);
  CHECK(AwaitSample(port, queue("new"), 8) == 8);

  // The rest of the compiles, then every eval: one fails for good, the others pass.
  for (int k = 0; k < 10; ++k) {
    auto jobs = lease(JobStep::kCompile, 4);
    if (jobs.empty()) break;
    for (const auto& j : jobs) compile(j);
  }
  CHECK(Sample(Scrape(port), "tuna_leases_total{step=\"compile\"}") == 12);
  CHECK(AwaitSample(port, queue("compiled"), 12) == 12);

  Report good_eval;
  int failed = 0, passed = 0;
  for (int k = 0; k < 20 && passed + failed < 12; ++k) {
    for (const auto& j : lease(JobStep::kEval, 3)) {
      Report rep;
      rep.worker_id = id;
      rep.job_id = j.job_id;
      rep.attempt = j.attempt;
      rep.step = JobStep::kEval;
      if (failed == 0) {
        rep.succeeded = false;
        rep.retryable = false;
        rep.error = "Incorrect: every candidate failed verification";
        ++failed;
      } else {
        rep.succeeded = true;
        rep.has_result = true;
        rep.params = "2";
        rep.kernel_time_ms = 0.25;
        rep.verified = true;
        rep.candidates_tried = 1;
        rep.samples = {{"2", 0.25, "Passed", ""}};
        rep.timings = {2.0, 1.5, 1.0};  // the worker's own measure of the step
        good_eval = rep;
        ++passed;
      }
      REQUIRE(client->Report(rep).ok());
    }
  }
  REQUIRE(passed == 11);
  REQUIRE(failed == 1);
  // A duplicate and an invalid report are counted by outcome and change nothing.
  CHECK(client->Report(good_eval).ok());
  Report bad = good_eval;
  bad.kernel_time_ms = -1;
  CHECK(client->Report(bad).code() == absl::StatusCode::kInvalidArgument);
  bad = good_eval;
  bad.timings.device_seconds = -1;
  CHECK(client->Report(bad).code() == absl::StatusCode::kInvalidArgument);

  text = Scrape(port);
  CHECK(Sample(text, "tuna_leases_total{step=\"eval\"}") == 12);
  CHECK(Sample(text, "tuna_reports_total{outcome=\"applied\",result=\"success\",step=\"eval\"}") == 11);
  CHECK(Sample(text, "tuna_reports_total{outcome=\"applied\",result=\"failure\",step=\"eval\"}") == 1);
  CHECK(Sample(text, "tuna_reports_total{outcome=\"duplicate\",result=\"success\",step=\"eval\"}") == 1);
  CHECK(Sample(text, "tuna_reports_total{outcome=\"invalid\",result=\"success\",step=\"eval\"}") == 2);
  CHECK(Sample(text, "tuna_job_failures_total{reason=\"permanent\",step=\"eval\"}") == 1);
  // Worker timings of applied reports only (not of the duplicate): 11 x (2, 1.5, 1) s.
  CHECK(Sample(text, "tuna_worker_step_seconds_count{step=\"eval\"}") == 11);
  CHECK(Sample(text, "tuna_worker_eval_seconds_total{worker=\"gpu-host-1\"}") == 22);
  CHECK(Sample(text, "tuna_worker_device_seconds_total{worker=\"gpu-host-1\"}") == 16.5);
  CHECK(Sample(text, "tuna_worker_kernel_seconds_total{worker=\"gpu-host-1\"}") == 11);
  CHECK(Sample(text, "tuna_lease_latency_seconds_count{step=\"eval\"}") >= 4);
  CHECK(Sample(text, "tuna_lease_latency_seconds_bucket{step=\"eval\",le=\"+Inf\"}") ==
        Sample(text, "tuna_lease_latency_seconds_count{step=\"eval\"}"));
  CHECK(AwaitSample(port, queue("evaluated"), 11) == 11);
  CHECK(AwaitSample(port, queue("failed"), 1) == 1);
  CHECK(std::isnan(Sample(Scrape(port), queue("new"))));  // no job is new any more
  text = Scrape(port);
  double db_errors = 0;
  for (const char* op : {"claim", "report", "reap", "renew", "release", "register", "kernels",
                         "sample"}) {
    db_errors += Sample(text, std::string("tuna_db_errors_total{operation=\"") + op + "\"}");
  }
  CHECK(db_errors == 0);
  CHECK(Sample(text, "tuna_queue_sample_timestamp_seconds") > 1.6e9);

  // The sampler stamps the worker table's last_seen for the hosts that called.
  auto seen = db().Query(
      "SELECT TIMESTAMPDIFF(SECOND, last_seen, NOW(6)) FROM worker WHERE host = 'gpu-host-1'");
  REQUIRE(seen.ok());
  REQUIRE(seen->size() == 1);
  CHECK((*seen)[0].Int(0) <= 5);

  // A reaped lease is counted: forgiven, since its lease ran out before this coordinator had
  // been serving for a lease (it could not have been renewed; coordinator.h, serving grace).
  REQUIRE(db().Execute("UPDATE job SET state = 'compile_start', lease_owner = 'x/1', "
                       "lease_expires_at = NOW(6) - INTERVAL 1 SECOND, attempt = attempt + 1 "
                       "WHERE state = 'failed'")
              .ok());
  REQUIRE((*coord)->Reap().ok());
  CHECK(Sample(Scrape(port), "tuna_reaped_jobs_total{outcome=\"forgiven\"}") == 1);
  CHECK(Sample(Scrape(port), "tuna_reaped_jobs_total{outcome=\"requeued\"}") +
            Sample(Scrape(port), "tuna_reaped_jobs_total{outcome=\"failed\"}") ==
        0);

  (*coord)->Shutdown();
  sampler->Stop();
  (*http)->Shutdown();
}

}  // namespace
}  // namespace tuna
