#include "coordinator/metrics.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
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

std::string RenderLabels(const Labels& labels, const std::string& extra_name = "",
                         const std::string& extra_value = "") {
  if (labels.empty() && extra_name.empty()) return "";
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : labels) {
    absl::StrAppend(&out, first ? "" : ",", k, "=\"", EscapeLabelValue(v), "\"");
    first = false;
  }
  if (!extra_name.empty()) {
    absl::StrAppend(&out, first ? "" : ",", extra_name, "=\"", extra_value, "\"");
  }
  return out + "}";
}

}  // namespace

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string FormatMetricValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrCat(static_cast<int64_t>(v));
  char buf[32];  // enough digits for Unix times in microseconds
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  return buf;
}

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
  Family& f = families_[name];
  f.type = type;
  f.help = help;
  f.bounds = std::move(buckets);
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
  if (Family* f = Find(name, MetricType::kCounter)) f->series[labels].value += delta;
}

void Metrics::Set(const std::string& name, const Labels& labels, double value) {
  absl::MutexLock l(&mu_);
  if (Family* f = Find(name, MetricType::kGauge)) f->series[labels].value = value;
}

void Metrics::ClearGauge(const std::string& name) {
  absl::MutexLock l(&mu_);
  if (Family* f = Find(name, MetricType::kGauge)) f->series.clear();
}

void Metrics::Observe(const std::string& name, const Labels& labels, double value) {
  absl::MutexLock l(&mu_);
  Family* f = Find(name, MetricType::kHistogram);
  if (f == nullptr) return;
  Series& s = f->series[labels];
  if (s.buckets.empty()) s.buckets.assign(f->bounds.size(), 0);
  s.value += value;
  s.count += 1;
  for (size_t k = 0; k < f->bounds.size(); ++k) {
    if (value <= f->bounds[k]) {
      s.buckets[k] += 1;
      break;
    }
  }
}

double Metrics::Value(const std::string& name, const Labels& labels) const {
  absl::MutexLock l(&mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  auto s = it->second.series.find(labels);
  if (s == it->second.series.end()) return 0;
  return it->second.type == MetricType::kHistogram ? static_cast<double>(s->second.count)
                                                    : s->second.value;
}

double Metrics::Total(const std::string& name) const {
  absl::MutexLock l(&mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return 0;
  double sum = 0;
  for (const auto& [labels, s] : it->second.series) {
    sum += it->second.type == MetricType::kHistogram ? static_cast<double>(s.count) : s.value;
  }
  return sum;
}

std::string Metrics::Render() const {
  absl::MutexLock l(&mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    absl::StrAppend(&out, "# HELP ", name, " ", EscapeLabelValue(f.help), "\n# TYPE ", name, " ",
                    TypeName(f.type), "\n");
    for (const auto& [labels, s] : f.series) {
      if (f.type != MetricType::kHistogram) {
        absl::StrAppend(&out, name, RenderLabels(labels), " ", FormatMetricValue(s.value), "\n");
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t k = 0; k < f.bounds.size(); ++k) {
        cumulative += k < s.buckets.size() ? s.buckets[k] : 0;
        absl::StrAppend(&out, name, "_bucket",
                        RenderLabels(labels, "le", FormatMetricValue(f.bounds[k])), " ",
                        cumulative, "\n");
      }
      absl::StrAppend(&out, name, "_bucket", RenderLabels(labels, "le", "+Inf"), " ", s.count,
                      "\n", name, "_sum", RenderLabels(labels), " ", FormatMetricValue(s.value),
                      "\n", name, "_count", RenderLabels(labels), " ", s.count, "\n");
    }
  }
  return out;
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
  while (true) {
    absl::Status st = SampleOnce();
    if (!st.ok()) spdlog::warn("metrics: queue sample failed: {}", st.ToString());
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

absl::StatusOr<std::unique_ptr<MetricsHttpServer>> MetricsHttpServer::Start(
    const Metrics& metrics, MetricsHttpOptions options) {
  const size_t colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", options.listen, "' is not host:port"));
  }
  std::string host = options.listen.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(options.listen.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address '", options.listen, "' has a bad port"));
  }
  if (host == "localhost") host = "127.0.0.1";
  const bool v6 = host.size() >= 2 && host.front() == '[' && host.back() == ']';
  if (v6) host = host.substr(1, host.size() - 2);
  sockaddr_storage addr{};
  socklen_t len = 0;
  if (v6) {
    auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
    a->sin6_family = AF_INET6;
    a->sin6_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET6, host.c_str(), &a->sin6_addr) != 1) {
      return absl::InvalidArgumentError(absl::StrCat("bad IPv6 address '", host, "'"));
    }
    len = sizeof(sockaddr_in6);
  } else {
    auto* a = reinterpret_cast<sockaddr_in*>(&addr);
    a->sin_family = AF_INET;
    a->sin_port = htons(static_cast<uint16_t>(port));
    if (inet_pton(AF_INET, host.empty() ? "0.0.0.0" : host.c_str(), &a->sin_addr) != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("metrics host '", host, "' is not an IPv4 address (or [IPv6])"));
    }
    len = sizeof(sockaddr_in);
  }
  std::unique_ptr<MetricsHttpServer> s(new MetricsHttpServer(metrics, std::move(options)));
  s->listen_fd_ = socket(addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s->listen_fd_ < 0) return absl::UnavailableError(absl::StrCat("socket: ", strerror(errno)));
  int one = 1;
  setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
      listen(s->listen_fd_, 16) != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot listen on ", s->options_.listen, ": ", strerror(errno)));
  }
  sockaddr_storage bound{};
  socklen_t blen = sizeof(bound);
  getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&bound), &blen);
  s->port_ = ntohs(bound.ss_family == AF_INET6
                       ? reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port
                       : reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  if (pipe2(s->wake_fd_, O_CLOEXEC) != 0) {
    return absl::UnavailableError(absl::StrCat("pipe: ", strerror(errno)));
  }
  s->thread_ = std::thread([p = s.get()] { p->Serve(); });
  spdlog::info("metrics: serving /metrics and /healthz on {} (port {})", s->options_.listen,
               s->port_);
  return s;
}

