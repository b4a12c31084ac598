#include "pipeline/local_pipeline.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "admin/applicability.h"
#include "admin/import_configs.h"
#include "admin/job_loader.h"
#include "admin/session_target.h"
#include "admin/solver_records.h"
#include "admin/status.h"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "exporter/exporter.h"
#include "exporter/output_dir.h"
#include "exporter/registry_algorithms.h"
#include "fmt/format.h"
#include "jobs/job_state.h"
#include "schema/store/result_store.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/problem/driver_line.h"
#include "worker/coordinator_client.h"
#include "worker/worker.h"

namespace tuna::pipeline {
namespace {

absl::Status Stage(const char* stage, const absl::Status& st) {
  if (st.ok()) return st;
  return absl::Status(st.code(), absl::StrCat(stage, ": ", st.message()));
}

struct Counts {
  int64_t total = 0, done = 0, failed = 0, unfinished = 0, leased = 0;
};

absl::StatusOr<Counts> CountJobs(schema::Database& db, int64_t session_id) {
  auto rows = schema::CountSessionJobs(db, session_id);
  if (!rows.ok()) return rows.status();
  Counts c;
  for (const auto& r : *rows) {
    c.total += r.count;
    const std::optional<jobs::JobState> state = jobs::ParseJobState(r.state);
    if (state == jobs::JobState::kEvaluated) c.done += r.count;
    else if (state && jobs::IsUnfinished(*state)) c.unfinished += r.count;
    else c.failed += r.count;
    if (state && jobs::IsLeased(*state)) c.leased += r.count;
  }
  return c;
}

using SayFn = std::function<void(const std::string&)>;

// 1. Import FILE under the tag, 2. the solver table from the registry.
absl::Status ImportAndSyncSolvers(schema::Database& db, const solver::SolverRegistry& registry,
                                  const LocalPipelineOptions& options, const std::string& tag,
                                  const SayFn& say, LocalPipelineReport* report) {
  admin::ImportOptions io;
  io.tag = tag;
  io.progress = options.stage_progress;
  auto imported = admin::ImportDriverFile(db, options.file, io);
  if (!imported.ok()) return Stage("import", imported.status());
  report->configs = imported->unique_configs;
  say(fmt::format("imported {} line(s): {} config(s) ({} new) under tag '{}'", imported->lines,
                  imported->unique_configs, imported->configs_new, tag));
  schema::SolverStore solvers(db);
  if (auto st = solvers.Sync(admin::SolverRecords(registry)); !st.ok()) {
    return Stage("solvers update", st.status());
  }
  return absl::OkStatus();
}

// 3. A session on this host's device (the chosen backend's, or the first usable one).
absl::StatusOr<schema::SessionRecord> InitSession(schema::Database& db,
                                                  const LocalPipelineOptions& options,
                                                  const SayFn& say, LocalPipelineReport* report) {
  schema::SessionRecord s;
  s.label = absl::StrCat("tuna tune -f ", options.file).substr(0, 250);
  s.tuner_version = options.tuner_version;
  admin::DetectTargetOptions detect;
  detect.backend = options.backend;
  detect.require_compiler = true;  // the local workers compile here
  if (auto st = admin::DetectSessionTarget(detect, &s); !st.ok()) return Stage("session init", st);
  auto session_id = schema::SessionStore(db).Create(s);
  if (!session_id.ok()) return Stage("session init", session_id.status());
  s.id = *session_id;
  report->session_id = s.id;
  report->arch = s.arch;
  report->backend = s.backend;
  say(fmt::format("session {}: {} ({} CUs, {})", s.id, s.arch, s.num_cu, s.backend));
  return s;
}

// 4. Applicability, 5. jobs.
absl::Status LoadSessionJobs(schema::Database& db, const solver::SolverRegistry& registry,
                             const LocalPipelineOptions& options, int64_t session_id,
                             const std::string& tag, const SayFn& say,
                             LocalPipelineReport* report) {
  admin::ApplicabilityOptions ao;
  ao.session_id = session_id;
  ao.tag = tag;
  ao.progress = options.stage_progress;
  auto app = admin::UpdateApplicability(db, registry, ao);
  if (!app.ok()) return Stage("applicability", app.status());
  admin::LoadJobsOptions lo;
  lo.session_id = session_id;
  lo.tag = tag;
  lo.fin_steps = options.fin_steps;
  lo.only_applicable = true;
  lo.solvers = options.solvers;
  lo.label = "tuna tune";
  lo.progress = options.stage_progress;
  auto loaded = admin::LoadJobs(db, registry, lo);
  if (!loaded.ok()) return Stage("jobs load", loaded.status());
  report->jobs = loaded->added + loaded->existing;
  say(fmt::format("{} applicable (config, solver) pair(s); {} job(s) loaded", app->applicable,
                  loaded->added));
  return absl::OkStatus();
}

// 6. A coordinator on a loopback port and `workers` local workers, each on its own thread.
// Stop() stops the workers, then the server and the coordinator.
class LocalCluster {
 public:
  absl::Status Start(schema::Database& db, const solver::SolverRegistry& registry,
                     const LocalPipelineOptions& options, const schema::SessionRecord& s) {
    coordinator::CoordinatorOptions co;
    co.registry = &registry;
    co.only_sessions = {s.id};  // another run's jobs on the same database are not ours
    co.lease_seconds = std::max<int>(
        30, static_cast<int>(absl::ToInt64Seconds(options.eval_deadline)) + 30);
    co.reap_interval = absl::Seconds(2);
    co.empty_poll_interval = absl::Milliseconds(100);
    co.max_wait = absl::Seconds(2);
    auto coord = coordinator::Coordinator::Create(db, co);
    if (!coord.ok()) return Stage("coordinator", coord.status());
    coordinator_ = *std::move(coord);
    coordinator::ServerOptions so;
    so.listen = "127.0.0.1:0";
    auto server = coordinator::CoordinatorServer::Start(*coordinator_, so);
    if (!server.ok()) return Stage("coordinator", server.status());
    server_ = *std::move(server);
    StartWorkers(registry, options, s);
    return absl::OkStatus();
  }

