// `tuna coordinator --listen ADDR [--token-file F] [--tls-cert F --tls-key F] [--metrics ADDR]
// [--lease-seconds N] [--max-retries N] [--restart-grace N]`: serves jobs to workers over gRPC
// (coordinator/server.h) until SIGTERM or SIGINT, then shuts down gracefully: waiting long-polls
// are answered, queued reports are committed (later ones are refused: the worker sends them to
// the next coordinator), the metrics server stops last. After start (and after a database
// outage) no lease is reaped for --restart-grace (docs/RELIABILITY.md).
// The database comes from the global --db / --data-dir like every admin command.
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/command.h"
#include "cli/db_access.h"
#include "coordinator/coordinator.h"
#include "coordinator/metrics.h"
#include "coordinator/server.h"
#include "spdlog/spdlog.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct Flags {
  std::string listen = "127.0.0.1:50051";
  std::string token_file, eval_token_file;
  std::string tls_cert, tls_key;
  bool insecure_plaintext = false;
  bool retune = false;
  bool reflection = false;
  std::string metrics;  // empty: no metrics server
  int lease_seconds = 60;
  int max_retries = 3;
  int restart_grace = 0;  // seconds; 0: one lease
  int quarantine_kills = 3;
  int max_host_faults = 3;
  int host_bench_seconds = 300;
  int dispatcher_threads = 2;
  int sample_seconds = 15;
};

int Fail(const std::string& what) {
  std::cerr << "tuna coordinator: " << what << "\n";
  return 1;
}

absl::StatusOr<std::string> ReadPem(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  if (ss.str().find("-----BEGIN") == std::string::npos) {
    return absl::InvalidArgumentError(path + " is not a PEM file");
  }
  return ss.str();
}

// /metrics and /healthz on `listen`; healthy while the queue sampler reaches the database.
absl::StatusOr<std::unique_ptr<coordinator::MetricsHttpServer>> StartMetricsHttp(
    const std::string& listen, coordinator::Metrics& metrics, coordinator::QueueSampler& sampler) {
  coordinator::MetricsHttpOptions mo;
  mo.listen = listen;
  coordinator::QueueSampler* s = &sampler;
  mo.healthy = [s] { return s->Healthy(); };
  return coordinator::MetricsHttpServer::Start(metrics, mo);
}

