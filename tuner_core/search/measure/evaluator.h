// Evaluate stage of a measurement (TVM's Runner; tuna's *_eval step): verify and time compiled
// candidates of one problem on one device.
//
// Per problem (Create): x, w and y are allocated once and filled with seeded random data
// (reference/fill.h; the output buffer's fill is overwritten by the poison below). The
// reference output is computed once: on the CPU (reference/reference_conv.h) when
// Problem::Flops() <= cpu_reference_max_flops, otherwise by the naive device solver
// (ConvDirectNaiveConv*), which is first itself verified against the CPU reference on the same
// problem with batch 1 (FailedPrecondition when it disagrees). Without a device reference
// solver the CPU reference is used whatever the size.
//
// Pristine device copies of the input tensors are kept beside the working buffers (when they
// fit), so a candidate's inputs are restored on the device, not uploaded from the host.
//
// Per candidate (Evaluate):
//   1. Invoker::Create (load; a module already loaded for the same code object is reused,
//      EvaluatorOptions::modules) — LaunchFailed on error.
//   2. Inputs restored, output poisoned with 0xFF bytes (NaN for floats), one run: the
//      warm-up and the verified run; its output is copied back. LaunchFailed on a launch or
//      device error.
//   3. Timing with Device::TimeLaunches while a CPU thread compares that output with the
//      reference (reference/verify.h, per-type tolerances): Incorrect when it does not match,
//      and the timing is then discarded. On GPUs an L2 flush (a memset of a buffer of at least
//      2x the L2 size) precedes each launch, outside the timed region; the runs of a batch are
//      queued at once, so the device does not wait for the host between them. A first batch of
//      `early_repetitions` decides an early drop: if its median exceeds early_drop_ratio x
//      best_so_far, timing stops (dropped_early, time = that median). Otherwise a second batch
//      brings it to `repetitions` runs (fewer for slow kernels, see max_timing_ms); the result
//      is the median.
// Device work is guarded (options.device_guard, device_guard.h: a device shared with other
// processes): each Evaluate from the load to the end of its timing (the host comparison it may
// still wait for is outside), each Retime, and Create's device stages (buffers and uploads, the
// device reference's runs, the device comparison's set-up) take the guard; compiles and the CPU
// reference never hold it. The time waited for it is EvalTimings::device_wait_ms. When the
// device is lost in a guarded section (a launch timed out and may still be running), the guard
// stays held until the Evaluator is destroyed or its process ends.
// Every device operation runs under the watchdog (watchdog.h): a launch that misses
// launch_timeout gives Timeout, after which the evaluator is unusable (healthy() false and
// every later candidate Skipped) — the device must be abandoned by the caller.
//
// Ownership: the Device (and its Backend) must outlive the Evaluator. Threads: one thread at a
// time; all device work happens on the watchdog's thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/backend/module_cache.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/search/measure/compiler.h"
#include "tuner_core/search/measure/device_compare.h"
#include "tuner_core/search/measure/device_guard.h"
#include "tuner_core/search/measure/disposition.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna::search {

// The L2 flush buffer (2x the L2 size, 100 MB on an H100) of one device, shared by the
// evaluators of a process instead of one per evaluator: its content never matters (it is
// overwritten before every timed launch), and a worker's executor keeping dozens of evaluators
// spends that memory on more of them. Allocated by the first evaluator that needs it (grown when
// a later one asks for more). Threads: thread-safe; the buffer is used by one evaluator at a time
// (an executor times on one thread). The Device must outlive it.
class SharedDeviceBuffer {
 public:
  // A buffer of at least `bytes` on `device` (the same device every time): the one held, or a
  // new one replacing it. ResourceExhausted etc. from Device::Alloc.
  absl::StatusOr<backend::DeviceBuffer*> Get(backend::Device& device, size_t bytes);
  size_t bytes() const;
  // Never frees the buffer (a device that may still run a hung kernel).
  void Abandon();

 private:
  mutable std::mutex mu_;
  backend::DeviceBuffer buffer_;  // guarded by mu_
};

