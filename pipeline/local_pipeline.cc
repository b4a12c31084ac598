#include "pipeline/local_pipeline.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <thread>

#include <signal.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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
#include "schema/store/lease_store.h"
#include "schema/store/result_store.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/hash/sha256.h"
#include "tuner_core/problem/driver_line.h"
#include "worker/coordinator_client.h"
#include "tuner_core/backend/disk_kernel_cache.h"
#include "worker/worker.h"

namespace tuna::pipeline {
namespace {

absl::Status Stage(const char* stage, const absl::Status& st) {
  if (st.ok()) return st;
  return absl::Status(st.code(), absl::StrCat(stage, ": ", st.message()));
}

// Unfinished jobs at or below which Wait polls every 100 ms instead of 500 ms.
constexpr int64_t kNearEndJobs = 16;

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

absl::Status StatusOf(const absl::Status& s) { return s; }
template <typename T>
absl::Status StatusOf(const absl::StatusOr<T>& s) {
  return s.status();
}

// Riding out database outages (see the header): one per run, used by one thread.
class DbPatience {
 public:
  DbPatience(const LocalPipelineOptions& o, std::function<void(const std::string&)> say)
      : options_(o), say_(std::move(say)) {}

  // After a failed step: true when it should be tried again (the backoff has been slept).
  bool Retry(const char* step, const absl::Status& st) {
    if (!absl::IsUnavailable(st) || Stopping()) return false;
    const absl::Time now = absl::Now();
    if (down_since_ == absl::InfinitePast()) {
      down_since_ = now;
      backoff_ = absl::Milliseconds(250);
      say_(fmt::format("waiting for database ({}: {}); up to {} s", step, std::string(st.message()),
                       absl::ToInt64Seconds(options_.db_wait)));
    } else if (now - down_since_ > options_.db_wait) {
      say_(fmt::format("database unreachable for {:.0f} s: giving up", DownSeconds()));
      gave_up_ = true;
      return false;
    }
    const absl::Time until = now + backoff_;
    while (absl::Now() < until && !Stopping()) absl::SleepFor(absl::Milliseconds(50));
    backoff_ = std::min(backoff_ * 2, absl::Seconds(5));
    return !Stopping();
  }
  void Ok() {
    if (down_since_ == absl::InfinitePast()) return;
    say_(fmt::format("database back after {:.1f} s", DownSeconds()));
    down_since_ = absl::InfinitePast();
  }
  bool Waiting() const { return down_since_ != absl::InfinitePast(); }
  bool GaveUp() const { return gave_up_; }
  double DownSeconds() const {
    return Waiting() ? absl::ToDoubleSeconds(absl::Now() - down_since_) : 0;
  }
  bool Stopping() const { return options_.stop_requested && options_.stop_requested(); }

