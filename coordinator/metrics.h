// What operators observe of a running coordinator (docs/OPERATIONS.md lists every name):
//   Metrics             counters, gauges and histograms with labels in a prometheus-cpp
//                       registry, rendered by prometheus-cpp's text serializer (exposition
//                       format 0.0.4)
//   QueueSampler        a thread that samples the queue depth per (session, state) from the
//                       database, counts the workers seen recently and writes their last_seen
//   MetricsHttpServer   GET /metrics and GET /healthz, served by civetweb (the HTTP server
//                       prometheus-cpp's pull exposer is built on; used directly for /healthz)
//
// The Coordinator counts into a Metrics it is given (CoordinatorOptions::metrics); the Metrics
// knows nothing of the coordinator, so it can be tested and reused (a worker could serve one too).
//
// Threads: every class here is thread-safe. Ownership: a Metrics must outlive the Coordinator,
// QueueSampler and MetricsHttpServer that use it. Errors: absl::Status; a scrape never fails
// (a metric that cannot be sampled keeps its last value and tuna_db_errors_total counts it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "schema/store/database.h"

namespace prometheus {
class Registry;
class Counter;
class Gauge;
class Histogram;
template <typename T>
class Family;
}  // namespace prometheus

class CivetServer;

namespace tuna::coordinator {

// Label name → value, ordered (so one label set has one rendering).
using Labels = std::map<std::string, std::string>;

enum class MetricType { kCounter, kGauge, kHistogram };

class Metrics {
 public:
  // With every coordinator family defined (names in docs/OPERATIONS.md).
  static std::unique_ptr<Metrics> ForCoordinator();

  Metrics();
  ~Metrics();
  // Declares a family. `buckets` (upper bounds, ascending) only for histograms. Defining a name
  // twice keeps the first definition.
  void Define(const std::string& name, MetricType type, const std::string& help,
              std::vector<double> buckets = {});

  // Updates of an undefined family are ignored (and logged once): metrics never fail the caller.
  void Add(const std::string& name, const Labels& labels, double delta = 1);  // counter
  void Set(const std::string& name, const Labels& labels, double value);      // gauge
  void Observe(const std::string& name, const Labels& labels, double value);  // histogram
  // Drops every series of a gauge family (before a fresh sample replaces them all).
  void ClearGauge(const std::string& name);

  // Counter/gauge value, or a histogram's observation count; 0 when the series does not exist.
  double Value(const std::string& name, const Labels& labels) const;
  // Sum over every series of a family (same meaning as Value).
  double Total(const std::string& name) const;

  // The exposition text (prometheus-cpp's): families sorted by name, each with # HELP and # TYPE.
  std::string Render() const;

  // Workers: any call from a worker marks it seen (coordinator.cc calls this).
  void WorkerSeen(const std::string& worker_id);
  // Worker ids seen at or after `since`.
  std::vector<std::string> WorkersSeenSince(absl::Time since) const;

 private:
  // One defined family: exactly one of the three pointers is set (owned by registry_).
  struct Family {
    MetricType type = MetricType::kCounter;
    prometheus::Family<prometheus::Counter>* counters = nullptr;
    prometheus::Family<prometheus::Gauge>* gauges = nullptr;
    prometheus::Family<prometheus::Histogram>* histograms = nullptr;
    std::vector<double> bounds;
    std::string help;  // escaped
  };
  Family* Find(const std::string& name, MetricType type) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  double SeriesValue(const Family& f, const Labels& labels) const ABSL_SHARED_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::shared_ptr<prometheus::Registry> registry_;
  std::map<std::string, Family> families_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<Labels>> series_ ABSL_GUARDED_BY(mu_);  // per family
  std::map<std::string, bool> warned_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, absl::Time> workers_seen_ ABSL_GUARDED_BY(mu_);
};

struct QueueSamplerOptions {
  absl::Duration interval = absl::Seconds(15);
  // A worker seen within this window counts as alive (a long-poll holds a worker up to the
  // coordinator's max_wait, so keep it above that).
  absl::Duration alive_window = absl::Seconds(90);
  bool update_worker_last_seen = true;  // UPDATE worker.last_seen for the hosts seen
};

// Samples every `interval` on its own thread (the first sample at Start). Each sample sets
// tuna_queue_jobs{session,state}, tuna_workers_alive, tuna_queue_sample_timestamp_seconds; a
// failed query adds to tuna_db_errors_total{operation="sample"}.
class QueueSampler {
 public:
  // The Database and Metrics must outlive the sampler.
  static std::unique_ptr<QueueSampler> Start(schema::Database& db, Metrics& metrics,
                                             QueueSamplerOptions options);
  ~QueueSampler();  // Stop()
  void Stop();
  // One sample now (also what the thread runs). Returns the first error.
  absl::Status SampleOnce();
  // True when the last sample succeeded and is not older than 3 intervals (healthz).
  bool Healthy() const;

 private:
  QueueSampler(schema::Database& db, Metrics& metrics, QueueSamplerOptions options)
      : db_(db), metrics_(metrics), options_(options) {}
  void Loop();

  schema::Database& db_;
  Metrics& metrics_;
  const QueueSamplerOptions options_;
  mutable absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time last_ok_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time last_flush_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::thread thread_;
};

struct MetricsHttpOptions {
  std::string listen = "127.0.0.1:9464";  // "host:port" (IPv4 or [IPv6]); port 0 picks one
  // GET /healthz answers 200 "ok" when this returns true (or is unset), else 503.
  std::function<bool()> healthy;
};

// Serves GET (and HEAD) /metrics and /healthz with civetweb (two threads); 404 for other paths,
// 405 for other methods, 400 for what is not HTTP, a 2 s request timeout per connection so a
// stuck client cannot block the next scrape for long.
class MetricsHttpServer {
 public:
  // Unavailable when the address cannot be bound; InvalidArgument when it does not parse.
  static absl::StatusOr<std::unique_ptr<MetricsHttpServer>> Start(const Metrics& metrics,
                                                                   MetricsHttpOptions options);
  ~MetricsHttpServer();  // Shutdown()
  int port() const { return port_; }
  void Shutdown();

 private:
  class Handler;  // a civetweb handler of one path
  MetricsHttpServer(const Metrics& metrics, MetricsHttpOptions options);

  const Metrics& metrics_;
  const MetricsHttpOptions options_;
  std::unique_ptr<Handler> metrics_handler_, health_handler_;  // outlive server_
  std::unique_ptr<CivetServer> server_;
  int port_ = 0;
};

}  // namespace tuna::coordinator