// EvaluatorOptions::cpu_reference_max_flops for a GPU (the worker's, bench/search's): the naive
// device solver (checked against the CPU reference at batch 1 first) makes the reference of
// every problem above this size: milliseconds instead of the CPU reference's tenths of a
// second, while the GPU waits.
inline constexpr double kGpuCpuReferenceMaxFlops = 1e9;

struct EvaluatorOptions {
  uint64_t seed = 1;  // input data seed
  int repetitions = 10;
  int early_repetitions = 3;
  double early_drop_ratio = 1.5;
  // Timing stops after this much measured time (at least early_repetitions runs): a 2 s CPU
  // kernel is not run ten times.
  double max_timing_ms = 2000;
  // Retime gives each candidate at least this much kernel time (ms), up to
  // retime_max_repetitions runs, where `repetitions` runs would give less: a 15 us kernel's
  // median of 10 runs moves by 2-3 % (1 ms: 67 runs), as much as the differences re-timing decides between
  // (the event clock's 0.5 us resolution, launch jitter). 0 = exactly `repetitions` runs.
  double retime_min_kernel_ms = 1.0;
  int retime_max_repetitions = 100;
  bool flush_l2 = true;  // GPUs only; the CPU backend is never flushed
  absl::Duration launch_timeout = absl::Seconds(30);
  // Problems above this many flops get the device reference (when one is available).
  double cpu_reference_max_flops = 2e10;
  int reference_threads = 0;  // CPU reference threads; 0 = all
  // The device reference solver's name; empty = the registry's ConvDirectNaiveConv for the
  // direction. Only used above cpu_reference_max_flops.
  std::string reference_solver;
  // Overrides reference::DefaultTolerance(type) when set.
  bool has_tolerance = false;
  reference::Tolerance tolerance;
  // GPUs: compare outputs on the device (device_compare.h) when its kernel builds and passes
  // its self-check; otherwise on the host. Needs the backend and target at Create.
  bool device_compare = true;
  // Where comparison kernels are kept between evaluators (null: each evaluator builds its own).
  std::shared_ptr<CompareKernelCache> compare_kernels;
  // The L2 flush buffer shared with the other evaluators of the device (null: each evaluator
  // allocates its own). Not counted in device_bytes().
  std::shared_ptr<SharedDeviceBuffer> flush_buffer;
  // Where candidates' loaded modules are kept between candidates and evaluators of the device
  // (backend/module_cache.h: the candidates that share a kernel build, the re-timing and later
  // jobs load it once); null: each evaluator keeps its own for its candidates.
  std::shared_ptr<backend::ModuleCache> modules;
  // Taken around the device work (see the file comment); null: none. Not part of what makes two
  // evaluators alike (a worker's executor keeps one guard for its whole life).
  DeviceWorkGuard device_guard;
};

struct Measurement {
  Disposition disposition = Disposition::kSkipped;
  std::string error;
  double time_ms = 0;               // median of samples (kPassed only)
  std::vector<double> samples_ms;   // every timed run
  bool dropped_early = false;
  std::string verify_summary;       // reference::VerifyReport::Summary() of the verified run
};

// Where an evaluator's wall time went, cumulated since Create (for logs and worker metrics).
// device_ms is the time spent in device work (every task under the watchdog: allocations,
// copies, loads, runs, timed batches with their flushes); kernel_ms the part of it the device
// events timed (timed runs only).
struct EvalTimings {
  double setup_ms = 0;      // input data and buffers (Create)
  double reference_ms = 0;  // the reference output (Create)
  double load_ms = 0;       // module loads
  double verify_ms = 0;     // verified runs: restore, run, copy back, compare (not overlapped)
  double timing_ms = 0;     // timed batches (flushes included)
  double device_ms = 0;
  double kernel_ms = 0;
  int64_t candidates = 0;   // Evaluate calls that reached the device
  int64_t modules_loaded = 0;  // module loads of candidates (load_ms)
  int64_t modules_reused = 0;  // loads saved by EvaluatorOptions::modules
  // Waiting for EvaluatorOptions::device_guard (another process had the device); not part of
  // any of the above.
  double device_wait_ms = 0;

  EvalTimings operator-(const EvalTimings& earlier) const;
};

