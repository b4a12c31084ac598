// Unit tests of coordinator/metrics.h without a database: the Prometheus text format as
// prometheus-cpp writes it (escaping, numbers, cumulative histogram buckets, families sorted by
// name), undefined families, and the HTTP server
// (GET/HEAD /metrics, /healthz healthy and not, 404, 405) over a real loopback socket.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>

#include "catch2/catch.hpp"
#include "coordinator/metrics.h"

namespace tuna {
namespace {

using coordinator::Metrics;
using coordinator::MetricType;

// A raw HTTP/1.1 exchange (no client library: this is what Prometheus' scraper sees).
std::string Http(int port, const std::string& request) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  REQUIRE(write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size()));
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
  close(fd);
  return out;
}

TEST_CASE("metrics render in the Prometheus text format", "[ops]") {
  Metrics m;
  m.Define("t_requests_total", MetricType::kCounter, "Requests.\nSecond line");
  m.Define("t_depth", MetricType::kGauge, "Depth.");
  m.Define("t_latency_seconds", MetricType::kHistogram, "Latency.", {0.1, 1});
  m.Add("t_requests_total", {{"step", "eval"}});
  m.Add("t_requests_total", {{"step", "eval"}}, 2);
  m.Add("t_requests_total", {{"step", "a\"b\\c"}});
  m.Set("t_depth", {}, 1795400000.123456);
  m.Observe("t_latency_seconds", {{"step", "compile"}}, 0.05);
  m.Observe("t_latency_seconds", {{"step", "compile"}}, 0.5);
  m.Observe("t_latency_seconds", {{"step", "compile"}}, 5);
  const std::string text = m.Render();
  CHECK(text.find("# HELP t_requests_total Requests.\\nSecond line\n") != std::string::npos);
  CHECK(text.find("# TYPE t_requests_total counter\n") != std::string::npos);
  CHECK(text.find("t_requests_total{step=\"eval\"} 3\n") != std::string::npos);
  CHECK(text.find("t_requests_total{step=\"a\\\"b\\\\c\"} 1\n") != std::string::npos);
  CHECK(text.find("t_depth 1795400000.123456\n") != std::string::npos);
  CHECK(text.find("# TYPE t_latency_seconds histogram\n") != std::string::npos);
  CHECK(text.find("t_latency_seconds_bucket{step=\"compile\",le=\"0.1\"} 1\n") != std::string::npos);
  CHECK(text.find("t_latency_seconds_bucket{step=\"compile\",le=\"1\"} 2\n") != std::string::npos);
  CHECK(text.find("t_latency_seconds_bucket{step=\"compile\",le=\"+Inf\"} 3\n") !=
        std::string::npos);
  CHECK(text.find("t_latency_seconds_sum{step=\"compile\"} 5.55\n") != std::string::npos);
  CHECK(text.find("t_latency_seconds_count{step=\"compile\"} 3\n") != std::string::npos);
  CHECK(m.Value("t_requests_total", {{"step", "eval"}}) == 3);
  CHECK(m.Value("t_latency_seconds", {{"step", "compile"}}) == 3);
  CHECK(m.Total("t_requests_total") == 4);
  // Families are sorted by name, every family has HELP before TYPE.
  CHECK(text.find("t_depth") < text.find("t_latency_seconds"));
  // Wrong type or undefined: ignored, never a crash.
  m.Set("t_requests_total", {}, 7);
  m.Add("t_undefined_total", {});
  CHECK(m.Value("t_requests_total", {}) == 0);
  CHECK(m.Render().find("t_undefined_total") == std::string::npos);
  m.ClearGauge("t_depth");
  CHECK(m.Render().find("t_depth 1") == std::string::npos);
}

TEST_CASE("the coordinator's families are defined with zero series", "[ops]") {
  auto m = Metrics::ForCoordinator();
  const std::string text = m->Render();
  for (const char* family :
       {"tuna_leases_total", "tuna_reports_total", "tuna_job_failures_total",
        "tuna_queue_jobs", "tuna_lease_latency_seconds", "tuna_workers_alive",
        "tuna_db_errors_total", "tuna_reaped_jobs_total"}) {
    INFO(family);
    CHECK(text.find(std::string("# TYPE ") + family + " ") != std::string::npos);
  }
  CHECK(text.find("tuna_leases_total{step=\"eval\"} 0\n") != std::string::npos);
  CHECK(text.find("tuna_db_errors_total{operation=\"claim\"} 0\n") != std::string::npos);
  m->WorkerSeen("host-a/1234");
  CHECK(m->WorkersSeenSince(absl::Now() - absl::Minutes(1)).size() == 1);
  CHECK(m->WorkersSeenSince(absl::Now() + absl::Minutes(1)).empty());
}

TEST_CASE("the HTTP server answers /metrics and /healthz", "[ops]") {
  Metrics m;
  m.Define("t_total", MetricType::kCounter, "T.");
  m.Add("t_total", {}, 41);
  std::atomic<bool> healthy{true};
  coordinator::MetricsHttpOptions o;
  o.listen = "127.0.0.1:0";
  o.healthy = [&] { return healthy.load(); };
  auto s = coordinator::MetricsHttpServer::Start(m, o);
  REQUIRE(s.ok());
  const int port = (*s)->port();
  REQUIRE(port > 0);

  std::string r = Http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
  CHECK(r.find("Content-Type: text/plain; version=0.0.4") != std::string::npos);
  CHECK(r.find("\r\n\r\n# HELP t_total T.\n# TYPE t_total counter\nt_total 41\n") !=
        std::string::npos);
  m.Add("t_total", {});
  CHECK(Http(port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n").find("t_total 42\n") != std::string::npos);

  r = Http(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 200 OK", 0) == 0);
  CHECK(r.find("t_total") == std::string::npos);

  CHECK(Http(port, "GET /healthz HTTP/1.1\r\n\r\n").find("200 OK\r\n") != std::string::npos);
  healthy = false;
  r = Http(port, "GET /healthz HTTP/1.1\r\n\r\n");
  CHECK(r.rfind("HTTP/1.1 503 Service Unavailable", 0) == 0);

  CHECK(Http(port, "GET /nope HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 404", 0) == 0);
  CHECK(Http(port, "POST /metrics HTTP/1.1\r\n\r\n").rfind("HTTP/1.1 405", 0) == 0);
  r = Http(port, "garbage\r\n\r\n");  // no HTTP version given: civetweb answers in HTTP/1.0
  CHECK(r.substr(0, r.find("\r\n")).find(" 400 Bad Request") != std::string::npos);
  (*s)->Shutdown();
  // After shutdown the port no longer accepts.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  CHECK(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0);
  close(fd);
}

TEST_CASE("bad metrics addresses are refused", "[ops]") {
  Metrics m;
  coordinator::MetricsHttpOptions o;
  o.listen = "nonsense";
  CHECK(coordinator::MetricsHttpServer::Start(m, o).status().code() ==
        absl::StatusCode::kInvalidArgument);
  o.listen = "127.0.0.1:99999";
  CHECK(coordinator::MetricsHttpServer::Start(m, o).status().code() ==
        absl::StatusCode::kInvalidArgument);
  o.listen = "my-host:9464";  // names are not resolved: give an address
  CHECK(coordinator::MetricsHttpServer::Start(m, o).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tuna