  std::string address() const { return server_->address(); }
  int size() const { return static_cast<int>(workers_.size()); }

  // Unavailable when every worker has stopped (with the first one's status), else OK.
  absl::Status CheckWorkers() {
    std::lock_guard<std::mutex> l(results_mu_);
    for (bool e : exited_) {
      if (!e) return absl::OkStatus();
    }
    return absl::UnavailableError(absl::StrCat("every worker stopped: ", results_[0].message()));
  }

  void Stop() {
    for (auto& w : workers_) w->RequestStop();
    for (auto& t : threads_) t.join();
    threads_.clear();
    workers_.clear();
    clients_.clear();
    if (server_) server_->Shutdown();
    server_.reset();
    coordinator_.reset();
  }

 private:
  void StartWorkers(const solver::SolverRegistry& registry, const LocalPipelineOptions& options,
                    const schema::SessionRecord& s) {
    const int nworkers = std::max(1, options.workers);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    results_.assign(nworkers, absl::OkStatus());
    exited_.assign(nworkers, false);
    for (int i = 0; i < nworkers; ++i) {
      worker::GrpcClientOptions go;
      go.address = server_->address();
      clients_.push_back(worker::MakeGrpcClient(go));
      worker::WorkerOptions wo;
      wo.host = absl::StrCat("local-", i);
      wo.backend = absl::AsciiStrToLower(s.backend);
      wo.compile_jobs =
          options.compile_jobs > 0 ? options.compile_jobs : std::max(1, cores / nworkers);
      wo.lease_batch = 3;  // eval jobs ahead per device: their evaluators are prepared early
      wo.tuning = options.tuning;
      wo.eval_deadline = options.eval_deadline;
      wo.lease_wait = absl::Seconds(1);
      wo.executor_argv = options.executor_argv;
      wo.registry = &registry;
      workers_.push_back(std::make_unique<worker::Worker>(*clients_.back(), wo));
    }
    for (int i = 0; i < nworkers; ++i) {
      threads_.emplace_back([this, i] {
        absl::Status st = workers_[i]->Run();
        if (!st.ok()) spdlog::error("local worker {}: {}", i, st.ToString());
        std::lock_guard<std::mutex> l(results_mu_);
        results_[i] = st;
        exited_[i] = true;
      });
    }
  }

