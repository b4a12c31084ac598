// `tuna worker --coordinator ADDR [--token-file F] [--backend B] [--devices all|0,1]
//  [--steps compile,eval] [--compile-jobs N] [--lease-batch N] [--executors-per-device N]
//  [--device-lock-dir DIR] [--health ADDR] [--kernel-cache DIR] ...`: the
// supervisor of worker/worker.h, with an optional gRPC health server (worker/health_server.h)
// that follows Worker::Healthy. `tuna worker --executor ...` (hidden) is the per-device
// executor child the supervisor starts (worker/executor.h); it is not meant to be run by hand.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/search_flags.h"
#include "cli/version.h"
#include "coordinator/server.h"
#include "spdlog/spdlog.h"
#include "tuner_core/solver/registry.h"
#include "worker/coordinator_client.h"
#include "worker/executor.h"
#include "worker/health_server.h"
#include "worker/worker.h"

namespace tuna::cli {
namespace {

struct WorkerFlags {
  std::string coordinator;
  std::string token_file;
  std::string tls_ca;
  bool insecure_plaintext = false;
  std::string backend;
  std::string devices = "all";
  std::string steps = "compile,eval";
  int compile_jobs = 1;
  int lease_batch = 1;
  int executors_per_device = 0;  // 0: 2 on GPU backends, 1 on cpu
  int compile_nice = 10;
  std::string device_lock_dir;   // empty: worker::DefaultDeviceLockDir()
  SearchFlags search;
  int repetitions = 10;
  int launch_timeout_s = 30;
  int eval_timeout_s = 1800;
  double device_backoff_max_s = 60;
  std::string host;
  std::string health;  // host:port of the gRPC health server; empty: none
  std::string kernel_cache;  // the disk kernel cache directory; empty: none
  // Hidden executor mode.
  bool executor = false;
  int executor_fd = -1;
  std::string device_lock;  // the device lock file (worker/device_lock.h); empty: none
};

int Fail(const std::string& what) {
  std::cerr << "tuna worker: " << what << "\n";
  return 2;
}

absl::StatusOr<worker::JobTuning> Tuning(const WorkerFlags& f) {
  worker::JobTuning t;
  auto chosen = ResolveSearch(f.search);
  if (!chosen.ok()) return chosen.status();
  t.strategy = chosen->strategy;
  t.budget = chosen->budget;
  t.patience = chosen->patience;
  t.whole_space = chosen->whole_space;
  t.time_limit_s = chosen->time_limit_s;
  t.outclassed = chosen->outclassed;
  t.specialize = chosen->specialize;
  t.seed = chosen->seed;
  t.heuristics_model = chosen->heuristics_model;
  t.predictor = chosen->predictor;
  // The executor compiles what a model-guided search proposes while it runs, and the device
  // waits for those builds: they get the same threads as the compile pool.
  t.compile_threads = std::max(1, f.compile_jobs);
  t.repetitions = std::max(1, f.repetitions);
  t.launch_timeout = absl::Seconds(std::max(1, f.launch_timeout_s));
  return t;
}

int RunExecutorMode(const WorkerFlags& f) {
  auto t = Tuning(f);
  if (!t.ok()) return Fail(std::string(t.status().message()));
  if (f.executor_fd < 0) return Fail("--executor needs --executor-fd");
  int device = 0;
  try {
    device = std::stoi(f.devices);
  } catch (const std::exception&) {
    return Fail("--executor needs one --devices index");
  }
  return worker::RunExecutor(f.executor_fd, f.backend.empty() ? "cpu" : f.backend, device,
                             solver::SolverRegistry::Builtin(), *t, f.kernel_cache,
                             {f.device_lock, std::max(1, f.executors_per_device)});
}

// The worker's options from the flags (steps, devices, tuning, limits).
absl::StatusOr<worker::WorkerOptions> WorkerOptionsFromFlags(const GlobalOptions& global,
                                                             const WorkerFlags& f) {
  worker::WorkerOptions o;
  auto t = Tuning(f);
  if (!t.ok()) return t.status();
  o.tuning = *t;
  o.backend = f.backend;
  o.host = f.host;
  o.version = VersionLine().substr(0, 64);
  o.compile_jobs = std::max(1, f.compile_jobs);
  o.lease_batch = std::clamp(f.lease_batch, 1, 64);
  o.executors_per_device = f.executors_per_device;
  o.compile_nice = f.compile_nice;
  o.device_lock_dir = f.device_lock_dir;
  o.eval_deadline = absl::Seconds(std::max(1, f.eval_timeout_s));
  o.device_backoff_max = absl::Seconds(f.device_backoff_max_s);
  o.device_backoff_first = std::min(o.device_backoff_first, o.device_backoff_max);
  o.executor_argv = ExecutorArgv(global, global.log_file);
  o.kernel_cache_dir = f.kernel_cache;
  o.compile = o.eval = false;
  for (absl::string_view s : absl::StrSplit(f.steps, ',', absl::SkipEmpty())) {
    if (s == "compile") o.compile = true;
    else if (s == "eval") o.eval = true;
    else return absl::InvalidArgumentError("--steps takes compile and/or eval");
  }
  if (!o.compile && !o.eval) return absl::InvalidArgumentError("--steps is empty");
  if (f.devices != "all") {
    for (absl::string_view s : absl::StrSplit(f.devices, ',', absl::SkipEmpty())) {
      int i = 0;
      if (!absl::SimpleAtoi(s, &i) || i < 0) {
        return absl::InvalidArgumentError("--devices takes all or indices like 0,1");
      }
      o.devices.push_back(i);
    }
  }
  return o;
}

// The gRPC client's options: the coordinator's address, token and TLS root.
absl::StatusOr<worker::GrpcClientOptions> ClientOptionsFromFlags(const WorkerFlags& f) {
  worker::GrpcClientOptions c;
  c.address = f.coordinator;
  if (!coordinator::IsLoopbackAddress(f.coordinator) && f.tls_ca.empty() && !f.insecure_plaintext) {
    return absl::InvalidArgumentError(
        "refusing to send the token in plaintext to " + f.coordinator +
        " (give --tls-ca, or --insecure-plaintext on a network you trust)");
  }
  if (!f.token_file.empty()) {
    auto token = coordinator::ReadTokenFile(f.token_file);
    if (!token.ok()) return token.status();
    c.token = *token;
  }
  if (!f.tls_ca.empty()) {
    std::ifstream in(f.tls_ca);
    if (!in) return absl::NotFoundError("cannot read --tls-ca " + f.tls_ca);
    c.tls_root_pem.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return c;
}

int RunWorker(const GlobalOptions& global, const WorkerFlags& f) {
  if (f.executor) return RunExecutorMode(f);
  if (f.coordinator.empty()) return Fail("--coordinator ADDR is required");
  // SIGTERM / SIGINT: stop leasing, finish or release, exit 0. Blocked before any thread exists
  // (gRPC starts its own), so every thread inherits the mask and one waiting thread takes them;
  // no work happens in a signal handler.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto options = WorkerOptionsFromFlags(global, f);
  if (!options.ok()) return Fail(std::string(options.status().message()));
  worker::WorkerOptions& o = *options;
  auto client_options = ClientOptionsFromFlags(f);
  if (!client_options.ok()) return Fail(std::string(client_options.status().message()));
  auto client = worker::MakeGrpcClient(*client_options);

  // Started before the Worker (so it outlives it: the Worker's last word is NOT_SERVING when it
  // stops) and after the signal mask (its threads must not take SIGTERM).
  std::unique_ptr<worker::HealthServer> health;
  if (!f.health.empty()) {
    auto h = worker::HealthServer::Start(f.health);
    if (!h.ok()) {
      std::cerr << "tuna worker: --health: " << h.status().message() << "\n";
      return 1;
    }
    health = *std::move(h);
    if (!coordinator::IsLoopbackAddress(f.health)) {
      spdlog::info("worker: health service on {} is reachable off this host, without a token "
                   "(it answers SERVING / NOT_SERVING only)", f.health);
    }
    o.on_health_change = [server = health.get()](bool healthy) { server->SetServing(healthy); };
  }

  worker::Worker w(*client, o);
  std::thread([&w, set] {
    int sig = 0;
    sigwait(&set, &sig);
    spdlog::info("worker: signal {}: stopping", sig);
    w.RequestStop();
  }).detach();
  absl::Status st = w.Run();
  if (!st.ok()) {
    std::cerr << "tuna worker: " << st.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

std::vector<std::string> ExecutorArgv(const GlobalOptions& global, const std::string& log_file) {
  std::vector<std::string> argv = {"/proc/self/exe", "--log-level", global.log_level,
                                   "--log-format", global.log_format};
  if (!log_file.empty()) {
    argv.push_back("--log-file");
    argv.push_back(log_file);
  }
  argv.push_back("worker");
  argv.push_back("--executor");
  return argv;
}

void AddWorkerCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("worker", "lease and run jobs from a coordinator");
  auto f = std::make_shared<WorkerFlags>();
  cmd->add_option("--coordinator", f->coordinator, "coordinator address host:port");
  cmd->add_option("--token-file", f->token_file, "file holding the coordinator's token (mode 600)");
  cmd->add_option("--tls-ca", f->tls_ca, "CA certificate (PEM) of a TLS coordinator");
  cmd->add_flag("--insecure-plaintext", f->insecure_plaintext,
                "talk to a non-loopback coordinator without TLS (the token travels unencrypted)");
  cmd->add_option("--backend", f->backend, "cpu | cuda | hip (default: the best with a device)")
      ->check(CLI::IsMember({"cpu", "cuda", "hip"}));
  cmd->add_option("--devices", f->devices, "devices to evaluate on: all or 0,1,...");
  cmd->add_option("--steps", f->steps, "compile,eval (default both)");
  cmd->add_option("--compile-jobs", f->compile_jobs, "compile threads");
  cmd->add_option("--lease-batch", f->lease_batch,
                  "jobs per lease call / eval jobs prefetched per executor");
  cmd->add_option("--compile-nice", f->compile_nice,
                  "run the compile threads this much below normal priority, so the executors' "
                  "in-search compiles (which the device waits for) go first on busy cores")
      ->check(CLI::Range(0, 19))
      ->capture_default_str();
  cmd->add_option("--executors-per-device", f->executors_per_device,
                  "executor processes per device, each running its own eval jobs; only one at a "
                  "time runs device work (a per-device lock), so one times while another "
                  "compiles (0: 2 on cuda/hip, 1 on cpu)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  cmd->add_option("--device-lock-dir", f->device_lock_dir,
                  "host-local directory of the per-device lock files (default: "
                  "$XDG_RUNTIME_DIR/tuna, else /tmp/tuna-<uid>)");
  AddSearchFlags(cmd, &f->search, "perf job",
                 "model | exhaustive | random (model: compile workers build its seeded first "
                 "sample; eval compiles what the model proposes later)");
  cmd->add_option("--repetitions", f->repetitions, "timed runs per candidate");
  cmd->add_option("--launch-timeout", f->launch_timeout_s, "seconds per kernel launch");
  cmd->add_option("--eval-timeout", f->eval_timeout_s,
                  "seconds per eval job; then the executor is killed and the job failed");
  cmd->add_option("--device-backoff-max", f->device_backoff_max_s,
                  "longest wait (seconds) before a device that cannot be opened or keeps losing "
                  "its executor is tried again (1 s, doubling per failure in a row)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--host", f->host, "host name to register (default: this host's)");
  cmd->add_option("--health", f->health,
                  "serve the gRPC health service on host:port (port 0: any; logged): SERVING "
                  "while registered and the coordinator answers");
  cmd->add_option("--kernel-cache", f->kernel_cache,
                  "keep this host's kernel builds in DIR (created mode 700; must be private to "
                  "this user) and reuse them across runs; default: none");
  cmd->add_flag("--executor", f->executor)->group("");  // hidden: the executor child
  cmd->add_option("--executor-fd", f->executor_fd)->group("");
  cmd->add_option("--device-lock", f->device_lock)->group("");
  cmd->callback([ctx, f] { *ctx.selected = [ctx, f] { return RunWorker(*ctx.global, *f); }; });
}

}  // namespace tuna::cli
