// The work of one leased step, as plain functions over tuner_core/search (no process, no RPC):
//   CompileJob  GetSolution + CompileSolution for every candidate the job's search would try
//               (perf: the strategy's candidates within the budget, as a dry run proposes them;
//               find: the solver at the tuned params the coordinator sent, else its default config).
//               Needs no device.
//   EvalJob     perf: the search on a device (every candidate verified and timed, the best few
//               re-timed); find: the solver at its tuned (else default) config. Returns the Report the
//               coordinator takes, every candidate as a sample.
// The executor child calls EvalJob; the compile pool calls CompileJob. Both use a
// KernelCacheBackend so that compile and eval share kernels through the coordinator.
//
// Errors are data in the Report (succeeded=false, retryable=false for deterministic failures
// such as a driver line that does not parse; blame kUnsupported for a solver or arch this worker
// does not know). Threads: each call uses only
// its arguments; the Backend must be safe for concurrent Compile; a Device is used by one
// EvalJob at a time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "coordinator/api.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/search/measure/compile_pool.h"
#include "tuner_core/search/measure/device_guard.h"
#include "tuner_core/search/measure/evaluator.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/registry.h"
#include "worker/fastest_by_config.h"

namespace tuna::worker {

// How a job is searched. Compile and eval workers must agree on strategy/budget/seed for the
// eval step to find every kernel precompiled (a miss is compiled locally, never an error).
struct JobTuning {
  search::StrategyKind strategy = search::StrategyKind::kExhaustive;
  uint64_t budget = 0;  // candidates per perf job; 0 = every valid config
  uint64_t seed = 1;
  int compile_threads = 1;
  int repetitions = 10;
  absl::Duration launch_timeout = absl::Seconds(30);
  uint64_t patience = 0;      // search::TuneOptions::patience (eval only: compiles ignore it)
  uint64_t whole_space = 0;   // search::TuneOptions::whole_space (compile and eval steps alike)
  double time_limit_s = 0;    // search::TuneOptions::time_limit_s per perf job (eval only)
  // search::TuneOptions::outclassed_factor (eval only; 0 = off) and the rival times it compares
  // with besides the lease's: the fastest verified time this process has seen per config (its
  // earlier jobs, any solver); null = none known (the executor sets it; it must outlive the jobs).
  double outclassed = 0;
  const FastestByConfig* fastest = nullptr;
  bool specialize = true;  // search::TuneOptions::specialize (eval only)
  // --heuristics-model: the directory (the executor child loads it again) and its predictor
  // (search::TuneOptions::predictor; tuner_core/heuristics/search_predictor.h), null = none.
  // Compile and eval workers must agree on it as on the strategy: the seeds are compiled ahead.
  std::string heuristics_model;
  search::PredictorFn predictor;
  // Taken around every job's device work (search::EvaluatorOptions::device_guard): the executor
  // sets it to its device lock (device_lock.h) when it shares the device; null = none. Not
  // passed on the command line (JobTuningArgs).
  search::DeviceWorkGuard device_guard;
  // Where a perf search's batch compiled ahead goes when the search stops without it
  // (search::TuneOptions::abandoned): the executor's, so that the job ends without waiting for
  // those builds; null = waited for. Not passed on the command line.
  search::AbandonedCompiles* abandoned = nullptr;
};

// argv form of JobTuning (for the executor child) and back.
std::vector<std::string> JobTuningArgs(const JobTuning& t);

struct CompileOutcome {
  std::vector<coordinator::KernelBlob> kernels;  // unique by build key
  int64_t candidates = 0;
  int64_t compiled = 0;
  int64_t failed = 0;  // CompileFailed candidates
  std::string first_error;
};

// FailedPrecondition for a job that cannot be compiled at all (bad driver line); such a job is
// failed for good. Unimplemented for a solver or arch this worker does not know (a rolling
// upgrade): the job is handed back for another worker (jobs::Blame::kUnsupported). With a pool, the candidates build on its
// threads after those of jobs started earlier (tuning.compile_threads is then unused).
absl::StatusOr<CompileOutcome> CompileJob(const coordinator::LeasedJob& job,
                                          const backend::Backend& backend,
                                          const solver::SolverRegistry& registry,
                                          const JobTuning& tuning,
                                          search::CompilePool* pool = nullptr);

// What an executor keeps between the eval jobs of one device: the evaluators (input tensors,
// their device copies and the reference output) of the last few problems, so that later jobs
// of the same config (the coordinator hands a config's jobs out close together, but find and
// perf jobs of neighbouring configs interleave, and several devices share them) skip that
// preparation. Threads: one at a time.
class EvaluatorCache {
 public:
  // At most `capacity` evaluators, together holding at most `max_device_fraction` of the
  // device's memory (the newest one is kept whatever its size).
  explicit EvaluatorCache(size_t capacity = 64, double max_device_fraction = 0.25)
      : capacity_(std::max<size_t>(1, capacity)), max_device_fraction_(max_device_fraction) {}

  // The cached evaluator when one is for this problem and options and still healthy; else a
  // new one (least recently used ones are freed first, to stay within the bounds).
  absl::StatusOr<search::Evaluator*> Get(backend::Device& device, const Problem& problem,
                                         const search::EvaluatorOptions& options,
                                         const solver::SolverRegistry& registry,
                                         const backend::Backend& backend,
                                         const solver::Target& target);
  int64_t reuses() const { return reuses_; }

