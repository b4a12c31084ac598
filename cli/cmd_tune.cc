// `tuna tune`: with -f FILE, the one-machine pipeline (pipeline/local_pipeline.h: the database
// of --db or the embedded one, an in-process coordinator, local workers, export to
// --output-dir). With --driver, --no-db or --dry-run: tune problems in this process without a
// database (tuner_core/search/session.h).
// -f rides out database outages of up to --db-wait seconds, resumes the session of an earlier run
// of the same file and target (unless --new-session), and on SIGINT / SIGTERM stops the workers
// and exports what is done (a second signal ends it at once); docs/RELIABILITY.md.
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "cli/search_flags.h"
#include "cli/terminal_text.h"
#include "cli/db_access.h"
#include "cli/logging.h"
#include "cli/progress.h"
#include "cli/version.h"
#include "pipeline/local_pipeline.h"
#include "schema/embedded/mariadb_server.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/transpose.h"
#include "tuner_core/search/report.h"
#include "tuner_core/search/session.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct TuneArgs {
  std::string driver;
  std::string file;
  std::string backend = "cpu";
  bool backend_set = false;  // the pipeline picks the best backend unless told
  int device = 0;
  SearchFlags search;
  std::string json;
  bool dry_run = false;
  std::string target;
  std::vector<std::string> solvers;
  int repetitions = 10;
  int threads = 0;
  // The pipeline (-f without --no-db):
  bool no_db = false;
  std::string output_dir = "./tuna-out";
  int workers = 1;
  int executors_per_device = 0;  // -f: 0 = 2 on GPU backends, 1 on cpu
  int compile_nice = 10;         // -f: the compile pool's priority below normal
  std::string steps = "perf,find";
  std::string tag;
  int eval_timeout_s = 1800;
  int max_minutes = 0;
  int db_wait_s = 600;  // pipeline::LocalPipelineOptions::db_wait
  bool new_session = false;
  bool retune = false;
  std::string kernel_cache;  // -f: empty = <data dir>/kernel-cache
  bool no_kernel_cache = false;
};

// Usage errors print one line and exit 2.
int UsageError(const std::string& message) {
  std::fprintf(stderr, "tuna tune: %s\n", EscapeControlBytes(message).c_str());
  return 2;
}

// False (after a line on stderr) when a --solvers name is not a registered solver.
bool KnownSolvers(const solver::SolverRegistry& registry, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (registry.ByName(name) == nullptr) {
      std::fprintf(stderr, "tuna tune: unknown solver '%s' (see `tuna solvers`)\n", name.c_str());
      return false;
    }
  }
  return true;
}

// --steps perf,find as the job loader's fin steps; InvalidArgument for another word or none.
absl::StatusOr<std::vector<std::string>> FinSteps(const std::string& steps) {
  std::vector<std::string> fin_steps;
  for (absl::string_view s : absl::StrSplit(steps, ',', absl::SkipEmpty())) {
    if (s == "perf") {
      fin_steps.push_back("miopen_perf_compile");
      fin_steps.push_back("miopen_perf_eval");
    } else if (s == "find") {
      fin_steps.push_back("miopen_find_compile");
      fin_steps.push_back("miopen_find_eval");
    } else {
      return absl::InvalidArgumentError("--steps takes perf and/or find");
    }
  }
  if (fin_steps.empty()) return absl::InvalidArgumentError("--steps is empty");
  return fin_steps;
}

// The pipeline's workers and executors log a few lines per job: they go to a file (stderr
// keeps the progress, warnings and errors), and the executor children append to it too.
// --log-file when given, else <output dir>/tune.log (logging is redirected there).
absl::StatusOr<std::string> PipelineLogFile(const GlobalOptions& global, const TuneArgs& a) {
  if (!global.log_file.empty()) return global.log_file;
  std::error_code ec;
  std::filesystem::create_directories(a.output_dir, ec);
  std::string log_file = (std::filesystem::path(a.output_dir) / "tune.log").string();
  if (auto st = SetUpLogging(global.log_level, global.log_format, log_file); !st.ok()) return st;
  return log_file;
}

// The disk kernel cache of -f: --kernel-cache, else beside the embedded database's files in the
// data dir (--data-dir or its default; also with --db, so one host's runs share it); none with
// --no-kernel-cache.
std::string KernelCacheDir(const GlobalOptions& global, const TuneArgs& a) {
  if (a.no_kernel_cache) return "";
  if (!a.kernel_cache.empty()) return a.kernel_cache;
  const std::string data = global.data_dir.empty() ? schema::DefaultDataDir() : global.data_dir;
  return (std::filesystem::path(data) / schema::kKernelCacheDirName).string();
}

