// The one-machine end to end behind `tuna tune -f FILE` (DESIGN §2 "Embedded default"):
//   import FILE under a tag → solvers update → session init on the best backend with a device
//   (or the chosen one) → applicability → jobs load (perf and/or find) → an in-process
//   coordinator on a loopback gRPC port and `workers` local workers (compile threads +
//   `executors_per_device` executor children per device) → wait until no job is unfinished,
//   printing a progress line → export the perf, find and kernel db files → a summary (configs,
//   jobs done/failed, the best solver per config, files written).
// The same code paths as the distributed deployment (admin/, coordinator/, worker/, exporter/),
// so the one-machine run exercises them all.
//
// Resuming (docs/RELIABILITY.md): a run continues the newest session of the same file (its
// absolute path, in the session label) and target (arch, CUs, backend) unless `new_session`:
// the jobs already done stay done, the missing ones are added, leases still held by the local
// workers of a run that died on this host are handed back (no retry counted), and the export
// covers the whole session.
//
// Database outages: every database step (the stages, the progress polls, the export) is retried
// while the database is unreachable, with a bounded backoff (250 ms .. 5 s), for up to `db_wait`
// in a row; the local coordinator and workers ride it out the same way (coordinator.h, worker.h).
// Going away and coming back are said once each (progress line and log); job_progress carries
// `waiting_for_database`. Past `db_wait` the run stops with an error that says so.
//
// Stopping: when `stop_requested` returns true (SIGINT / SIGTERM in `tuna tune`), or at
// max_duration, the workers stop (jobs in progress finish and are reported; a report the
// database cannot take within 10 s is given up, its job runs again next time) and what is done
// is exported; the report counts the unfinished jobs.
//
// Ownership: the caller opens the database (cli/db_access: embedded server started if needed,
// migrations applied) and keeps it open for the call. Threads: blocks the caller; starts and
// joins its own. Errors: the first failing stage's status, prefixed with the stage name; jobs
// that fail are not errors (they are counted in the report).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "admin/stage_progress.h"
#include "schema/store/database.h"
#include "tuner_core/solver/registry.h"
#include "worker/job_runner.h"

namespace tuna::pipeline {

// Job counts at one poll of the wait for the workers.
struct JobProgress {
  int64_t total = 0, done = 0, failed = 0, running = 0, waiting = 0;
  bool waiting_for_database = false;  // the counts are the last ones read
  double database_down_seconds = 0;
};

struct LocalPipelineOptions {
  std::string file;               // MIOpenDriver command lines
  std::string tag;                // empty: "tune:<file name>"
  std::string backend;            // cpu | cuda | hip; empty: the first with a device (cuda, hip, cpu)
  std::vector<std::string> fin_steps = {"miopen_perf_compile", "miopen_perf_eval",
                                        "miopen_find_compile", "miopen_find_eval"};
  std::vector<std::string> solvers;  // only these (empty: every applicable one)
  int workers = 1;                   // local worker supervisors
  int compile_jobs = 0;              // compile threads per worker; 0: cores / workers
  // Executor children per device of each local worker (worker::WorkerOptions); 0: 2 on GPU
  // backends, 1 on the CPU backend.
  int executors_per_device = 0;
  // The workers' compile pools run this much below normal priority (worker::WorkerOptions::
  // compile_nice); 0: not lowered.
  int compile_nice = 10;
  // The workers' device lock dir (worker::WorkerOptions::device_lock_dir); empty: the default.
  std::string device_lock_dir;
  worker::JobTuning tuning;
  absl::Duration eval_deadline = absl::Minutes(30);
  absl::Duration max_duration = absl::InfiniteDuration();  // then stop and export what is done
  std::string output_dir = "./tuna-out";
  std::vector<std::string> executor_argv;  // empty: this binary's `worker --executor`
  // The local workers' disk kernel cache (tuner_core/backend/disk_kernel_cache.h): a second run
  // of the same file compiles nothing. Empty: none. A directory that cannot be used (or is not private to
  // this user) fails the run before it writes anything ("kernel cache: DIR ...").
  std::string kernel_cache_dir;
  const solver::SolverRegistry* registry = nullptr;  // null: builtin
  std::function<void(const std::string&)> progress;  // progress lines (default: stderr)
  // Optional structured progress for a live display: `stage_progress` gets the import,
  // applicability, job load and export stages; `job_progress` the job counts at every poll of
  // the wait (twice a second), and with it the periodic "[t s] jobs:" line is left out.
  admin::StageProgressFn stage_progress;
  std::function<void(const JobProgress&)> job_progress;
  std::string tuner_version = "tuna";              // recorded in the session
  bool new_session = false;  // true: never resume an earlier session of the same file and target
  // Perf jobs reuse the params an earlier session on the same target verified for the same config
  // and solver (timed and verified again, not searched); false: search them all again.
  bool reuse_prior_results = true;
  // The longest database outage ridden out, counted from when the run notices it: twice the
  // 5 minutes a MariaDB restart is promised to take (a 300 s outage came back 300.0 s after
  // the run noticed it, on the edge of the former 300 s default).
  absl::Duration db_wait = absl::Minutes(10);
  // Polled about twice a second; true: stop the workers and export what is done. Null: never.
  std::function<bool()> stop_requested;
};

struct ConfigBest {
  int64_t config_id = 0;
  std::string driver;
  std::string solver;  // empty: no verified result
  double time_ms = 0;
};

struct LocalPipelineReport {
  int64_t session_id = 0;
  bool resumed = false;  // an earlier run's session was continued
  std::string arch;
  std::string backend;
  int64_t configs = 0;
  int64_t jobs = 0;
  int64_t jobs_done = 0;    // evaluated
  int64_t jobs_failed = 0;  // failed / not_applicable / cancelled
  int64_t jobs_unfinished = 0;  // only after max_duration or a stop request
  bool stopped = false;         // stop_requested said so
  std::map<std::string, int64_t> errors;  // failure reason → jobs
  std::vector<ConfigBest> best;           // per config (find results, fastest)
  std::vector<std::string> files;         // written
  double seconds = 0;
};

absl::StatusOr<LocalPipelineReport> RunLocalPipeline(schema::Database& db,
                                                     const LocalPipelineOptions& options);

// The report as the lines `tuna tune` prints.
std::string FormatPipelineSummary(const LocalPipelineReport& r);

}  // namespace tuna::pipeline
