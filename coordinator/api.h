// The worker's API of the coordinator: the types a worker sends and receives, and the interface
// that both clients implement (STYLE §5):
//   worker/coordinator_client.h       MakeGrpcClient: a channel to `tuna coordinator`
//   coordinator/in_process_client.h   MakeInProcessClient: direct calls on a Coordinator
// Plain C++ only: no protobuf (coordinator/wire.h converts) and no store types (the coordinator
// converts), so a worker links neither the database client nor the schema.
//
// Errors (every implementation): the coordinator's codes (coordinator/coordinator.h):
// InvalidArgument names the bad field; FailedPrecondition for a lease not (or no longer) held;
// NotFound for no such job; a transport failure is Unavailable / DeadlineExceeded, which callers
// retry with backoff (reports and kernel uploads are idempotent).
// Threads: implementations are safe for concurrent use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "jobs/job_state.h"
#include "tuner_core/search/transfer.h"

namespace tuna::coordinator {

using jobs::JobStep;

inline constexpr uint32_t kProtocolVersion = 1;

struct Device {
  std::string backend;  // "cpu", "cuda", "hip" (lower case)
  std::string arch;     // "cpu-avx2", "sm_90", "gfx90a"
  int num_cu = 0;
  int index = 0;
  uint64_t memory_bytes = 0;
};

struct WorkerRegistration {
  uint32_t protocol_version = kProtocolVersion;
  std::string host;
  std::string version;
  std::vector<Device> devices;
};

struct Registered {
  std::string worker_id;
  int lease_seconds = 0;
};

struct LeaseRequest {
  std::string worker_id;
  JobStep step = JobStep::kCompile;
  // compile: the backends this worker can compile for; eval: the one device to run on.
  std::vector<std::string> compile_backends;
  std::optional<Device> device;
  int max_jobs = 1;
  absl::Duration wait = absl::Seconds(10);  // long-poll; capped at max_wait
};

struct LeasedJob {
  int64_t job_id = 0;
  int64_t attempt = 0;
  JobStep step = JobStep::kCompile;
  std::string kind;          // perf | find
  int64_t session_id = 0;
  std::string arch;          // the session's target
  int num_cu = 0;
  std::string backend;       // lower case
  int64_t config_id = 0;
  std::string driver;        // canonical MIOpenDriver line of the problem
  int64_t solver_id = 0;
  std::string solver_name;
  std::string tuned_params;  // find jobs: the perf result's params ("" = none: default params)
  std::string prior_params;  // perf jobs: an earlier session's result for this config (ClaimedJob)
  std::vector<search::TransferRun> transfer;  // perf jobs: other configs' timings (ClaimedJob)
  bool find_follows = false;  // perf jobs: the find job runs the finishing step (ClaimedJob)
  double rival_ms = 0;        // perf jobs: the config's fastest verified time so far (ClaimedJob)
  absl::Time lease_expires;
};

// A lease is (job, attempt): the attempt is the fencing token.
struct Lease {
  int64_t job_id = 0;
  int64_t attempt = 0;
};

// One measured candidate of an eval step.
struct Sample {
  std::string params;
  std::optional<double> time_ms;  // none when the candidate did not run
  std::string status;             // Disposition name
  std::string error;
};

// How long a step took on the worker (for the coordinator's metrics; 0 = not reported).
struct StepTimings {
  double wall_seconds = 0;    // the step, end to end on the worker
  double device_seconds = 0;  // eval: device work (copies, loads, runs, timed batches)
  double kernel_seconds = 0;  // eval: timed kernel runs (device events)
};

// A stored kernel as a compile step's report names it.
struct KernelLink {
  int64_t kernel_id = 0;  // from PutKernels
  std::string build_key;  // 64 hex
};

// One compiled code object, as it travels from a compile step to the eval step of the same job.
struct KernelBlob {
  std::string build_key;    // 64 hex: SHA-256 of what was compiled (worker/kernel_cache.h)
  std::string arch;
  std::string compiler;
  std::string kernel_name;
  std::string options;
  std::string entries;      // comma-separated
  std::string code_object;  // uncompressed
  // FetchKernels: the worker that sent it (PutKernels takes only the compile role's token);
  // empty when stored before provenance was recorded. Ignored by PutKernels.
  std::string built_by;
};

// A report of one leased step. `succeeded` selects which fields matter.
struct Report {
  std::string worker_id;
  int64_t job_id = 0;
  int64_t attempt = 0;
  JobStep step = JobStep::kCompile;
  bool succeeded = false;
  // Failure:
  std::string error;
  bool retryable = true;         // false: straight to 'failed' (deterministic failure)
  bool executor_killed = false;  // the step crashed or hung its executor
  // kHost: the host's fault (device cannot be opened, executor cannot start); kUnsupported: this
  // worker cannot run the job (solver / arch / version unknown to it). Either way the job goes
  // back to its ready state without a retry charged (jobs/job_state.h).
  jobs::Blame blame = jobs::Blame::kJob;
  // Compile success:
  std::vector<KernelLink> kernels;
  // Eval success:
  bool has_result = false;  // a passing candidate was found
  std::string params;
  double kernel_time_ms = 0;
  int64_t workspace_bytes = 0;
  int64_t candidates_tried = 0;
  bool verified = false;
  bool finished = false;  // find: the perf result takes params and time (schema::StepReport)
  std::vector<Sample> samples;
  StepTimings timings;
};

// What a worker calls (member names shadow the types, hence `coordinator::` inside). Every method
// may block on the network (or the coordinator's batches); Lease blocks up to its wait and then
// returns an empty vector (not an error), or Unavailable when the coordinator's database is
// unreachable.
class WorkerApi {
 public:
  virtual ~WorkerApi() = default;
  virtual absl::StatusOr<coordinator::Registered> Register(
      const coordinator::WorkerRegistration& w) = 0;
  virtual absl::StatusOr<std::vector<coordinator::LeasedJob>> Lease(
      const coordinator::LeaseRequest& req) = 0;
  // The leases still held (a lease missing from the answer is lost: stop working on it).
  virtual absl::StatusOr<std::vector<coordinator::Lease>> Renew(
      const std::string& worker_id, const std::vector<coordinator::Lease>& leases) = 0;
  // OK when applied or a duplicate.
  virtual absl::Status Report(const coordinator::Report& report) = 0;
  // Graceful hand-back (no retry counted); returns how many were released.
  virtual absl::StatusOr<int64_t> Release(const std::string& worker_id,
                                          const std::vector<coordinator::Lease>& leases) = 0;
  // Stores a compile step's code objects; returns their kernel ids (for Report::kernels).
  virtual absl::StatusOr<std::vector<int64_t>> PutKernels(
      const std::string& worker_id, int64_t job_id, int64_t attempt,
      const std::vector<coordinator::KernelBlob>& kernels) = 0;
  // The kernels the job's compile step produced; the caller must hold the job's eval lease.
  virtual absl::StatusOr<std::vector<coordinator::KernelBlob>> FetchKernels(
      const std::string& worker_id, int64_t job_id, int64_t attempt) = 0;
};

}  // namespace tuna::coordinator