 private:
  const LocalPipelineOptions& options_;
  std::function<void(const std::string&)> say_;
  absl::Time down_since_ = absl::InfinitePast();
  absl::Duration backoff_ = absl::Milliseconds(250);
  bool gave_up_ = false;
};

// `fn` until it succeeds or DbPatience says to give up; its last result.
template <typename Fn>
auto Patiently(DbPatience& p, const char* step, Fn fn) -> decltype(fn()) {
  for (;;) {
    auto r = fn();
    const absl::Status st = StatusOf(r);
    if (st.ok()) {
      p.Ok();
      return r;
    }
    if (!p.Retry(step, st)) return r;
  }
}

// The local workers' host names say which process and host they belong to
// ("local-<i>@<host>:<pid>"), so a resumed run can tell its dead predecessor's leases.
std::string HostName() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  return host;
}
std::string LocalWorkerHost(int i) {
  return absl::StrCat("local-", i, "@", HostName(), ":", getpid());
}
// True for the lease owner of a local worker of a `tune -f` process on this host that is gone.
bool DeadLocalOwner(const std::string& owner) {
  const size_t at = owner.find('@'), slash = owner.find('/');
  if (!absl::StartsWith(owner, "local-") || at == std::string::npos || slash == std::string::npos ||
      slash < at) {
    return false;
  }
  const std::string host_pid = owner.substr(at + 1, slash - at - 1);
  const size_t colon = host_pid.rfind(':');
  if (colon == std::string::npos || host_pid.substr(0, colon) != HostName()) return false;
  const long pid = std::strtol(host_pid.c_str() + colon + 1, nullptr, 10);
  return pid > 0 && pid != getpid() && kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

// "tuna tune -f <absolute path>": what a re-run finds its session by. A path too long for the
// column (191) keeps its end and a hash of the whole, so the label stays unique and stable.
std::string SessionLabel(const std::string& file) {
  constexpr size_t kMax = 191;
  std::error_code ec;
  const std::filesystem::path abs = std::filesystem::absolute(file, ec).lexically_normal();
  const std::string path = ec ? file : abs.string();
  std::string label = absl::StrCat("tuna tune -f ", path);
  if (label.size() <= kMax) return label;
  const std::string head = absl::StrCat("tuna tune -f [", hash::Sha256Hex(path).substr(0, 16), "] ...");
  return head + path.substr(path.size() - (kMax - head.size()));
}

// One `tune -f` run, stage by stage (RunLocalPipeline below).
class PipelineRun {
 public:
  PipelineRun(schema::Database& db, const LocalPipelineOptions& o)
      : db_(db),
        o_(o),
        registry_(o.registry ? *o.registry : solver::SolverRegistry::Builtin()),
        patience_(o, [this](const std::string& line) { Say(line); }) {}

  absl::StatusOr<LocalPipelineReport> Run();

 private:
  void Say(const std::string& line) {
    if (o_.progress) o_.progress(line); else std::fprintf(stderr, "%s\n", line.c_str());
  }
  double Elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  absl::Status Prepare();
  absl::Status OpenSession(schema::SessionRecord s);
  absl::Status LoadJobs(const std::string& tag);
  absl::Status StartLocal();
  absl::Status Wait();
  void ShowProgress(const Counts& c, std::chrono::steady_clock::time_point* last_line);
  void StopLocal();
  absl::Status Finish();
  absl::Status Best();

  schema::Database& db_;
  const LocalPipelineOptions& o_;
  const solver::SolverRegistry& registry_;
  DbPatience patience_;
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  LocalPipelineReport report_;
  std::string backend_;  // lower case
  std::unique_ptr<coordinator::Coordinator> coord_;
  std::unique_ptr<coordinator::CoordinatorServer> server_;
  std::vector<std::unique_ptr<coordinator::WorkerApi>> clients_;
  std::vector<std::unique_ptr<worker::Worker>> workers_;
  std::vector<std::thread> threads_;
  std::mutex results_mu_;
  std::vector<absl::Status> results_;  // guarded by results_mu_
  std::vector<bool> exited_;           // guarded by results_mu_
};

absl::Status PipelineRun::Prepare() {
  const std::string tag = o_.tag.empty()
      ? absl::StrCat("tune:", std::filesystem::path(o_.file).filename().string())
      : o_.tag;
  admin::ImportOptions io;
  io.tag = tag;
  io.progress = o_.stage_progress;
  auto imported = Patiently(patience_, "import", [&] { return admin::ImportDriverFile(db_, o_.file, io); });
  if (!imported.ok()) return Stage("import", imported.status());
  report_.configs = imported->unique_configs;
  Say(fmt::format("imported {} line(s): {} config(s) ({} new) under tag '{}'{}", imported->lines,
                  imported->unique_configs, imported->configs_new, tag,
                  imported->transposed > 0
                      ? fmt::format("; {} transposed problem(s) run as their convolutions", imported->transposed)
                      : ""));
  schema::SolverStore solvers(db_);
  auto synced = Patiently(patience_, "solvers update",
                          [&] { return solvers.Sync(admin::SolverRecords(registry_)); });
  if (!synced.ok()) return Stage("solvers update", synced.status());

  schema::SessionRecord s;
  s.label = SessionLabel(o_.file);
  s.tuner_version = o_.tuner_version;
  admin::DetectTargetOptions detect;
  detect.backend = o_.backend;
  detect.require_compiler = true;  // the local workers compile here
  if (auto st = admin::DetectSessionTarget(detect, &s); !st.ok()) return Stage("session init", st);
  if (auto st = OpenSession(s); !st.ok()) return Stage("session init", st);
  return LoadJobs(tag);
}

// Resumes the newest session of the same file and target (see the header), or creates one.
absl::Status PipelineRun::OpenSession(schema::SessionRecord s) {
  schema::SessionStore sessions(db_);
  auto id = Patiently(patience_, "session", [&]() -> absl::StatusOr<int64_t> {
    if (!o_.new_session) {
      auto found = sessions.FindLatest(s.label, s.arch, s.num_cu, s.backend);
      if (!found.ok()) return found.status();
      if (found->has_value()) {
        report_.resumed = true;
        return **found;
      }
    }
    return sessions.Create(s);
  });
  if (!id.ok()) return id.status();
  report_.session_id = *id;
  report_.arch = s.arch;
  report_.backend = s.backend;
  backend_ = absl::AsciiStrToLower(s.backend);
  Say(fmt::format("session {}{}: {} ({} CUs, {})", *id,
                  report_.resumed ? " resumed (same file and target; --new-session starts another)" : "",
                  s.arch, s.num_cu, s.backend));
  if (!report_.resumed) return absl::OkStatus();
  // The leases of a run that died on this host: back to ready, no retry counted.
  schema::LeaseStore leases(db_, {});
  auto owners = Patiently(patience_, "session", [&] { return leases.LeaseOwners(*id); });
  if (!owners.ok()) return owners.status();
  for (const std::string& owner : *owners) {
    if (!DeadLocalOwner(owner)) continue;
    auto n = Patiently(patience_, "session", [&] { return leases.ReleaseOwner(*id, owner); });
    if (!n.ok()) return n.status();
    Say(fmt::format("handed back {} lease(s) of {} (a run that ended without finishing)", *n, owner));
  }
  return absl::OkStatus();
}

absl::Status PipelineRun::LoadJobs(const std::string& tag) {
  admin::ApplicabilityOptions ao;
  ao.session_id = report_.session_id;
  ao.tag = tag;
  ao.progress = o_.stage_progress;
  auto app = Patiently(patience_, "applicability",
                       [&] { return admin::UpdateApplicability(db_, registry_, ao); });
  if (!app.ok()) return Stage("applicability", app.status());
  admin::LoadJobsOptions lo;
  lo.session_id = report_.session_id;
  lo.tag = tag;
  lo.fin_steps = o_.fin_steps;
  lo.only_applicable = true;
  lo.solvers = o_.solvers;
  lo.label = "tuna tune";
  lo.progress = o_.stage_progress;
  auto loaded = Patiently(patience_, "jobs load", [&] { return admin::LoadJobs(db_, registry_, lo); });
  if (!loaded.ok()) return Stage("jobs load", loaded.status());
  report_.jobs = loaded->added + loaded->existing;
  Say(fmt::format("{} applicable (config, solver) pair(s); {} job(s) loaded{}", app->applicable,
                  loaded->added,
                  loaded->existing ? fmt::format(", {} from the earlier run", loaded->existing) : ""));
  if (!app->unsolved.empty()) {
    constexpr size_t kShown = 3;
    Say(fmt::format("{} config(s) no solver applies to get no result{}:", app->unsolved.size(),
                    app->unsolved.size() > kShown ? fmt::format(" (first {}; all in the log)", kShown) : ""));
    for (size_t i = 0; i < std::min(kShown, app->unsolved.size()); ++i) Say("  " + app->unsolved[i]);
  }
  return absl::OkStatus();
}

absl::Status PipelineRun::StartLocal() {
  coordinator::CoordinatorOptions co;
  co.registry = &registry_;
  co.only_sessions = {report_.session_id};  // another run's jobs on the same database are not ours
  co.reuse_prior_results = o_.reuse_prior_results;
  co.lease_seconds = std::max<int>(30, static_cast<int>(absl::ToInt64Seconds(o_.eval_deadline)) + 30);
  co.reap_interval = absl::Seconds(2);
  co.empty_poll_interval = absl::Milliseconds(100);
  co.max_wait = absl::Seconds(2);
  auto coord = Patiently(patience_, "coordinator", [&] { return coordinator::Coordinator::Create(db_, co); });
  if (!coord.ok()) return Stage("coordinator", coord.status());
  coord_ = std::move(*coord);
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  auto server = coordinator::CoordinatorServer::Start(*coord_, so);
  if (!server.ok()) return Stage("coordinator", server.status());
  server_ = std::move(*server);
  const int nworkers = std::max(1, o_.workers);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  results_.assign(nworkers, absl::OkStatus());
  exited_.assign(nworkers, false);
  for (int i = 0; i < nworkers; ++i) {
    worker::GrpcClientOptions go;
    go.address = server_->address();
    clients_.push_back(worker::MakeGrpcClient(go));
    worker::WorkerOptions wo;
    wo.host = LocalWorkerHost(i);
    wo.backend = backend_;
    wo.compile_jobs = o_.compile_jobs > 0 ? o_.compile_jobs : std::max(1, cores / nworkers);
    wo.lease_batch = 3;  // eval jobs ahead per lane: their evaluators are prepared early
    wo.executors_per_device = o_.executors_per_device;
    wo.compile_nice = o_.compile_nice;
    wo.device_lock_dir = o_.device_lock_dir;
    wo.tuning = o_.tuning;
    wo.tuning.compile_threads = wo.compile_jobs;  // the executor's in-search builds (the device waits on them)
    wo.eval_deadline = o_.eval_deadline;
    wo.lease_wait = absl::Seconds(1);
    wo.stop_report_wait = absl::Seconds(10);
    wo.executor_argv = o_.executor_argv;
    wo.kernel_cache_dir = o_.kernel_cache_dir;
    wo.registry = &registry_;
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
  Say(fmt::format("coordinator on {}; {} local worker(s)", server_->address(), nworkers));
  return absl::OkStatus();
}

void PipelineRun::ShowProgress(const Counts& c, std::chrono::steady_clock::time_point* last_line) {
  const auto now = std::chrono::steady_clock::now();
  if (o_.job_progress) {
    o_.job_progress({c.total, c.done, c.failed, c.leased, c.unfinished - c.leased,
                     patience_.Waiting(), patience_.DownSeconds()});
  } else if (c.unfinished == 0 || now - *last_line >= std::chrono::seconds(5)) {
    *last_line = now;
    Say(fmt::format("[{:6.1f} s] jobs: {}/{} done, {} failed, {} running, {} waiting{}", Elapsed(),
                    c.done, c.total, c.failed, c.leased, c.unfinished - c.leased,
                    patience_.Waiting() ? ", waiting for database" : ""));
  }
}

// Until no job is unfinished, the time is up, a stop is requested, every worker has ended, or
// the database stayed away too long.
absl::Status PipelineRun::Wait() {
  const absl::Time give_up = absl::Now() + o_.max_duration;
  Counts c;
  auto last_line = std::chrono::steady_clock::now() - std::chrono::seconds(60);
  for (;;) {
    if (patience_.Stopping()) {
      Say("stop requested: stopping the workers and exporting what is done");
      report_.stopped = true;
      return absl::OkStatus();
    }
    auto counted = CountJobs(db_, report_.session_id);
    if (!counted.ok()) {
      ShowProgress(c, &last_line);
      if (patience_.Retry("progress", counted.status())) continue;
      return patience_.Stopping() ? absl::OkStatus() : counted.status();
    }
    patience_.Ok();
    c = *counted;
    ShowProgress(c, &last_line);
    if (c.unfinished == 0) return absl::OkStatus();
    {
      std::lock_guard<std::mutex> l(results_mu_);
      if (std::all_of(exited_.begin(), exited_.end(), [](bool e) { return e; })) {
        return absl::UnavailableError(absl::StrCat("every worker stopped: ", results_[0].message()));
      }
    }
    if (absl::Now() > give_up) {
      Say("time limit reached: stopping the workers and exporting what is done");
      return absl::OkStatus();
    }
    // Near the end (every unfinished job running, or only a few left) poll faster: each poll's
    // delay sits between the last job and the export (and, in `tune -f` of several files, idles
    // the devices: measured 0.4-0.5 s a file at 500 ms).
    const bool near_end = c.unfinished <= std::max<int64_t>(c.leased, kNearEndJobs);
    std::this_thread::sleep_for(std::chrono::milliseconds(near_end ? 100 : 500));
  }
}

void PipelineRun::StopLocal() {
  for (auto& w : workers_) w->RequestStop();
  // Their threads leave at their next look at the stop flag; a long-poll in progress would hold
  // them up to lease_wait (1 s here), between the last job and the export.
  if (coord_) coord_->EndPolls();
  for (auto& t : threads_) t.join();
  threads_.clear();
  workers_.clear();
  clients_.clear();
  if (server_) server_->Shutdown();
  server_.reset();
  coord_.reset();
}

absl::Status PipelineRun::Finish() {
  spdlog::info("session {}: workers stopped; counting jobs and exporting", report_.session_id);
  auto counted = Patiently(patience_, "summary", [&] { return CountJobs(db_, report_.session_id); });
  if (!counted.ok()) return Stage("summary", counted.status());
  report_.jobs = counted->total;
  report_.jobs_done = counted->done;
  report_.jobs_failed = counted->failed;
  report_.jobs_unfinished = counted->unfinished;
  admin::StatusOptions sto;
  sto.session_id = report_.session_id;
  if (auto st = admin::CollectStatus(db_, sto); st.ok()) {
    for (const auto& e : st->errors) report_.errors[e.reason.empty() ? e.state : e.reason] += e.jobs;
  }
  // The export (under the lock taken at the start).
  exporter::ExportOptions eo;
  eo.lock_output_dir = false;
  eo.session_id = report_.session_id;
  eo.output_dir = o_.output_dir;
  eo.algorithm_for = exporter::RegistryAlgorithmResolver(registry_);
  eo.progress = o_.stage_progress;
  auto exported = Patiently(patience_, "export", [&] { return exporter::ExportSession(db_, eo); });
  if (!exported.ok()) return Stage("export", exported.status());
  for (const exporter::FileReport* f : {&exported->perf, &exported->find, &exported->kernel}) {
    if (f->written) report_.files.push_back(f->path);
  }
  return Best();
}

// The best solver per config (verified find results).
absl::Status PipelineRun::Best() {
  std::map<int64_t, ConfigBest> best;
  auto scanned = Patiently(patience_, "summary", [&] {
    best.clear();
    return schema::ScanExportableFindResults(
        db_, report_.session_id, 10000, [&](const std::vector<schema::FindResultRow>& page) {
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
  });
  if (!scanned.ok()) return Stage("summary", scanned);
  std::vector<int64_t> ids;
  for (const auto& [id, b] : best) ids.push_back(id);
  auto configs = schema::ReadConfigs(db_, ids);
  for (auto& [id, b] : best) {
    if (configs.ok() && configs->problems.count(id)) b.driver = ToDriverLine(configs->problems.at(id));
    report_.best.push_back(b);
  }
  return absl::OkStatus();
}

absl::StatusOr<LocalPipelineReport> PipelineRun::Run() {
  // The output directory: one writer for the whole run, so a second `tune -f -o DIR` fails now
  // instead of replacing this run's files at the end (exporter/output_dir.h).
  auto out_lock = exporter::OutputDirLock::Acquire(o_.output_dir);
  if (!out_lock.ok()) return Stage("output dir", out_lock.status());
  if (!o_.kernel_cache_dir.empty()) {  // an unusable one fails the run before it writes anything
    auto disk = backend::DiskKernelCache::Open(o_.kernel_cache_dir);
    if (!disk.ok()) return disk.status();  // "kernel cache: DIR ..."
  }
  if (auto st = Prepare(); !st.ok()) return st;
  if (auto st = StartLocal(); !st.ok()) {
    StopLocal();
    return st;
  }
  absl::Status waited = Wait();
  StopLocal();
  if (!waited.ok()) {
    if (!patience_.GaveUp()) return Stage("run", waited);
    return absl::UnavailableError(fmt::format(
        "run: the database was unreachable for more than {} s ({}); nothing exported. What is "
        "done is in the database: run the same command again to resume and export",
        absl::ToInt64Seconds(o_.db_wait), std::string(waited.message())));
  }
  if (auto st = Finish(); !st.ok()) {
    if (!absl::IsUnavailable(st)) return st;
    return absl::UnavailableError(absl::StrCat(
        st.message(), "; nothing exported. What is done is in the database: run the same command "
        "again when it is back, to resume and export"));
  }
  report_.seconds = Elapsed();
  return report_;
}

}  // namespace

absl::StatusOr<LocalPipelineReport> RunLocalPipeline(schema::Database& db,
                                                     const LocalPipelineOptions& options) {
  PipelineRun run(db, options);
  return run.Run();
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