// The host half of an evaluator's preparation, which needs no device and so can run on another
// thread while the device is busy with an earlier problem: the seeded inputs and, for problems
// the CPU reference serves (Problem::Flops() <= cpu_reference_max_flops), the reference output;
// for larger ones (the device reference's), the batch-1 check's own preparation (`check`: its
// inputs and CPU reference, against which the device reference solver is still checked).
struct HostPreparation {
  Problem problem;
  uint64_t seed = 0;
  std::vector<std::byte> x, w, y;  // y (or the output tensor) only sized
  bool has_expected = false;
  std::vector<std::byte> expected;
  std::shared_ptr<HostPreparation> check;  // null: made when needed
  double ms = 0;  // time it took
};

// Where the reference came from (for logs and reports).
struct ReferenceInfo {
  std::string source;  // "cpu" or the device solver's name
  double ms = 0;       // time to compute it
  std::string check;   // the batch-1 check summary when a device solver was used
  std::string compare;  // "device" or "host" (and why not on the device)
};

class Evaluator {
 public:
  // The registry, backend and target are only needed for the device reference (may be null
  // otherwise: then every problem uses the CPU reference). Errors: InvalidArgument for a
  // problem the reference cannot handle, ResourceExhausted when buffers do not fit,
  // FailedPrecondition when the device reference fails its own check.
  // `prepared` (optional; consumed) is used when it is for this problem and seed.
  static absl::StatusOr<std::unique_ptr<Evaluator>> Create(
      backend::Device& device, const Problem& problem, const EvaluatorOptions& options,
      const solver::SolverRegistry* registry = nullptr, const backend::Backend* backend = nullptr,
      const solver::Target* target = nullptr, HostPreparation* prepared = nullptr);
  // Thread-safe (no device). InvalidArgument for a problem the reference cannot handle.
  static absl::StatusOr<HostPreparation> PrepareOnHost(const Problem& problem,
                                                       const EvaluatorOptions& options);
  ~Evaluator();

  // Verifies and times one compiled candidate (any disposition but kPassed is passed through).
  // best_so_far_ms <= 0 disables the early drop.
  Measurement Evaluate(const CompiledCandidate& candidate, double best_so_far_ms);

  // Re-times candidates that passed, interleaving their runs (one launch of each per round, so
  // clock and thermal drift hit them alike): `repetitions` rounds, more for short kernels
  // (EvaluatorOptions::retime_min_kernel_ms, sized by the first round's fastest).
  // Returns one measurement per candidate, in order.
  std::vector<Measurement> Retime(const std::vector<const CompiledCandidate*>& candidates,
                                  int repetitions);

  bool healthy() const;
  const ReferenceInfo& reference() const { return reference_info_; }
  const Problem& problem() const { return problem_; }
  const EvaluatorOptions& options() const;
  EvalTimings timings() const;
  // Device memory held (tensors, their pristine copies, workspace, its own flush buffer (not a
  // shared one), the reference's copy for the device comparison).
  size_t device_bytes() const;

 private:
  struct Impl;
  Evaluator(std::unique_ptr<Impl> impl, Problem problem);
  // Create's stages: the device tensors (and flush buffer) with pristine input copies; the
  // expected output from the device reference solver `ref` (checked at batch 1 against the CPU
  // reference first); the comparison (on the device when it can), host copies dropped.
  static absl::Status AllocateBuffers(Impl& m, backend::Device& device, const Problem& problem,
                                      const EvaluatorOptions& options);
  static absl::Status DeviceReference(Impl& m, backend::Device& device, const Problem& problem,
                                      const EvaluatorOptions& options, const solver::Solver& ref,
                                      const backend::Backend& backend,
                                      const solver::Target& target, ReferenceInfo& info,
                                      HostPreparation* check_prepared);
  static void ChooseCompare(Impl& m, const Problem& problem, const EvaluatorOptions& options,
                            const backend::Backend* backend, const solver::Target* target,
                            ReferenceInfo& info);
  std::unique_ptr<Impl> impl_;
  Problem problem_;
  ReferenceInfo reference_info_;
};

// Median of a non-empty vector (the mean of the two middle values for an even size).
double Median(std::vector<double> v);

}  // namespace tuna::search