  // Starts the host half of the preparation of `problem` (inputs, CPU reference) on another
  // thread, for a later Get: the executor calls it with the jobs that follow while the device
  // runs the current one. Nothing when that problem is held or already being prepared, or when
  // kMaxPending preparations are under way (an unused one that has ended is dropped for it).
  void Prefetch(const Problem& problem, const search::EvaluatorOptions& options);
  static constexpr size_t kMaxPending = 3;
  int64_t prefetched() const { return prefetched_; }  // Gets served by a prefetch

  // Builds what the first evaluators on a GPU would otherwise build while their job waits: the
  // comparison kernels (FP32, FP16, BF16 outputs) and the naive reference solvers (their code
  // depends on the direction only: one build per direction serves every problem and type). Failures are left for the jobs to meet and report.
  void WarmUp(const backend::Backend& backend, backend::Device& device,
              const solver::SolverRegistry& registry);

 private:
  static std::string Key(const Problem& problem, const search::EvaluatorOptions& options);
  struct Entry {
    std::string key;
    std::unique_ptr<search::Evaluator> evaluator;
  };
  size_t capacity_;
  double max_device_fraction_;
  std::vector<Entry> entries_;  // most recently used first
  int64_t reuses_ = 0;
  int64_t prefetched_ = 0;
  struct Pending {
    std::string key;
    std::future<absl::StatusOr<search::HostPreparation>> host;
  };
  std::vector<Pending> pending_;  // oldest first
  std::shared_ptr<search::CompareKernelCache> compare_kernels_ =
      std::make_shared<search::CompareKernelCache>();
  // Candidates' modules, shared by every evaluator of this executor (search::EvaluatorOptions::
  // modules): a kernel build used by several candidates, configs and jobs is loaded once.
  std::shared_ptr<backend::ModuleCache> modules_ = std::make_shared<backend::ModuleCache>(kModules);
  // One L2 flush buffer for all of them (search::EvaluatorOptions::flush_buffer): 100 MB on an
  // H100 that each evaluator held before, out of this executor's share of the device memory.
  std::shared_ptr<search::SharedDeviceBuffer> flush_ = std::make_shared<search::SharedDeviceBuffer>();
  static constexpr size_t kModules = 256;
};

// Starts preparing the evaluator of `next` (a job the supervisor will send after the current
// one) on the host while the device is busy: EvaluatorCache::Prefetch with the options EvalJob
// will use. A driver line that does not parse is ignored (EvalJob reports it).
void PrefetchEvaluator(const coordinator::LeasedJob& next, const backend::Backend& backend,
                       backend::Device& device, const JobTuning& tuning,
                       EvaluatorCache& evaluators);

// The next perf job's search planned ahead (search::Tuner::PlanAhead: for a random search,
// the whole valid space of the solver, tens of milliseconds for the larger ones) on another
// thread while the device runs the current job, so that job starts timing at once.
// The executor starts the plan of the job after next while the next one (planned during the
// previous job) waits to be taken, so two may be held.
// Threads: one caller at a time; the backend, device and registry given to Start must outlive
// the planning and the Tuner taken.
class PlannedTuner {
 public:
  // Starts planning `next` (nothing for find jobs, non-tunable solvers, lines that do not parse
  // (EvalJob reports those) and jobs already planned). Holds at most kMaxPlanned plans: the
  // oldest one not taken is dropped for a new one.
  void Start(const coordinator::LeasedJob& next, const backend::Backend& backend,
             backend::Device& device, const solver::SolverRegistry& registry,
             const JobTuning& tuning);
  // The Tuner planned for `job_id` once its planning has ended; null when none was started.
  std::unique_ptr<search::Tuner> Take(int64_t job_id);
  static constexpr size_t kMaxPlanned = 2;

 private:
  struct Plan {
    int64_t job_id;
    std::future<std::unique_ptr<search::Tuner>> tuner;
  };
  std::vector<Plan> plans_;  // oldest first
};

// `backend` should already hold the job's fetched kernels (KernelCacheBackend::Prefetch), and
// be the backend `planned` was started with. `device_wedged` is set when a launch timed out:
// the device must be abandoned (exit). The report's timings say where the job's time went, and
// the job's log line too: the evaluator's and the device's parts (setup, reference, load,
// verify, timing; device and kernel time; "device lock wait"), then `split ms:` the job's wall
// cut into the parts its thread spent, which add up to it: ready (the evaluator), plan wait
// (for the plan started during the previous job), plan, code (waiting for candidates' builds),
// strategy (proposing and observing), candidates (verifying and timing them, device lock waits
// included), retime, discard wait (for a batch compiled ahead that the stopped search dropped;
// how many candidates it held: "N dropped"), and other (what none of them holds).
coordinator::Report EvalJob(const coordinator::LeasedJob& job, const backend::Backend& backend,
                            backend::Device& device, const solver::SolverRegistry& registry,
                            const JobTuning& tuning, EvaluatorCache& evaluators,
                            bool* device_wedged, PlannedTuner* planned = nullptr);

}  // namespace tuna::worker