// SIGINT / SIGTERM while the pipeline runs: the first asks it to stop (and export what is done),
// a second one ends the process with the signal's default action. Signals are blocked in every
// thread (and the executor children inherit that), and one thread takes them with sigtimedwait.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this] { Loop(); });
  }
  ~StopSignals() {
    done_ = true;
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  bool requested() const { return requested_; }

 private:
  void Loop() {
    const timespec tick{0, 200 * 1000 * 1000};
    while (!done_) {
      const int sig = sigtimedwait(&set_, nullptr, &tick);
      if (sig <= 0) continue;
      if (requested_.exchange(true)) {  // the second one: quit now
        signal(sig, SIG_DFL);
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
        raise(sig);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
      }
      std::fprintf(stderr, "\ntuna tune: %s: stopping the workers and exporting what is done "
                   "(again to quit at once)\n", sig == SIGINT ? "interrupted" : "terminated");
    }
  }
  sigset_t set_, old_;
  std::atomic<bool> requested_{false}, done_{false};
  std::thread thread_;
};

int RunPipeline(const GlobalOptions& global, const TuneArgs& a) {
  pipeline::LocalPipelineOptions o;
  o.file = a.file;
  o.tag = a.tag;
  o.backend = a.backend_set ? a.backend : "";
  o.solvers = a.solvers;
  o.workers = std::max(1, a.workers);
  o.executors_per_device = a.executors_per_device;
  o.compile_nice = a.compile_nice;
  o.compile_jobs = a.threads;
  o.output_dir = a.output_dir;
  o.eval_deadline = absl::Seconds(std::max(1, a.eval_timeout_s));
  if (a.max_minutes > 0) o.max_duration = absl::Minutes(a.max_minutes);
  o.db_wait = absl::Seconds(std::max(0, a.db_wait_s));
  o.new_session = a.new_session;
  o.reuse_prior_results = !a.retune;
  o.kernel_cache_dir = KernelCacheDir(global, a);
  o.tuner_version = VersionLine();
  auto chosen = ResolveSearch(a.search);
  if (!chosen.ok()) return UsageError(std::string(chosen.status().message()));
  o.tuning.strategy = chosen->strategy;
  o.tuning.budget = chosen->budget;
  o.tuning.patience = chosen->patience;
  o.tuning.whole_space = chosen->whole_space;
  o.tuning.time_limit_s = chosen->time_limit_s;
  o.tuning.outclassed = chosen->outclassed;
  o.tuning.specialize = chosen->specialize;
  o.tuning.seed = chosen->seed;
  o.tuning.heuristics_model = chosen->heuristics_model;
  o.tuning.predictor = chosen->predictor;
  o.tuning.repetitions = std::max(1, a.repetitions);
  auto fin_steps = FinSteps(a.steps);
  if (!fin_steps.ok()) return UsageError(std::string(fin_steps.status().message()));
  o.fin_steps = *fin_steps;
  if (!KnownSolvers(solver::SolverRegistry::Builtin(), a.solvers)) return 2;
  auto log = PipelineLogFile(global, a);
  if (!log.ok()) {
    std::fprintf(stderr, "tuna tune: %s\n", EscapeControlBytes(log.status().message()).c_str());
    return 1;
  }
  const std::string& log_file = *log;
  o.executor_argv = ExecutorArgv(global, log_file);
  std::fprintf(stderr, "tuna tune: detailed log in %s\n", log_file.c_str());
  StopSignals stop;  // before any thread starts, so that every thread has the signals blocked
  o.stop_requested = [&stop] { return stop.requested(); };
  Progress progress("tune", StderrProgressOptions(global.progress));
  auto db = OpenCommandDatabase(global);
  if (!db.ok()) {
    progress.Clear();
    std::fprintf(stderr, "tuna tune: database: %s\n(use --no-db to tune without a database)\n",
                 EscapeControlBytes(db.status().message()).c_str());
    return 1;
  }
  o.progress = [&progress](const std::string& line) { progress.Note(line); };
  o.stage_progress = progress.StageCallback();
  o.job_progress = [&progress](const pipeline::JobProgress& j) {
    progress.Update("jobs", j.done + j.failed, j.total,
                    j.waiting_for_database
                        ? fmt::format("waiting for database ({:.0f} s)", j.database_down_seconds)
                        : fmt::format("{} evaluated, {} failed, {} running", j.done, j.failed,
                                      j.running));
  };
  auto r = pipeline::RunLocalPipeline(**db, o);
  if (!r.ok()) {
    progress.Clear();
    std::fprintf(stderr, "tuna tune: %s\n", EscapeControlBytes(r.status().message()).c_str());
    return 1;
  }
  progress.Finish();
  std::fputs(pipeline::FormatPipelineSummary(*r).c_str(), stdout);
  return r->jobs_done > 0 && r->jobs_unfinished == 0 ? 0 : 1;
}