  std::unique_ptr<coordinator::Coordinator> coordinator_;
  std::unique_ptr<coordinator::CoordinatorServer> server_;
  std::vector<std::unique_ptr<coordinator::WorkerApi>> clients_;
  std::vector<std::unique_ptr<worker::Worker>> workers_;
  std::vector<std::thread> threads_;
  std::mutex results_mu_;
  std::vector<absl::Status> results_;
  std::vector<bool> exited_;
};

// 7. Polls the session's jobs twice a second until none is unfinished, every worker stopped
// (Unavailable) or the time limit passed; reports progress on the way.
absl::Status WaitForJobs(schema::Database& db, const LocalPipelineOptions& options,
                         int64_t session_id, LocalCluster& cluster, const SayFn& say,
                         std::chrono::steady_clock::time_point t0) {
  const absl::Time give_up = absl::Now() + options.max_duration;
  auto last_line = std::chrono::steady_clock::now() - std::chrono::seconds(60);
  for (;;) {
    auto counted = CountJobs(db, session_id);
    if (!counted.ok()) return counted.status();
    const Counts& c = *counted;
    const auto now = std::chrono::steady_clock::now();
    if (options.job_progress) {
      options.job_progress({c.total, c.done, c.failed, c.leased, c.unfinished - c.leased});
    } else if (c.unfinished == 0 || now - last_line >= std::chrono::seconds(5)) {
      last_line = now;
      const double el = std::chrono::duration<double>(now - t0).count();
      say(fmt::format("[{:6.1f} s] jobs: {}/{} done, {} failed, {} running, {} waiting", el, c.done,
                      c.total, c.failed, c.leased, c.unfinished - c.leased));
    }
    if (c.unfinished == 0) return absl::OkStatus();
    if (auto st = cluster.CheckWorkers(); !st.ok()) return st;
    if (absl::Now() > give_up) {
      say("time limit reached: stopping the workers and exporting what is done");
      return absl::OkStatus();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

// The session's job counts and failure reasons, after the workers stopped.
void CountOutcome(schema::Database& db, int64_t session_id, LocalPipelineReport* report) {
  if (auto counted = CountJobs(db, session_id); counted.ok()) {
    report->jobs = counted->total;
    report->jobs_done = counted->done;
    report->jobs_failed = counted->failed;
    report->jobs_unfinished = counted->unfinished;
  }
  admin::StatusOptions sto;
  sto.session_id = session_id;
  if (auto st = admin::CollectStatus(db, sto); st.ok()) {
    for (const auto& e : st->errors) report->errors[e.reason.empty() ? e.state : e.reason] += e.jobs;
  }
}

// 8. Export, under the output directory's lock the caller took at the start.
absl::Status ExportFiles(schema::Database& db, const solver::SolverRegistry& registry,
                         const LocalPipelineOptions& options, int64_t session_id,
                         LocalPipelineReport* report) {
  exporter::ExportOptions eo;
  eo.lock_output_dir = false;
  eo.session_id = session_id;
  eo.output_dir = options.output_dir;
  eo.algorithm_for = exporter::RegistryAlgorithmResolver(registry);
  eo.progress = options.stage_progress;
  auto exported = exporter::ExportSession(db, eo);
  if (!exported.ok()) return Stage("export", exported.status());
  for (const exporter::FileReport* f : {&exported->perf, &exported->find, &exported->kernel}) {
    if (f->written) report->files.push_back(f->path);
  }
  return absl::OkStatus();
}

// 9. The fastest verified find result per config.
absl::Status BestPerConfig(schema::Database& db, int64_t session_id, LocalPipelineReport* report) {
  std::map<int64_t, ConfigBest> best;
  auto scanned = schema::ScanExportableFindResults(
      db, session_id, 10000, [&](const std::vector<schema::FindResultRow>& page) {
        for (const auto& r : page) {
          ConfigBest& b = best[r.config_id];
          b.config_id = r.config_id;
          if (b.solver.empty() || r.kernel_time < b.time_ms) {
            b.solver = r.solver;
            b.time_ms = r.kernel_time;
          }
        }
        return absl::OkStatus();
      });
  if (!scanned.ok()) return Stage("summary", scanned);
  std::vector<int64_t> ids;
  for (const auto& [id, b] : best) ids.push_back(id);
  auto configs = schema::ReadConfigs(db, ids);
  for (auto& [id, b] : best) {
    if (configs.ok() && configs->problems.count(id)) b.driver = ToDriverLine(configs->problems.at(id));
    report->best.push_back(b);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LocalPipelineReport> RunLocalPipeline(schema::Database& db,
                                                     const LocalPipelineOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const solver::SolverRegistry& registry =
      options.registry ? *options.registry : solver::SolverRegistry::Builtin();
  const SayFn say = [&](const std::string& line) {
    if (options.progress) options.progress(line); else std::fprintf(stderr, "%s\n", line.c_str());
  };
  LocalPipelineReport report;
  const std::string tag = options.tag.empty()
                              ? absl::StrCat("tune:", std::filesystem::path(options.file).filename().string())
                              : options.tag;

  // 0. The output directory: one writer for the whole run, so a second `tune -f -o DIR` fails
  // now instead of replacing this run's files at the end (exporter/output_dir.h).
  auto out_lock = exporter::OutputDirLock::Acquire(options.output_dir);
  if (!out_lock.ok()) return Stage("output dir", out_lock.status());
  if (auto st = ImportAndSyncSolvers(db, registry, options, tag, say, &report); !st.ok()) return st;
  auto session = InitSession(db, options, say, &report);
  if (!session.ok()) return session.status();
  if (auto st = LoadSessionJobs(db, registry, options, session->id, tag, say, &report); !st.ok()) {
    return st;
  }
  LocalCluster cluster;
  absl::Status run = cluster.Start(db, registry, options, *session);
  if (run.ok()) {
    say(fmt::format("coordinator on {}; {} local worker(s)", cluster.address(), cluster.size()));
    run = WaitForJobs(db, options, session->id, cluster, say, t0);
    if (!run.ok()) run = Stage("run", run);
  }
  cluster.Stop();
  if (!run.ok()) return run;
  CountOutcome(db, session->id, &report);
  if (auto st = ExportFiles(db, registry, options, session->id, &report); !st.ok()) return st;
  if (auto st = BestPerConfig(db, session->id, &report); !st.ok()) return st;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

std::string FormatPipelineSummary(const LocalPipelineReport& r) {
  std::string out = fmt::format(
      "session {} ({} {}): {} config(s), {} job(s): {} done, {} failed{} in {:.1f} s\n", r.session_id,
      r.arch, r.backend, r.configs, r.jobs, r.jobs_done, r.jobs_failed,
      r.jobs_unfinished ? fmt::format(", {} unfinished", r.jobs_unfinished) : std::string(), r.seconds);
  for (const auto& [reason, n] : r.errors) out += fmt::format("  failed x{}: {}\n", n, reason);
  out += "best solver per config:\n";
  for (const ConfigBest& b : r.best) {
    out += fmt::format("  {:>10.4f} ms  {:<32} {}\n", b.time_ms, b.solver, b.driver);
  }
  if (r.best.empty()) out += "  (no verified result)\n";
  out += "files written:\n";
  for (const std::string& f : r.files) out += "  " + f + "\n";
  if (r.files.empty()) out += "  (none)\n";
  return out;
}

}  // namespace tuna::pipeline
