#include "coordinator/metrics.h"

#include <CivetServer.h>
#include <arpa/inet.h>

#include <algorithm>
#include <functional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"
#include "schema/store/job_store.h"
#include "schema/store/worker_store.h"
#include "spdlog/spdlog.h"

namespace tuna::coordinator {
namespace {

// Leasing latencies: a claim is milliseconds; a long-poll that found work is up to max_wait.
const std::vector<double>& LatencyBuckets() {
  static const auto* b = new std::vector<double>{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                 0.25,  0.5,    1,     2.5,  5,     10,   30};
  return *b;
}

const char* TypeName(MetricType t) {
  switch (t) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// HELP text as the exposition format wants it (prometheus-cpp writes it as given).
std::string EscapeHelp(const std::string& help) {
  std::string out;
  for (char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {}
Metrics::~Metrics() = default;

std::unique_ptr<Metrics> Metrics::ForCoordinator() {
  auto m = std::make_unique<Metrics>();
  using T = MetricType;
  m->Define("tuna_coordinator_start_time_seconds", T::kGauge,
            "Unix time at which this coordinator started.");
  m->Define("tuna_worker_registrations_total", T::kCounter, "Worker registrations accepted.");
  m->Define("tuna_lease_requests_total", T::kCounter,
            "Lease calls by step (long-polls that ended empty included).");
  m->Define("tuna_leases_total", T::kCounter, "Jobs handed out to workers, by step.");
  m->Define("tuna_lease_latency_seconds", T::kHistogram,
            "From a lease call to its answer, for calls that got jobs, by step.",
            LatencyBuckets());
  m->Define("tuna_claim_duration_seconds", T::kHistogram,
            "One batched claim transaction in the database, by step.", LatencyBuckets());
  m->Define("tuna_reports_total", T::kCounter,
            "Step reports by step, result (success|failure) and outcome "
            "(applied|duplicate|stale|not_found|invalid|error).");
  m->Define("tuna_job_failures_total", T::kCounter,
            "Failed job steps by step and reason (retryable|permanent|executor_killed, or "
            "host|unsupported: handed back without a retry charged); expired leases are counted "
            "by tuna_reaped_jobs_total.");
  m->Define("tuna_benched_hosts", T::kGauge,
            "Hosts getting no eval leases after too many infrastructure failures in a row.");
  m->Define("tuna_reaped_jobs_total", T::kCounter,
            "Expired leases returned by the reaper, by outcome (requeued|failed|forgiven: requeued "
            "without a retry counted, expired while no coordinator or database served them).");
  m->Define("tuna_db_outages_total", T::kCounter,
            "Times the database became reachable again after this coordinator lost it.");
  m->Define("tuna_renewals_total", T::kCounter, "Lease renewals, by outcome (held|lost).");
  m->Define("tuna_released_jobs_total", T::kCounter, "Leases handed back by workers.");
  m->Define("tuna_kernels_stored_total", T::kCounter, "Code objects received with PutKernels.");
  m->Define("tuna_db_errors_total", T::kCounter,
            "Database operations that failed, by operation "
            "(claim|report|reap|renew|release|register|kernels|sample).");
  m->Define("tuna_queue_jobs", T::kGauge,
            "Jobs per session and state, sampled from the database every sample interval.");
  m->Define("tuna_queue_sample_timestamp_seconds", T::kGauge,
            "Unix time of the last successful queue sample.");
  m->Define("tuna_workers_alive", T::kGauge,
            "Workers (registrations) that called this coordinator within the alive window.");
  m->Define("tuna_lease_waiters", T::kGauge, "Lease calls waiting for jobs right now.");
  m->Define("tuna_worker_step_seconds", T::kHistogram,
            "Job steps as long as the worker measured them (applied reports), by step.",
            {0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800});
  m->Define("tuna_worker_eval_seconds_total", T::kCounter,
            "Eval steps' wall time on the workers (applied reports), by worker host.");
  m->Define("tuna_worker_device_seconds_total", T::kCounter,
            "Of which in device work (copies, loads, runs, timed batches), by worker host.");
  m->Define("tuna_worker_kernel_seconds_total", T::kCounter,
            "Of which timed kernel runs (device events), by worker host.");
  m->Set("tuna_coordinator_start_time_seconds", {}, absl::ToUnixMicros(absl::Now()) / 1e6);
  // Zero series from the start, so that rate() and alerts see the counters before the first
  // event rather than an absent series.
  for (const char* step : {"compile", "eval"}) {
    m->Add("tuna_lease_requests_total", {{"step", step}}, 0);
    m->Add("tuna_leases_total", {{"step", step}}, 0);
    for (const char* result : {"success", "failure"}) {
      m->Add("tuna_reports_total", {{"step", step}, {"result", result}, {"outcome", "applied"}}, 0);
    }
  }
  for (const char* op : {"claim", "report", "reap", "renew", "release", "register", "kernels",
                         "sample"}) {
    m->Add("tuna_db_errors_total", {{"operation", op}}, 0);
  }
  m->Add("tuna_worker_registrations_total", {}, 0);
  m->Add("tuna_db_outages_total", {}, 0);
  return m;
}

void Metrics::Define(const std::string& name, MetricType type, const std::string& help,
                     std::vector<double> buckets) {
  absl::MutexLock l(&mu_);
  if (families_.count(name)) return;
  Family f;
  f.type = type;
  f.bounds = std::move(buckets);
  f.help = EscapeHelp(help);
  switch (type) {
    case MetricType::kCounter:
      f.counters = &prometheus::BuildCounter().Name(name).Help(f.help).Register(*registry_);
      break;
    case MetricType::kGauge:
      f.gauges = &prometheus::BuildGauge().Name(name).Help(f.help).Register(*registry_);
      break;
    case MetricType::kHistogram:
      f.histograms = &prometheus::BuildHistogram().Name(name).Help(f.help).Register(*registry_);
      break;
  }
  families_.emplace(name, std::move(f));
}

Metrics::Family* Metrics::Find(const std::string& name, MetricType type) {
  auto it = families_.find(name);
  if (it == families_.end() || it->second.type != type) {
    if (!warned_[name]) {
      warned_[name] = true;
      spdlog::warn("metrics: {} is not defined as a {}", name, TypeName(type));
    }
    return nullptr;
  }
  return &it->second;
}

void Metrics::Add(const std::string& name, const Labels& labels, double delta) {
  absl::MutexLock l(&mu_);
  Family* f = Find(name, MetricType::kCounter);
  if (f == nullptr) return;
  if (!f->counters->Has(labels)) series_[name].push_back(labels);
  f->counters->Add(labels).Increment(delta);
}

void Metrics::Set(const std::string& name, const Labels& labels, double value) {
  absl::MutexLock l(&mu_);
  Family* f = Find(name, MetricType::kGauge);
  if (f == nullptr) return;
  if (!f->gauges->Has(labels)) series_[name].push_back(labels);
  f->gauges->Add(labels).Set(value);
}

void Metrics::ClearGauge(const std::string& name) {
  absl::MutexLock l(&mu_);
  Family* f = Find(name, MetricType::kGauge);
  if (f == nullptr) return;
  for (const Labels& labels : series_[name]) f->gauges->Remove(&f->gauges->Add(labels));
  series_[name].clear();
}

void Metrics::Observe(const std::string& name, const Labels& labels, double value) {
  absl::MutexLock l(&mu_);
  Family* f = Find(name, MetricType::kHistogram);
  if (f == nullptr) return;
  if (!f->histograms->Has(labels)) series_[name].push_back(labels);
  f->histograms->Add(labels, prometheus::Histogram::BucketBoundaries(f->bounds)).Observe(value);
}

double Metrics::SeriesValue(const Family& f, const Labels& labels) const {
  switch (f.type) {
    case MetricType::kCounter:
      return f.counters->Has(labels) ? f.counters->Add(labels).Value() : 0;
    case MetricType::kGauge:
      return f.gauges->Has(labels) ? f.gauges->Add(labels).Value() : 0;
    case MetricType::kHistogram:
      if (!f.histograms->Has(labels)) return 0;
      return static_cast<double>(
          f.histograms->Add(labels, prometheus::Histogram::BucketBoundaries(f.bounds))
              .Collect()
              .histogram.sample_count);
  }
  return 0;
}

double Metrics::Value(const std::string& name, const Labels& labels) const {
  absl::MutexLock l(&mu_);
  auto it = families_.find(name);
  return it == families_.end() ? 0 : SeriesValue(it->second, labels);
}

double Metrics::Total(const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = families_.find(name);
  auto series = series_.find(name);
  if (it == families_.end() || series == series_.end()) return 0;
  double sum = 0;
  for (const Labels& labels : series->second) sum += SeriesValue(it->second, labels);
  return sum;
}

std::string Metrics::Render() const {
  std::vector<prometheus::MetricFamily> families = registry_->Collect();
  {
    // prometheus-cpp leaves out families without series; operators want every family's HELP and
    // TYPE from the start (so a dashboard's query names a known metric).
    absl::MutexLock l(&mu_);
    for (const auto& [name, f] : families_) {
      const bool present = std::any_of(families.begin(), families.end(),
                                       [&](const auto& x) { return x.name == name; });
      if (present) continue;
      families.push_back({name, f.help,
                          f.type == MetricType::kCounter ? prometheus::MetricType::Counter
                          : f.type == MetricType::kGauge ? prometheus::MetricType::Gauge
                                                         : prometheus::MetricType::Histogram,
                          {}});
    }
  }
  std::sort(families.begin(), families.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return prometheus::TextSerializer().Serialize(families);
}

void Metrics::WorkerSeen(const std::string& worker_id) {
  absl::MutexLock l(&mu_);
  workers_seen_[worker_id] = absl::Now();
  // Bounded memory over days of restarts: forget workers silent for a day.
  if (workers_seen_.size() > 4096) {
    const absl::Time cutoff = absl::Now() - absl::Hours(24);
    for (auto it = workers_seen_.begin(); it != workers_seen_.end();) {
      it = it->second < cutoff ? workers_seen_.erase(it) : std::next(it);
    }
  }
}

std::vector<std::string> Metrics::WorkersSeenSince(absl::Time since) const {
  absl::MutexLock l(&mu_);
  std::vector<std::string> out;
  for (const auto& [id, t] : workers_seen_) {
    if (t >= since) out.push_back(id);
  }
  return out;
}

// ---- QueueSampler ----

std::unique_ptr<QueueSampler> QueueSampler::Start(schema::Database& db, Metrics& metrics,
                                                  QueueSamplerOptions options) {
  std::unique_ptr<QueueSampler> s(new QueueSampler(db, metrics, options));
  s->thread_ = std::thread([p = s.get()] { p->Loop(); });
  return s;
}

QueueSampler::~QueueSampler() { Stop(); }

void QueueSampler::Stop() {
  {
    absl::MutexLock l(&mu_);
    stop_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void QueueSampler::Loop() {
  int failed = 0;  // in a row: logged when it begins and when it ends, not every sample
  while (true) {
    absl::Status st = SampleOnce();
    if (!st.ok() && failed++ == 0) {
      spdlog::warn("metrics: queue sample failed: {} (retried every {} s; said once)",
                   st.ToString(), absl::ToDoubleSeconds(options_.interval));
    } else if (st.ok() && failed > 0) {
      spdlog::info("metrics: queue samples work again after {} failed", failed);
      failed = 0;
    }
    absl::MutexLock l(&mu_);
    auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
    if (mu_.AwaitWithTimeout(absl::Condition(&stop), options_.interval)) return;
  }
}

absl::Status QueueSampler::SampleOnce() {
  const absl::Time now = absl::Now();
  const std::vector<std::string> alive = metrics_.WorkersSeenSince(now - options_.alive_window);
  metrics_.Set("tuna_workers_alive", {}, static_cast<double>(alive.size()));
  absl::Status first;
  auto rows = schema::JobStore(db_).CountBySessionAndState();
  if (rows.ok()) {
    metrics_.ClearGauge("tuna_queue_jobs");
    for (const schema::SessionStateCount& r : *rows) {
      metrics_.Set("tuna_queue_jobs", {{"session", absl::StrCat(r.session_id)}, {"state", r.state}},
                   static_cast<double>(r.jobs));
    }
    metrics_.Set("tuna_queue_sample_timestamp_seconds", {}, absl::ToUnixMicros(now) / 1e6);
  } else {
    metrics_.Add("tuna_db_errors_total", {{"operation", "sample"}});
    first = rows.status();
  }
  if (options_.update_worker_last_seen) {
    absl::Time since;
    {
      absl::MutexLock l(&mu_);
      since = last_flush_;
    }
    std::set<std::string> hosts;
    for (const auto& id : metrics_.WorkersSeenSince(since)) {
      hosts.insert(schema::LeaseOwnerHost(id));
    }
    bool flushed = true;
    for (const auto& h : hosts) {  // a handful of hosts per interval: one small write each
      absl::Status n = schema::WorkerStore(db_).MarkSeen(h);
      if (!n.ok()) {
        metrics_.Add("tuna_db_errors_total", {{"operation", "sample"}});
        if (first.ok()) first = n;
        flushed = false;
        break;
      }
    }
    if (flushed) {
      absl::MutexLock l(&mu_);
      last_flush_ = now;
    }
  }
  if (first.ok()) {
    absl::MutexLock l(&mu_);
    last_ok_ = now;
  }
  return first;
}

bool QueueSampler::Healthy() const {
  absl::MutexLock l(&mu_);
  return absl::Now() - last_ok_ <= 3 * options_.interval + absl::Seconds(5);
}

// ---- MetricsHttpServer ----

namespace {

// The listening_ports value civetweb takes for "host:port" ("[v6]:port"); names are not resolved.
absl::StatusOr<std::string> CivetPort(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("metrics address '", listen, "' is not host:port"));
  }
  std::string host = listen.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("metrics address '", listen, "' has a bad port"));
  }
  if (host == "localhost") host = "127.0.0.1";
  if (host.empty()) return absl::StrCat(port);
  const bool v6 = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  in6_addr a6;
  in_addr a4;
  if (v6 ? inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(), &a6) != 1
         : inet_pton(AF_INET, host.c_str(), &a4) != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics host '", host, "' is not an IPv4 address (or [IPv6])"));
  }
  return absl::StrCat(host, ":", port);
}

}  // namespace

// GET and HEAD answer with `body()`'s code and text; every other method gets 405.
class MetricsHttpServer::Handler : public CivetHandler {
 public:
  using Body = std::function<std::pair<int, std::string>()>;
  Handler(std::string content_type, Body body)
      : content_type_(std::move(content_type)), body_(std::move(body)) {}
  bool handleGet(CivetServer*, mg_connection* c) override { return Answer(c, true); }
  bool handleHead(CivetServer*, mg_connection* c) override { return Answer(c, false); }
  bool handlePost(CivetServer*, mg_connection* c) override { return NotAllowed(c); }
  bool handlePut(CivetServer*, mg_connection* c) override { return NotAllowed(c); }
  bool handleDelete(CivetServer*, mg_connection* c) override { return NotAllowed(c); }
  bool handleOptions(CivetServer*, mg_connection* c) override { return NotAllowed(c); }
  bool handlePatch(CivetServer*, mg_connection* c) override { return NotAllowed(c); }

 private:
  bool Answer(mg_connection* c, bool with_body) {
    const auto [code, text] = body_();
    mg_response_header_start(c, code);
    mg_response_header_add(c, "Content-Type", content_type_.c_str(), -1);
    mg_response_header_add(c, "Content-Length", std::to_string(text.size()).c_str(), -1);
    mg_response_header_add(c, "Connection", "close", -1);
    mg_response_header_send(c);
    if (with_body) mg_write(c, text.data(), text.size());
    return true;
  }
  static bool NotAllowed(mg_connection* c) {
    mg_send_http_error(c, 405, "only GET and HEAD\n");
    return true;
  }
  const std::string content_type_;
  const Body body_;
};

MetricsHttpServer::MetricsHttpServer(const Metrics& metrics, MetricsHttpOptions options)
    : metrics_(metrics), options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const Metrics& metrics, MetricsHttpOptions options) {
  auto port = CivetPort(options.listen);
  if (!port.ok()) return port.status();
  std::unique_ptr<MetricsHttpServer> s(new MetricsHttpServer(metrics, std::move(options)));
  MetricsHttpServer* p = s.get();
  s->metrics_handler_ = std::make_unique<Handler>(
      "text/plain; version=0.0.4; charset=utf-8",
      [p] { return std::make_pair(200, p->metrics_.Render()); });
  s->health_handler_ = std::make_unique<Handler>("text/plain; charset=utf-8", [p] {
    const bool ok = !p->options_.healthy || p->options_.healthy();
    return ok ? std::make_pair(200, std::string("ok\n"))
              : std::make_pair(503, std::string("unhealthy: the database has not answered recently\n"));
  });
  const std::vector<std::string> civet_options = {
      "listening_ports", *port, "num_threads", "2", "request_timeout_ms", "2000",
      "enable_keep_alive", "no"};
  try {
    s->server_ = std::make_unique<CivetServer>(civet_options);
  } catch (const std::exception& e) {  // CivetException: the port cannot be bound
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", s->options_.listen, ": ", e.what()));
  }
  s->server_->addHandler("/metrics", s->metrics_handler_.get());
  s->server_->addHandler("/healthz", s->health_handler_.get());
  const std::vector<int> ports = s->server_->getListeningPorts();
  s->port_ = ports.empty() ? 0 : ports.front();
  spdlog::info("metrics: serving /metrics and /healthz on {} (port {})", s->options_.listen,
               s->port_);
  return s;
}

MetricsHttpServer::~MetricsHttpServer() { Shutdown(); }

void MetricsHttpServer::Shutdown() {
  if (server_) server_->close();
  server_.reset();
}

}  // namespace tuna::coordinator