// The problems of --driver LINE or -f FILE; nullopt after printing why (exit 2).
std::optional<std::vector<Problem>> ReadProblems(const TuneArgs& a) {
  if (a.driver.empty() == a.file.empty()) {
    UsageError("give exactly one of --driver LINE or -f FILE");
    return std::nullopt;
  }
  if (!a.driver.empty()) {
    auto p = ParseDriverLine(a.driver);
    if (!p.ok()) {
      UsageError(std::string(p.status().message()));
      return std::nullopt;
    }
    // A transposed problem as MIOpen runs it.
    absl::StatusOr<std::vector<Problem>> conv = AsConvolutions(*std::move(p));
    if (!conv.ok()) {
      UsageError(std::string(conv.status().message()));
      return std::nullopt;
    }
    return *std::move(conv);
  }
  auto f = ParseDriverFile(a.file);
  if (!f.ok()) {
    UsageError(std::string(f.status().message()));
    return std::nullopt;
  }
  ConvertTransposed(*f);
  for (const auto& e : f->errors) {
    std::fprintf(stderr, "tuna tune: %s:%d: %s\n", a.file.c_str(), e.line_number, e.reason.c_str());
  }
  if (!f->errors.empty()) return std::nullopt;
  std::vector<Problem> problems;
  for (const auto& line : f->lines) {
    problems.insert(problems.end(), line.problems.begin(), line.problems.end());
  }
  return problems;
}

int RunTune(const GlobalOptions& global, const TuneArgs& a) {
  std::optional<std::vector<Problem>> read = ReadProblems(a);
  if (!read) return 2;
  const std::vector<Problem>& problems = *read;
  if (a.dry_run && a.target.empty()) {
    return UsageError("--dry-run needs --target ARCH (e.g. gfx90a, sm_90)");
  }
  auto chosen = ResolveSearch(a.search);
  if (!chosen.ok()) return UsageError(std::string(chosen.status().message()));
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  if (!KnownSolvers(registry, a.solvers)) return 2;

  search::SessionOptions s;
  s.backend = a.backend;
  s.device = a.device;
  s.target_arch = a.target;
  s.tune.dry_run = a.dry_run;
  s.tune.strategy = chosen->strategy;
  s.tune.budget = chosen->budget;
  s.tune.patience = chosen->patience;
  s.tune.whole_space = chosen->whole_space;
  s.tune.time_limit_s = chosen->time_limit_s;
  s.tune.specialize = chosen->specialize;
  s.tune.seed = chosen->seed;
  s.tune.predictor = chosen->predictor;
  s.tune.solvers = a.solvers;
  s.tune.compiler.threads = a.threads;
  s.tune.evaluator.repetitions = std::max(1, a.repetitions);
  s.tune.evaluator.seed = chosen->seed;

  // One stage per problem, counting its candidates over all solvers.
  Progress progress("tune", StderrProgressOptions(global.progress));
  std::atomic<size_t> current{0};
  s.tune.progress = [&](const search::TuneProgress& p) {
    std::string detail = p.solver;
    if (p.best_ms > 0) detail += fmt::format(", best {:.4f} ms ({})", p.best_ms, p.best_solver);
    if (p.default_ms > 0 && p.solver_best_ms > 0) {
      detail += fmt::format(", {:.2f}x vs default", p.default_ms / p.solver_best_ms);
    }
    progress.Update(fmt::format("[{}/{}] candidates", current.load() + 1, problems.size()),
                    static_cast<int64_t>(p.done), static_cast<int64_t>(p.total), detail);
  };
  int failed = 0;
  auto results = search::TuneProblems(problems, s, registry, [&](size_t i, const search::TuneResult& r) {
    progress.Finish();
    std::fputs(search::FormatTuneResult(r).c_str(), stdout);
    std::fflush(stdout);
    if (!r.error.empty() || (!r.dry_run && r.best < 0)) ++failed;
    current = i + 1;
  });
  if (!results.ok()) {
    progress.Clear();
    std::fprintf(stderr, "tuna tune: %s\n", results.status().ToString().c_str());
    return 1;
  }
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    out << search::TuneResultsJson(*results);
    if (!out) {
      std::fprintf(stderr, "tuna tune: cannot write %s\n", a.json.c_str());
      return 1;
    }
  }
  std::fputs(fmt::format("{} problem(s), {} failed, in {}\n", problems.size(), failed,
                         FormatDuration(progress.Seconds()))
                 .c_str(),
             stdout);
  return failed == 0 ? 0 : 1;
}

}  // namespace

void AddTuneCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("tune", "tune problems on this machine (-f: the full pipeline with a database and export)");
  auto args = std::make_shared<TuneArgs>();
  cmd->add_option("--driver", args->driver, "one MIOpenDriver command line");
  cmd->add_option("-f,--file", args->file, "file of MIOpenDriver lines");
  auto* backend = cmd->add_option("--backend", args->backend, "cpu | cuda | hip (with -f: default the best with a device)")
      ->check(CLI::IsMember({"cpu", "cuda", "hip"}));
  cmd->add_option("--device", args->device, "device index");
  AddSearchFlags(cmd, &args->search, "tunable solver", "model | exhaustive | random");
  cmd->add_option("--json", args->json, "write results as JSON to this file");
  cmd->add_flag("--dry-run", args->dry_run, "compile every candidate for --target; no device");
  cmd->add_option("--target", args->target, "arch for --dry-run (gfx90a, sm_90, cpu-avx2)");
  cmd->add_option("-s,--solvers", args->solvers, "only these solvers (comma-separated)")->delimiter(',');
  cmd->add_option("--repetitions", args->repetitions, "timed runs per candidate");
  cmd->add_option("--compile-threads", args->threads, "compile threads (0 = all cores)");
  cmd->add_flag("--no-db", args->no_db, "-f without a database: tune in this process, no export");
  cmd->add_option("-o,--output-dir", args->output_dir, "where -f writes the db files (default ./tuna-out)");
  cmd->add_option("--workers", args->workers, "local workers for -f");
  cmd->add_option("--executors-per-device", args->executors_per_device,
                  "-f: executor processes per device; one times while another compiles (a "
                  "per-device lock keeps their timings apart; 0: 2 on cuda/hip, 1 on cpu)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  cmd->add_option("--compile-nice", args->compile_nice,
                  "-f: run the compile pool this much below normal priority, so the executors' "
                  "in-search compiles (which the device waits for) go first on busy cores")
      ->check(CLI::Range(0, 19))
      ->capture_default_str();
  cmd->add_option("--steps", args->steps, "job kinds for -f: perf,find");
  cmd->add_option("--tag", args->tag, "import tag for -f (default tune:<file name>)");
  cmd->add_option("--eval-timeout", args->eval_timeout_s, "seconds per eval job before its executor is killed");
  cmd->add_option("--max-minutes", args->max_minutes, "stop -f after this long and export what is done");
  cmd->add_option("--db-wait", args->db_wait_s,
                  "seconds -f waits for an unreachable database before it gives up")
      ->check(CLI::Range(0, 86400))
      ->capture_default_str();
  cmd->add_flag("--new-session", args->new_session,
                "-f: start a new session instead of resuming the last one of the same file and "
                "target");
  cmd->add_flag("--retune", args->retune,
                "-f: search every perf job again, even where an earlier session on this target "
                "already tuned the same config and solver (by default its verified params are "
                "reused: timed and verified, not searched)");
  auto* kernel_cache = cmd->add_option(
      "--kernel-cache", args->kernel_cache,
      "-f: keep kernel builds in DIR and reuse them in later runs (default DATA_DIR/kernel-cache; "
      "created mode 700, must be private to this user)");
  cmd->add_flag("--no-kernel-cache", args->no_kernel_cache,
                "-f: neither read nor write the disk kernel cache")
      ->excludes(kernel_cache);
  const GlobalOptions* global = ctx.global;
  cmd->callback([ctx, args, backend, global] {
    args->backend_set = backend->count() > 0;
    *ctx.selected = [args, global] {
      if (!args->file.empty() && args->driver.empty() && !args->no_db && !args->dry_run) {
        return RunPipeline(*global, *args);
      }
      return RunTune(*global, *args);
    };
  });
}

}  // namespace tuna::cli
