#include "pipeline/local_pipeline.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "admin/applicability.h"
#include "admin/import_configs.h"
#include "admin/job_loader.h"
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
#include "tuner_core/backend/registry.h"
#include "tuner_core/problem/driver_line.h"
#include "worker/coordinator_client.h"
#include "worker/worker.h"

namespace tuna::pipeline {
namespace {

absl::Status Stage(const char* stage, const absl::Status& st) {
  if (st.ok()) return st;
  return absl::Status(st.code(), absl::StrCat(stage, ": ", st.message()));
}

// The session's target: the named backend's (or the first usable backend's) device 0.
absl::Status DetectTarget(const std::string& backend, schema::SessionRecord* s) {
  std::string why;
  for (const backend::DetectedBackend& d : backend::DetectBackends(backend::DetectOptions::FromEnv())) {
    if (!backend.empty() && backend != d.backend->Name()) continue;
    auto devices = d.backend->ListDevices();
    if (!d.usable || !devices.ok() || devices->empty() || !d.backend->CompilerStatus().ok()) {
      absl::StrAppend(&why, "\n  ", d.backend->Name(), ": ",
                      !devices.ok() ? std::string(devices.status().message())
                      : devices->empty() ? std::string("no device")
                                         : std::string(d.backend->CompilerStatus().message()));
      continue;
    }
    s->arch = (*devices)[0].arch;
    s->num_cu = (*devices)[0].compute_units;
    s->backend = absl::AsciiStrToUpper(d.backend->Name());
    s->compiler_versions = d.backend->CompilerVersion();
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrCat("no usable device", backend.empty() ? "" : " for ", backend, ":", why));
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

}  // namespace

absl::StatusOr<LocalPipelineReport> RunLocalPipeline(schema::Database& db,
                                                     const LocalPipelineOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const solver::SolverRegistry& registry =
      options.registry ? *options.registry : solver::SolverRegistry::Builtin();
  auto say = [&](const std::string& line) {
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

  // 1. Import.
  admin::ImportOptions io;
  io.tag = tag;
  io.progress = options.stage_progress;
  auto imported = admin::ImportDriverFile(db, options.file, io);
  if (!imported.ok()) return Stage("import", imported.status());
  report.configs = imported->unique_configs;
  say(fmt::format("imported {} line(s): {} config(s) ({} new) under tag '{}'", imported->lines,
                  imported->unique_configs, imported->configs_new, tag));

  // 2. Solvers.
  schema::SolverStore solvers(db);
  if (auto st = solvers.Sync(admin::SolverRecords(registry)); !st.ok()) return Stage("solvers update", st.status());

  // 3. Session.
  schema::SessionRecord s;
  s.label = absl::StrCat("tuna tune -f ", options.file).substr(0, 250);
  s.tuner_version = options.tuner_version;
  if (auto st = DetectTarget(options.backend, &s); !st.ok()) return Stage("session init", st);
  auto session_id = schema::SessionStore(db).Create(s);
  if (!session_id.ok()) return Stage("session init", session_id.status());
  report.session_id = *session_id;
  report.arch = s.arch;
  report.backend = s.backend;
  say(fmt::format("session {}: {} ({} CUs, {})", *session_id, s.arch, s.num_cu, s.backend));

  // 4. Applicability, 5. jobs.
  admin::ApplicabilityOptions ao;
  ao.session_id = *session_id;
  ao.tag = tag;
  ao.progress = options.stage_progress;
  auto app = admin::UpdateApplicability(db, registry, ao);
  if (!app.ok()) return Stage("applicability", app.status());
  admin::LoadJobsOptions lo;
  lo.session_id = *session_id;
  lo.tag = tag;
  lo.fin_steps = options.fin_steps;
  lo.only_applicable = true;
  lo.solvers = options.solvers;
  lo.label = "tuna tune";
  lo.progress = options.stage_progress;
  auto loaded = admin::LoadJobs(db, registry, lo);
  if (!loaded.ok()) return Stage("jobs load", loaded.status());
  report.jobs = loaded->added + loaded->existing;
  say(fmt::format("{} applicable (config, solver) pair(s); {} job(s) loaded", app->applicable, loaded->added));

  // 6. Coordinator on loopback + local workers.
  coordinator::CoordinatorOptions co;
  co.registry = &registry;
  co.only_sessions = {*session_id};  // another run's jobs on the same database are not ours
  co.lease_seconds = std::max<int>(30, static_cast<int>(absl::ToInt64Seconds(options.eval_deadline)) + 30);
  co.reap_interval = absl::Seconds(2);
  co.empty_poll_interval = absl::Milliseconds(100);
  co.max_wait = absl::Seconds(2);
  auto coord = coordinator::Coordinator::Create(db, co);
  if (!coord.ok()) return Stage("coordinator", coord.status());
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto server = coordinator::CoordinatorServer::Start(**coord, so);
  if (!server.ok()) return Stage("coordinator", server.status());
  const std::string address = (*server)->address();
  const int nworkers = std::max(1, options.workers);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::unique_ptr<coordinator::WorkerApi>> clients;
  std::vector<std::unique_ptr<worker::Worker>> workers;
  std::vector<std::thread> threads;
  std::mutex results_mu;
  std::vector<absl::Status> results(nworkers);
  std::vector<bool> exited(nworkers, false);
  for (int i = 0; i < nworkers; ++i) {
    worker::GrpcClientOptions go;
    go.address = address;
    clients.push_back(worker::MakeGrpcClient(go));
    worker::WorkerOptions wo;
    wo.host = absl::StrCat("local-", i);
    wo.backend = absl::AsciiStrToLower(s.backend);
    wo.compile_jobs = options.compile_jobs > 0 ? options.compile_jobs : std::max(1, cores / nworkers);
    wo.lease_batch = 3;  // eval jobs ahead per device: their evaluators are prepared early
    wo.tuning = options.tuning;
    wo.eval_deadline = options.eval_deadline;
    wo.lease_wait = absl::Seconds(1);
    wo.executor_argv = options.executor_argv;
    wo.registry = &registry;
    workers.push_back(std::make_unique<worker::Worker>(*clients.back(), wo));
  }
  for (int i = 0; i < nworkers; ++i) {
    threads.emplace_back([&, i] {
      absl::Status st = workers[i]->Run();
      if (!st.ok()) spdlog::error("local worker {}: {}", i, st.ToString());
      std::lock_guard<std::mutex> l(results_mu);
      results[i] = st;
      exited[i] = true;
    });
  }
  say(fmt::format("coordinator on {}; {} local worker(s)", address, nworkers));

  // 7. Wait.
  const absl::Time give_up = absl::Now() + options.max_duration;
  Counts c;
  absl::Status wait_status;
  auto last_line = std::chrono::steady_clock::now() - std::chrono::seconds(60);
  for (;;) {
    auto counted = CountJobs(db, *session_id);
    if (!counted.ok()) {
      wait_status = counted.status();
      break;
    }
    c = *counted;
    const auto now = std::chrono::steady_clock::now();
    if (options.job_progress) {
      options.job_progress({c.total, c.done, c.failed, c.leased, c.unfinished - c.leased});
    } else if (c.unfinished == 0 || now - last_line >= std::chrono::seconds(5)) {
      last_line = now;
      const double el = std::chrono::duration<double>(now - t0).count();
      say(fmt::format("[{:6.1f} s] jobs: {}/{} done, {} failed, {} running, {} waiting", el, c.done,
                      c.total, c.failed, c.leased, c.unfinished - c.leased));
    }
    if (c.unfinished == 0) break;
    {
      std::lock_guard<std::mutex> l(results_mu);
      bool all_exited = true;
      for (int i = 0; i < nworkers; ++i) all_exited = all_exited && exited[i];
      if (all_exited) {
        wait_status = absl::UnavailableError(absl::StrCat("every worker stopped: ", results[0].message()));
        break;
      }
    }
    if (absl::Now() > give_up) {
      say("time limit reached: stopping the workers and exporting what is done");
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  for (auto& w : workers) w->RequestStop();
  for (auto& t : threads) t.join();
  workers.clear();
  clients.clear();
  (*server)->Shutdown();
  server->reset();
  coord->reset();
  if (!wait_status.ok()) return Stage("run", wait_status);
  if (auto counted = CountJobs(db, *session_id); counted.ok()) c = *counted;
  report.jobs = c.total;
  report.jobs_done = c.done;
  report.jobs_failed = c.failed;
  report.jobs_unfinished = c.unfinished;
  admin::StatusOptions sto;
  sto.session_id = *session_id;
  if (auto st = admin::CollectStatus(db, sto); st.ok()) {
    for (const auto& e : st->errors) report.errors[e.reason.empty() ? e.state : e.reason] += e.jobs;
  }

  // 8. Export (under the lock taken at the start).
  exporter::ExportOptions eo;
  eo.lock_output_dir = false;
  eo.session_id = *session_id;
  eo.output_dir = options.output_dir;
  eo.algorithm_for = exporter::RegistryAlgorithmResolver(registry);
  eo.progress = options.stage_progress;
  auto exported = exporter::ExportSession(db, eo);
  if (!exported.ok()) return Stage("export", exported.status());
  for (const exporter::FileReport* f : {&exported->perf, &exported->find, &exported->kernel}) {
    if (f->written) report.files.push_back(f->path);
  }

  // 9. Best solver per config (verified find results).
  std::map<int64_t, ConfigBest> best;
  auto scanned = schema::ScanExportableFindResults(
      db, *session_id, 10000, [&](const std::vector<schema::FindResultRow>& page) {
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
    report.best.push_back(b);
  }
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