// The server's options from the flags; refuses bad setups before the database is touched
// (fast, and no secret is read in vain).
absl::StatusOr<coordinator::ServerOptions> ServerOptionsFromFlags(const Flags& f) {
  coordinator::ServerOptions so;
  so.listen = f.listen;
  // Read once here to refuse bad files early; the server re-reads them (token rotation).
  for (const std::string* file : {&f.token_file, &f.eval_token_file}) {
    if (file->empty()) continue;
    if (auto token = coordinator::ReadTokenFile(*file); !token.ok()) return token.status();
  }
  so.token_file = f.token_file;
  so.eval_token_file = f.eval_token_file;
  so.insecure_plaintext = f.insecure_plaintext;
  so.reflection = f.reflection;
  if (!coordinator::IsLoopbackAddress(f.listen) && f.token_file.empty() &&
      f.eval_token_file.empty()) {
    return absl::InvalidArgumentError("refusing to listen on non-loopback address " + f.listen +
                                      " without a token (--token-file)");
  }
  if (f.tls_cert.empty() != f.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  if (!coordinator::IsLoopbackAddress(f.listen) && f.tls_cert.empty() && !f.insecure_plaintext) {
    return absl::InvalidArgumentError("refusing to listen on non-loopback address " + f.listen +
                                      " without TLS (--tls-cert/--tls-key, or "
                                      "--insecure-plaintext on a network you trust)");
  }
  if (f.restart_grace > 0 && f.restart_grace < f.lease_seconds) {
    return absl::InvalidArgumentError("--restart-grace must be at least --lease-seconds (workers "
                                      "need a lease's time to renew)");
  }
  if (!f.tls_cert.empty()) {
    auto cert = ReadPem(f.tls_cert);
    if (!cert.ok()) return cert.status();
    auto key = ReadPem(f.tls_key);
    if (!key.ok()) return key.status();
    so.tls_cert_pem = *cert;
    so.tls_key_pem = *key;
  }
  return so;
}

int Run(const GlobalOptions& global, const Flags& f) {
  auto server_options = ServerOptionsFromFlags(f);
  if (!server_options.ok()) return Fail(std::string(server_options.status().message()));
  const coordinator::ServerOptions& so = *server_options;

  // Signals go to sigwait below, not to a handler: block them before any thread starts so that
  // every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  auto db = OpenCommandDatabase(global, f.dispatcher_threads + 4);
  if (!db.ok()) return Fail(std::string(db.status().message()));

  auto metrics = coordinator::Metrics::ForCoordinator();
  coordinator::CoordinatorOptions co;
  co.lease_seconds = f.lease_seconds;
  co.max_retries = f.max_retries;
  if (f.restart_grace > 0) co.restart_grace = absl::Seconds(f.restart_grace);
  co.quarantine_kills = f.quarantine_kills;
  co.max_host_faults = f.max_host_faults;
  co.host_bench = absl::Seconds(f.host_bench_seconds);
  co.dispatcher_threads = f.dispatcher_threads;
  co.reuse_prior_results = !f.retune;
  co.registry = &solver::SolverRegistry::Builtin();
  co.metrics = metrics.get();
  auto coord = coordinator::Coordinator::Create(**db, co);
  if (!coord.ok()) return Fail(std::string(coord.status().message()));

  coordinator::QueueSamplerOptions qo;
  qo.interval = absl::Seconds(f.sample_seconds);
  qo.alive_window = std::max(absl::Seconds(2 * f.lease_seconds),
                             co.max_wait + absl::Seconds(2 * f.sample_seconds));
  auto sampler = coordinator::QueueSampler::Start(**db, *metrics, qo);

  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  if (!server.ok()) return Fail(std::string(server.status().message()));

  std::unique_ptr<coordinator::MetricsHttpServer> http;
  if (!f.metrics.empty()) {
    auto h = StartMetricsHttp(f.metrics, *metrics, *sampler);
    if (!h.ok()) {
      (*server)->Shutdown();
      return Fail(std::string(h.status().message()));
    }
    http = std::move(*h);
  }
  // One machine-readable line on stdout (scripts and tests read the ports chosen for port 0).
  std::cout << "coordinator ready: grpc " << (*server)->address();
  if (http) std::cout << " metrics port " << http->port();
  std::cout << std::endl;

  int sig = 0;
  while (sigwait(&stop_signals, &sig) != 0) {
  }
  spdlog::info("coordinator: {} received, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  (*server)->Shutdown();  // stops gRPC, wakes long-polls, joins the coordinator's threads
  server->reset();
  coord->reset();
  sampler->Stop();
  if (http) http->Shutdown();
  spdlog::info("coordinator: stopped");
  return 0;
}

}  // namespace

void AddCoordinatorCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand(
      "coordinator",
      "serve jobs to workers over gRPC (leasing, reports, reaper; metrics and health over HTTP)");
  auto f = std::make_shared<Flags>();
  cmd->add_option("--listen", f->listen,
                  "gRPC address host:port (port 0: a free one); a non-loopback address needs "
                  "--token-file")
      ->capture_default_str();
  cmd->add_option("--token-file", f->token_file,
                  "file holding the compile role's token (compile-capable workers; first line; "
                  "mode 600); re-read every second: rewriting it rotates the token");
  cmd->add_option("--eval-token-file", f->eval_token_file,
                  "file holding the eval role's token (eval-only workers: no compile leases, no "
                  "PutKernels); re-read every second");
  cmd->add_option("--tls-cert", f->tls_cert, "PEM certificate chain (with --tls-key: TLS)");
  cmd->add_option("--tls-key", f->tls_key, "PEM private key");
  cmd->add_flag("--insecure-plaintext", f->insecure_plaintext,
                "allow a non-loopback --listen without TLS (tokens travel unencrypted)");
  cmd->add_flag("--retune", f->retune,
                "search every perf job, even where an earlier session on the same target tuned the "
                "same config and solver (by default its verified params are reused: re-timed, not "
                "searched)");
  cmd->add_flag("--reflection", f->reflection,
                "serve gRPC server reflection (unauthenticated: lists the API)");
  cmd->add_option("--metrics", f->metrics,
                  "serve GET /metrics (Prometheus) and GET /healthz on host:port, e.g. "
                  "127.0.0.1:9464");
  cmd->add_option("--lease-seconds", f->lease_seconds, "lease length (workers renew every 1/3)")
      ->check(CLI::Range(5, 86400))
      ->capture_default_str();
  cmd->add_option("--max-retries", f->max_retries,
                  "failures or expired leases before a job is 'failed'")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--restart-grace", f->restart_grace,
                  "seconds after start and after a database outage in which no lease is reaped, "
                  "so workers reconnect and renew (0: one lease; at least --lease-seconds)")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  cmd->add_option("--quarantine-kills", f->quarantine_kills,
                  "executor kills of one config and solver before its jobs are failed")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--max-host-faults", f->max_host_faults,
                  "infrastructure failures in a row (device cannot be opened, executor cannot "
                  "start) after which a host gets no eval leases for --host-bench-seconds; its "
                  "jobs are handed back without a retry charged")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--host-bench-seconds", f->host_bench_seconds,
                  "how long a host with too many infrastructure failures gets no eval leases")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  cmd->add_option("--dispatcher-threads", f->dispatcher_threads,
                  "concurrent claim transactions (about the database's core count)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--sample-seconds", f->sample_seconds,
                  "how often the queue depth is sampled from the database for /metrics")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  const GlobalOptions* global = ctx.global;
  CommandFn* selected = ctx.selected;
  cmd->callback([=] { *selected = [=] { return Run(*global, *f); }; });
}

}  // namespace tuna::cli