MetricsHttpServer::~MetricsHttpServer() { Shutdown(); }

void MetricsHttpServer::Shutdown() {
  if (thread_.joinable()) {
    char c = 'x';
    (void)!write(wake_fd_[1], &c, 1);
    thread_.join();
  }
  for (int* fd : {&listen_fd_, &wake_fd_[0], &wake_fd_[1]}) {
    if (*fd >= 0) close(*fd);
    *fd = -1;
  }
}

void MetricsHttpServer::Serve() {
  while (true) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fd_[0], POLLIN, 0}};
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      spdlog::error("metrics: poll: {}", strerror(errno));
      return;
    }
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    HandleConnection(fd);
    close(fd);
  }
}

void MetricsHttpServer::HandleConnection(int fd) {
  timeval tv{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  std::string req;
  char buf[2048];
  // Only the request line and headers matter (GET has no body); cap what a client can send.
  while (req.find("\r\n\r\n") == std::string::npos && req.find("\n\n") == std::string::npos &&
         req.size() < 16384) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n <= 0) break;
    req.append(buf, static_cast<size_t>(n));
  }
  const std::string line = req.substr(0, req.find_first_of("\r\n"));
  std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
  int code = 200;
  std::string reason = "OK", type = "text/plain; charset=utf-8", body;
  const bool head = !parts.empty() && parts[0] == "HEAD";
  std::string path = parts.size() >= 2 ? parts[1] : "";
  path = path.substr(0, path.find('?'));
  if (parts.size() < 2) {
    code = 400, reason = "Bad Request", body = "bad request\n";
  } else if (parts[0] != "GET" && !head) {
    code = 405, reason = "Method Not Allowed", body = "only GET and HEAD\n";
  } else if (path == "/metrics") {
    type = "text/plain; version=0.0.4; charset=utf-8";
    body = metrics_.Render();
  } else if (path == "/healthz") {
    const bool ok = !options_.healthy || options_.healthy();
    if (!ok) code = 503, reason = "Service Unavailable";
    body = ok ? "ok\n" : "unhealthy: the database has not answered recently\n";
  } else {
    code = 404, reason = "Not Found", body = "not found (try /metrics or /healthz)\n";
  }
  std::string out = absl::StrCat("HTTP/1.1 ", code, " ", reason, "\r\nContent-Type: ", type,
                                 "\r\nContent-Length: ", body.size(),
                                 "\r\nConnection: close\r\n\r\n");
  if (!head) out += body;
  size_t sent = 0;
  while (sent < out.size()) {
    ssize_t n = send(fd, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
}

}  // namespace tuna::coordinator
