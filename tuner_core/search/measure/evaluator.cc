#include "tuner_core/search/measure/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <future>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/search/measure/watchdog.h"
#include "tuner_core/solver/invoker.h"

namespace tuna::search {

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

namespace {

constexpr uint8_t kPoison = 0xFF;  // NaN in fp32/fp16/bf16, -1 in int32

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Host copies of the three tensors of one problem, filled with seeded random data.
struct HostTensors {
  std::vector<std::byte> x, w, y;
};

size_t BytesOf(const Problem& p, const TensorDesc& desc, bool is_output) {
  const size_t elem = is_output ? reference::OutputElementSize(p, p.direction) : DataTypeSize(p.data_type);
  return static_cast<size_t>(desc.ElementCount()) * elem;
}

// The output tensor is only sized (a run overwrites it); the inputs get random data.
HostTensors MakeInputs(const Problem& p, uint64_t seed) {
  const reference::ElementType t = reference::StorageType(p.data_type);
  const Direction d = p.direction;
  auto make = [&](const TensorDesc& desc, bool is_output, uint64_t stream) {
    return is_output ? std::vector<std::byte>(BytesOf(p, desc, true))
                     : reference::RandomBuffer(t, desc.ElementCount(), seed * 4 + stream);
  };
  HostTensors h;
  h.x = make(p.XDesc(), d == Direction::kBackwardData, 1);
  h.w = make(p.WDesc(), d == Direction::kBackwardWeights, 2);
  h.y = make(p.YDesc(), d == Direction::kForward, 3);
  return h;
}

absl::StatusOr<std::vector<std::byte>> CpuReference(const Problem& p, const HostTensors& h, int threads) {
  const TensorDesc out_desc = reference::OutputDesc(p, p.direction);
  std::vector<std::byte> out(static_cast<size_t>(out_desc.ElementCount()) *
                             reference::OutputElementSize(p, p.direction));
  reference::ConvTensors t{h.x.data(), h.w.data(), h.y.data(), out.data()};
  reference::ConvOptions o;
  o.threads = threads;
  if (absl::Status st = reference::RunConv(p, t, o); !st.ok()) return st;
  return out;
}

}  // namespace

struct Evaluator::Impl {
  Impl(backend::Device& d, const Problem& p, const EvaluatorOptions& o)
      : device(d), problem(p), options(o), is_gpu(d.Info().warp_size > 1) {
    if (!options.modules) options.modules = std::make_shared<backend::ModuleCache>();
  }
  ~Impl() {
    if (!watchdog.wedged()) return;
    options.modules->Abandon();  // a hung kernel may belong to one of them
    // A hung launch may still be using the buffers: leak them (see watchdog.h).
    auto* leaked = new backend::DeviceBuffer[8];
    leaked[0] = std::move(x);
    leaked[1] = std::move(w);
    leaked[2] = std::move(y);
    leaked[3] = std::move(workspace);
    leaked[4] = std::move(flush);
    if (options.flush_buffer) options.flush_buffer->Abandon();
    for (int i = 0; i < 3; ++i) leaked[5 + i] = std::move(pristine[i]);
    (void)comparer.release();
  }

  // A guarded section of device work (EvaluatorOptions::device_guard). When the device is lost
  // in it (a launch that timed out may still be running), the guard is kept until this Impl is
  // destroyed or the process ends: no other process may time beside that kernel.
  class Section {
   public:
    explicit Section(Impl& m) : m_(m), work_(m.options.device_guard, &m.timings.device_wait_ms) {}
    ~Section() { Release(); }
    Section(const Section&) = delete;
    Section& operator=(const Section&) = delete;
    void Release() {
      if (m_.lost && !m_.held_while_lost) m_.held_while_lost = work_.Take();
      work_.Release();
    }

   private:
    Impl& m_;
    GuardedDeviceWork work_;
  };

  backend::Device& device;
  Problem problem;
  EvaluatorOptions options;
  bool is_gpu;
  DeviceWatchdog watchdog;
  bool lost = false;       // device context lost: nothing more can run
  std::string lost_reason;
  backend::DeviceBuffer x, w, y, workspace, flush;
  backend::DeviceBuffer* flush_in_use = nullptr;  // `flush` or options.flush_buffer's; null: none
  // Device copies of the inputs as generated (index as Tensor()); invalid for the output and
  // when they did not fit (then inputs are uploaded from `host` for every run).
  backend::DeviceBuffer pristine[3];
  HostTensors host;
  std::vector<std::byte> expected;
  std::unique_ptr<DeviceComparer> comparer;  // null: outputs are compared on the host
  EvalTimings timings;
  std::unique_ptr<DeviceWorkScope> held_while_lost;  // see Section

  // x, w, y as 0, 1, 2.
  backend::DeviceBuffer& Tensor(int i) { return i == 0 ? x : i == 1 ? w : y; }
  const std::vector<std::byte>& HostTensor(int i) const {
    return i == 0 ? host.x : i == 1 ? host.w : host.y;
  }
  int OutIndex() const {
    switch (problem.direction) {
      case Direction::kForward: return 2;
      case Direction::kBackwardData: return 0;
      case Direction::kBackwardWeights: return 1;
    }
    return 2;
  }
  const backend::DeviceBuffer& Out() { return Tensor(OutIndex()); }
  solver::ConvBuffers Buffers() const { return {&x, &w, &y, workspace.valid() ? &workspace : nullptr}; }

  // Runs device work under the watchdog.
  absl::Status OnDevice(std::function<absl::Status()> task,
                        absl::Duration timeout = absl::ZeroDuration()) {
    if (lost) return absl::FailedPreconditionError(lost_reason);
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status st = watchdog.Run(std::move(task), std::max(timeout, options.launch_timeout));
    timings.device_ms += MsSince(t0);
    if (absl::IsDeadlineExceeded(st)) {
      lost = true;
      lost_reason = "device unusable: an earlier launch timed out";
    } else if (backend::IsContextLost(st)) {
      lost = true;
      lost_reason = absl::StrCat("device context lost: ", st.message());
    }
    return st;
  }

  absl::Status Upload(const backend::DeviceBuffer& dst, const std::vector<std::byte>& src) {
    return device.CopyToDevice(dst, src.data(), std::min(src.size(), dst.bytes()));
  }

  // Device work of Create: pristine input copies where they fit, filled from `host`.
  absl::Status KeepPristineInputs() {
    for (int i = 0; i < 3; ++i) {
      if (i == OutIndex()) continue;
      absl::StatusOr<backend::DeviceBuffer> b = device.Alloc(Tensor(i).bytes());
      if (!b.ok()) {
        if (absl::IsResourceExhausted(b.status())) continue;  // upload per run instead
        return b.status();
      }
      pristine[i] = *std::move(b);
      if (absl::Status st = Upload(pristine[i], HostTensor(i)); !st.ok()) return st;
    }
    return absl::OkStatus();
  }

  // Device-side: inputs fresh, output poisoned (a kernel that writes nothing cannot pass).
  absl::Status PrepareRun() {
    for (int i = 0; i < 3; ++i) {
      if (i == OutIndex()) continue;
      absl::Status st = pristine[i].valid()
                            ? device.CopyOnDevice(Tensor(i), pristine[i], Tensor(i).bytes())
                            : Upload(Tensor(i), HostTensor(i));
      if (!st.ok()) return st;
    }
    return device.Memset(Out(), kPoison, Out().bytes());
  }

  absl::Status EnsureWorkspace(uint64_t bytes) {
    if (bytes == 0 || (workspace.valid() && workspace.bytes() >= bytes)) return absl::OkStatus();
    workspace.Reset();
    absl::StatusOr<backend::DeviceBuffer> b = device.Alloc(bytes);
    if (!b.ok()) return b.status();
    workspace = *std::move(b);
    return absl::OkStatus();
  }

  // `count` runs of `launch`, queued as one batch (a flush before each on GPUs, outside the
  // timed region). The watchdog allows launch_timeout plus `count` x twice `run_estimate_ms`.
  absl::StatusOr<std::vector<double>> TimeBatch(const std::function<absl::Status()>& launch,
                                                int count, double run_estimate_ms) {
    std::vector<double> ms;
    const auto t0 = std::chrono::steady_clock::now();
    absl::Status st = OnDevice(
        [&]() -> absl::Status {
          std::function<absl::Status()> before;
          if (flush_in_use != nullptr) {
            before = [&] { return device.Memset(*flush_in_use, 0, flush_in_use->bytes()); };
          }
          absl::StatusOr<std::vector<double>> t = device.TimeLaunches(launch, count, before);
          if (!t.ok()) return t.status();
          ms = *std::move(t);
          return absl::OkStatus();
        },
        options.launch_timeout + absl::Milliseconds(2 * count * run_estimate_ms));
    timings.timing_ms += MsSince(t0);
    if (!st.ok()) return st;
    for (double t : ms) timings.kernel_ms += t;
    return ms;
  }

  // The comparison kernel, built or taken from the cache: host work, done before the device
  // is asked for.
  absl::StatusOr<backend::CodeObject> CompareKernel(const backend::Backend& backend,
                                                    const std::string& arch) {
    const reference::ElementType type = reference::OutputType(problem, problem.direction);
    return options.compare_kernels ? options.compare_kernels->Get(backend, arch, type)
                                   : CompareKernelCache().Get(backend, arch, type);
  }

  // Checks the comparison kernel `code` on this device and keeps it.
  absl::Status UseDeviceCompare(const backend::CodeObject& code) {
    const reference::Tolerance tol =
        options.has_tolerance ? options.tolerance : reference::DefaultTolerance(problem.data_type);
    absl::StatusOr<std::unique_ptr<DeviceComparer>> c;
    absl::Status st = OnDevice([&]() -> absl::Status {
      c = DeviceComparer::Create(device, code, problem, expected, tol, Out());
      return c.status();
    });
    if (!st.ok()) return st;
    comparer = *std::move(c);
    return absl::OkStatus();
  }

  // Runs one candidate on prepared buffers and compares its output on the device.
  absl::StatusOr<reference::VerifyReport> RunCompared(solver::Invoker& invoker) {
    absl::StatusOr<reference::VerifyReport> report;
    absl::Status st = OnDevice([&]() -> absl::Status {
      if (absl::Status s = PrepareRun(); !s.ok()) return s;
      if (absl::Status s = invoker.Run(Buffers()); !s.ok()) return s;
      report = comparer->Compare(Out());
      return report.ok() ? device.Synchronize() : report.status();
    });
    if (!st.ok()) return st;
    return report;
  }

  // Runs one candidate on prepared buffers and copies the output back into `got`.
  absl::Status RunVerified(solver::Invoker& invoker, std::vector<std::byte>& got) {
    got.resize(Out().bytes());
    return OnDevice([&]() -> absl::Status {
      if (absl::Status st = PrepareRun(); !st.ok()) return st;
      if (absl::Status st = invoker.Run(Buffers()); !st.ok()) return st;
      if (absl::Status st = device.Synchronize(); !st.ok()) return st;
      return device.CopyToHost(got.data(), Out(), got.size());
    });
  }

  absl::StatusOr<std::unique_ptr<solver::Invoker>> Load(const CompiledCandidate& c) {
    std::unique_ptr<solver::Invoker> invoker;
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t loads = options.modules->loads(), hits = options.modules->hits();
    absl::Status st = OnDevice([&]() -> absl::Status {
      if (absl::Status ws = EnsureWorkspace(c.solution.workspace_bytes); !ws.ok()) return ws;
      absl::StatusOr<std::unique_ptr<solver::Invoker>> inv =
          solver::Invoker::Create(device, c.solution, c.code, options.modules.get());
      if (!inv.ok()) return inv.status();
      invoker = *std::move(inv);
      return absl::OkStatus();
    });
    timings.load_ms += MsSince(t0);
    timings.modules_loaded += options.modules->loads() - loads;
    timings.modules_reused += options.modules->hits() - hits;
    if (!st.ok()) return st;
    return invoker;
  }

  // Invokers must not be freed while a timed-out task may still use them.
  void Drop(std::unique_ptr<solver::Invoker> invoker) {
    if (lost && watchdog.wedged()) {
      (void)invoker.release();
      return;
    }
    invoker.reset();
  }

  Disposition FailureDisposition(const absl::Status& st) const {
    return absl::IsDeadlineExceeded(st) ? Disposition::kTimeout : Disposition::kLaunchFailed;
  }
};

absl::StatusOr<backend::DeviceBuffer*> SharedDeviceBuffer::Get(backend::Device& device, size_t bytes) {
  std::lock_guard<std::mutex> l(mu_);
  if (!buffer_.valid() || buffer_.bytes() < bytes) {
    buffer_.Reset();  // freed first: two at once may not fit
    absl::StatusOr<backend::DeviceBuffer> b = device.Alloc(std::max<size_t>(bytes, 1));
    if (!b.ok()) return b.status();
    buffer_ = *std::move(b);
  }
  return &buffer_;
}

size_t SharedDeviceBuffer::bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return buffer_.bytes();
}

void SharedDeviceBuffer::Abandon() {
  std::lock_guard<std::mutex> l(mu_);
  (void)new backend::DeviceBuffer(std::move(buffer_));  // never freed
}

EvalTimings EvalTimings::operator-(const EvalTimings& e) const {
  EvalTimings d;
  d.setup_ms = setup_ms - e.setup_ms;
  d.reference_ms = reference_ms - e.reference_ms;
  d.load_ms = load_ms - e.load_ms;
  d.verify_ms = verify_ms - e.verify_ms;
  d.timing_ms = timing_ms - e.timing_ms;
  d.device_ms = device_ms - e.device_ms;
  d.kernel_ms = kernel_ms - e.kernel_ms;
  d.candidates = candidates - e.candidates;
  d.modules_loaded = modules_loaded - e.modules_loaded;
  d.modules_reused = modules_reused - e.modules_reused;
  d.device_wait_ms = device_wait_ms - e.device_wait_ms;
  return d;
}

Evaluator::Evaluator(std::unique_ptr<Impl> impl, Problem problem)
    : impl_(std::move(impl)), problem_(std::move(problem)) {}

Evaluator::~Evaluator() = default;

bool Evaluator::healthy() const { return !impl_->lost; }
const EvaluatorOptions& Evaluator::options() const { return impl_->options; }
EvalTimings Evaluator::timings() const { return impl_->timings; }
size_t Evaluator::device_bytes() const {
  const Impl& m = *impl_;
  size_t bytes = m.x.bytes() + m.w.bytes() + m.y.bytes() + m.workspace.bytes() + m.flush.bytes();
  for (const backend::DeviceBuffer& p : m.pristine) bytes += p.bytes();
  if (m.comparer) bytes += m.comparer->device_bytes();
  return bytes;
}

absl::StatusOr<HostPreparation> Evaluator::PrepareOnHost(const Problem& problem,
                                                         const EvaluatorOptions& options) {
  if (absl::Status st = reference::CheckProblem(problem); !st.ok()) return st;
  const auto t0 = std::chrono::steady_clock::now();
  HostPreparation h;
  h.problem = problem;
  h.seed = options.seed;
  HostTensors t = MakeInputs(problem, options.seed);
  if (problem.Flops() <= options.cpu_reference_max_flops) {
    absl::StatusOr<std::vector<std::byte>> ref = CpuReference(problem, t, options.reference_threads);
    if (!ref.ok()) return ref.status();
    h.expected = *std::move(ref);
    h.has_expected = true;
  } else {
    // The device reference's batch-1 check (DeviceReference) gets its CPU reference from here.
    Problem small = problem;
    small.n = 1;
    EvaluatorOptions o = options;
    o.cpu_reference_max_flops = std::numeric_limits<double>::infinity();
    absl::StatusOr<HostPreparation> check = PrepareOnHost(small, o);
    if (check.ok()) h.check = std::make_shared<HostPreparation>(*std::move(check));
  }
  h.x = std::move(t.x);
  h.w = std::move(t.w);
  h.y = std::move(t.y);
  h.ms = MsSince(t0);
  return h;
}

namespace {

// The device solver that computes the reference output of a problem too large for the CPU
// reference: options.reference_solver, else the naive solver of the direction; null when none
// applies.
const solver::Solver* FindReferenceSolver(const solver::SolverRegistry& registry,
                                          const solver::Target& target, const Problem& problem,
                                          const EvaluatorOptions& options) {
  for (const solver::RegisteredSolver& r : registry.All()) {
    const std::string_view name = r.solver->Name();
    const bool wanted = options.reference_solver.empty()
                            ? name.substr(0, 19) == "ConvDirectNaiveConv"
                            : name == options.reference_solver;
    const auto dirs = r.solver->Directions();
    if (wanted && std::find(dirs.begin(), dirs.end(), problem.direction) != dirs.end() &&
        r.solver->IsApplicable(target, problem).ok()) {
      return r.solver;
    }
  }
  spdlog::warn("evaluator: no device reference solver for {}; using the CPU reference",
               problem.Canonical());
  return nullptr;
}

}  // namespace

absl::Status Evaluator::AllocateBuffers(Impl& m, backend::Device& device, const Problem& problem,
                                        const EvaluatorOptions& options) {
  return m.OnDevice([&]() -> absl::Status {
    auto alloc = [&](backend::DeviceBuffer& dst, size_t bytes) -> absl::Status {
      absl::StatusOr<backend::DeviceBuffer> b = device.Alloc(std::max<size_t>(bytes, 1));
      if (!b.ok()) return b.status();
      dst = *std::move(b);
      return absl::OkStatus();
    };
    if (absl::Status s = alloc(m.x, BytesOf(problem, problem.XDesc(), problem.direction == Direction::kBackwardData)); !s.ok()) return s;
    if (absl::Status s = alloc(m.w, BytesOf(problem, problem.WDesc(), problem.direction == Direction::kBackwardWeights)); !s.ok()) return s;
    if (absl::Status s = alloc(m.y, BytesOf(problem, problem.YDesc(), problem.direction == Direction::kForward)); !s.ok()) return s;
    if (m.is_gpu && options.flush_l2) {
      const uint64_t l2 = device.Info().l2_cache_bytes;
      const size_t bytes = l2 > 0 ? static_cast<size_t>(2 * l2) : (size_t{256} << 20);
      if (options.flush_buffer) {
        absl::StatusOr<backend::DeviceBuffer*> shared = options.flush_buffer->Get(device, bytes);
        if (!shared.ok()) return shared.status();
        m.flush_in_use = *shared;
      } else {
        if (absl::Status s = alloc(m.flush, bytes); !s.ok()) return s;
        m.flush_in_use = &m.flush;
      }
    }
    return m.KeepPristineInputs();
  });
}

absl::Status Evaluator::DeviceReference(Impl& m, backend::Device& device, const Problem& problem,
                                        const EvaluatorOptions& options, const solver::Solver& ref,
                                        const backend::Backend& backend,
                                        const solver::Target& target, ReferenceInfo& info,
                                        HostPreparation* check_prepared) {
  Compiler compiler(backend, target, CompilerOptions{1});
  // 1. The device solver against the CPU reference on batch 1.
  Problem small = problem;
  small.n = 1;
  {
    absl::StatusOr<std::unique_ptr<Evaluator>> check = Create(device, small, [&] {
      EvaluatorOptions o = options;
      o.cpu_reference_max_flops = std::numeric_limits<double>::infinity();
      o.flush_l2 = false;
      o.repetitions = 1;  // only the verification matters here
      return o;
    }(), nullptr, nullptr, nullptr, check_prepared);
    if (!check.ok()) return check.status();
    CompiledCandidate c = compiler.CompileOne(ref, small, ref.DefaultConfig(target, small));
    if (c.disposition != Disposition::kPassed) {
      return absl::FailedPreconditionError(absl::StrCat("reference solver ", std::string(ref.Name()),
                                                        " does not build: ", c.error));
    }
    Measurement meas = (*check)->Evaluate(c, 0);
    m.timings.device_wait_ms += (*check)->timings().device_wait_ms;
    if (meas.disposition != Disposition::kPassed) {
      return absl::FailedPreconditionError(absl::StrCat(
          "reference solver ", std::string(ref.Name()), " failed its batch-1 check against the CPU reference: ",
          std::string(DispositionName(meas.disposition)), ": ", meas.error));
    }
    info.check = meas.verify_summary;
  }
  // 2. The full-size reference output.
  CompiledCandidate c = compiler.CompileOne(ref, problem, ref.DefaultConfig(target, problem));
  if (c.disposition != Disposition::kPassed) {
    return absl::FailedPreconditionError(absl::StrCat("reference solver ", std::string(ref.Name()),
                                                      " does not build: ", c.error));
  }
  Impl::Section guarded(m);
  absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = m.Load(c);
  if (!inv.ok()) return inv.status();
  if (absl::Status s = m.RunVerified(**inv, m.expected); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("reference solver run: ", s.message()));
  }
  m.Drop(*std::move(inv));
  info.source = std::string(ref.Name());
  return absl::OkStatus();
}

void Evaluator::ChooseCompare(Impl& m, const Problem& problem, const EvaluatorOptions& options,
                              const backend::Backend* backend, const solver::Target* target,
                              ReferenceInfo& info) {
  info.compare = "host";
  const auto compare_start = std::chrono::steady_clock::now();
  const double wait_before = m.timings.device_wait_ms;
  if (m.is_gpu && options.device_compare && backend != nullptr && target != nullptr) {
    absl::StatusOr<backend::CodeObject> code = m.CompareKernel(*backend, target->arch);
    absl::Status why = code.status();
    if (code.ok()) {
      Impl::Section guarded(m);  // not held while the kernel builds: another process may time
      why = m.UseDeviceCompare(*code);
    }
    if (why.ok()) {
      info.compare = "device";
    } else {
      info.compare = absl::StrCat("host (", why.message(), ")");
      spdlog::warn("evaluator: {}: comparing on the host: {}", problem.Canonical(), why.ToString());
    }
  }
  // The comparison's kernel, upload and check.
  m.timings.setup_ms += MsSince(compare_start) - (m.timings.device_wait_ms - wait_before);
  // What lives on the device need not stay on the host too (an executor keeps many evaluators).
  if (m.comparer) std::vector<std::byte>().swap(m.expected);
  for (int i = 0; i < 3; ++i) {
    if (m.pristine[i].valid()) std::vector<std::byte>().swap(i == 0 ? m.host.x : i == 1 ? m.host.w : m.host.y);
  }
}

absl::StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(
    backend::Device& device, const Problem& problem, const EvaluatorOptions& options,
    const solver::SolverRegistry* registry, const backend::Backend* backend,
    const solver::Target* target, HostPreparation* prepared) {
  if (prepared != nullptr && !(prepared->problem == problem && prepared->seed == options.seed)) {
    prepared = nullptr;  // for something else: prepare here
  }
  if (absl::Status st = reference::CheckProblem(problem); !st.ok()) return st;
  const auto setup_start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>(device, problem, options);
  Impl& m = *impl;
  if (prepared != nullptr) {
    m.host.x = std::move(prepared->x);
    m.host.w = std::move(prepared->w);
    m.host.y = std::move(prepared->y);
  } else {
    m.host = MakeInputs(problem, options.seed);
  }
  {
    Impl::Section guarded(m);
    if (absl::Status st = AllocateBuffers(m, device, problem, options); !st.ok()) return st;
  }
  m.timings.setup_ms = MsSince(setup_start) - m.timings.device_wait_ms;

  ReferenceInfo info;
  const double wait_before_reference = m.timings.device_wait_ms;
  const auto t0 = std::chrono::steady_clock::now();
  const solver::Solver* ref_solver = nullptr;
  if (problem.Flops() > options.cpu_reference_max_flops && registry && backend && target) {
    ref_solver = FindReferenceSolver(*registry, *target, problem, options);
  }
  if (ref_solver == nullptr && prepared != nullptr && prepared->has_expected) {
    m.expected = std::move(prepared->expected);
    info.source = "cpu";
  } else if (ref_solver == nullptr) {
    absl::StatusOr<std::vector<std::byte>> ref = CpuReference(problem, m.host, options.reference_threads);
    if (!ref.ok()) return ref.status();
    m.expected = *std::move(ref);
    info.source = "cpu";
  } else if (absl::Status st = DeviceReference(m, device, problem, options, *ref_solver, *backend,
                                               *target, info,
                                               prepared != nullptr ? prepared->check.get() : nullptr);
             !st.ok()) {
    return st;
  }
  info.ms = MsSince(t0) - (m.timings.device_wait_ms - wait_before_reference);
  m.timings.reference_ms = info.ms;
  ChooseCompare(m, problem, options, backend, target, info);
  std::unique_ptr<Evaluator> ev(new Evaluator(std::move(impl), problem));
  ev->reference_info_ = std::move(info);
  return ev;
}

Measurement Evaluator::Evaluate(const CompiledCandidate& candidate, double best_so_far_ms) {
  Measurement out;
  Impl& m = *impl_;
  if (candidate.disposition != Disposition::kPassed) {
    out.disposition = candidate.disposition;
    out.error = candidate.error;
    return out;
  }
  if (m.lost) {
    out.disposition = Disposition::kSkipped;
    out.error = m.lost_reason;
    return out;
  }
  ++m.timings.candidates;
  // Held from the load to the end of the timing; the host comparison is waited for outside.
  Impl::Section guarded(m);
  absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = m.Load(candidate);
  if (!inv.ok()) {
    out.disposition = m.FailureDisposition(inv.status());
    out.error = absl::StrCat("load: ", inv.status().ToString());
    return out;
  }
  std::unique_ptr<solver::Invoker> invoker = *std::move(inv);

  // Ends the evaluation of this candidate without a time.
  auto fail = [&](Disposition disposition, std::string error) {
    out.samples_ms.clear();
    out.dropped_early = false;
    out.disposition = disposition;
    out.error = std::move(error);
    m.Drop(std::move(invoker));
    return out;
  };

  std::vector<std::byte> got;
  // The verdict: compared on the device before timing, or on a CPU thread during it.
  std::optional<absl::StatusOr<reference::VerifyReport>> compared;
  std::future<absl::StatusOr<reference::VerifyReport>> verdict;
  const auto verify_start = std::chrono::steady_clock::now();
  if (m.comparer) {
    compared = m.RunCompared(*invoker);
    if (!compared->ok() || !(*compared)->ok) {  // an incorrect candidate is not worth timing
      m.timings.verify_ms += MsSince(verify_start);
      if (!compared->ok()) {
        return fail(m.FailureDisposition(compared->status()),
                    absl::StrCat("run: ", compared->status().ToString()));
      }
      out.verify_summary = (*compared)->Summary();
      return fail(Disposition::kIncorrect, out.verify_summary);
    }
  } else {
    if (absl::Status st = m.RunVerified(*invoker, got); !st.ok()) {
      return fail(m.FailureDisposition(st), absl::StrCat("run: ", st.ToString()));
    }
    // The comparison runs on a CPU thread while the device times the candidate; an incorrect
    // candidate only wastes its timing.
    verdict = std::async(std::launch::async, [&] {
      return reference::VerifyConvOutput(problem_, problem_.direction, got.data(),
                                         m.expected.data(), false,
                                         m.options.has_tolerance ? &m.options.tolerance : nullptr);
    });
  }
  // An upper bound of one run (it includes the restore and the comparison or copy back):
  // sizes the watchdog's allowance for a timed batch.
  const double run_estimate_ms = MsSince(verify_start);
  m.timings.verify_ms += run_estimate_ms;

  const int reps = std::max(1, m.options.repetitions);
  const int early = std::clamp(m.options.early_repetitions, 1, reps);
  const auto launch = [&] { return invoker->Run(m.Buffers()); };
  absl::Status timing = absl::OkStatus();
  if (absl::StatusOr<std::vector<double>> t = m.TimeBatch(launch, early, run_estimate_ms); t.ok()) {
    out.samples_ms = *std::move(t);
    const double est = Median(out.samples_ms);
    double total = 0;
    for (double v : out.samples_ms) total += v;
    if (best_so_far_ms > 0 && est > m.options.early_drop_ratio * best_so_far_ms) {
      out.dropped_early = true;
    } else if (reps > early && total < m.options.max_timing_ms) {
      // At most what still fits in max_timing_ms at the early median (at least one more run).
      int more = reps - early;
      if (est > 0) {
        more = std::clamp(static_cast<int>(std::ceil((m.options.max_timing_ms - total) / est)), 1, more);
      }
      absl::StatusOr<std::vector<double>> rest = m.TimeBatch(launch, more, run_estimate_ms);
      if (rest.ok()) {
        out.samples_ms.insert(out.samples_ms.end(), rest->begin(), rest->end());
      } else {
        timing = rest.status();
      }
    }
  } else {
    timing = t.status();
  }

  guarded.Release();
  const auto wait_start = std::chrono::steady_clock::now();
  absl::StatusOr<reference::VerifyReport> report = compared ? *std::move(compared) : verdict.get();
  m.timings.verify_ms += MsSince(wait_start);
  if (!timing.ok()) {
    return fail(m.FailureDisposition(timing), absl::StrCat("timing: ", timing.ToString()));
  }
  if (!report.ok()) {
    return fail(Disposition::kIncorrect, absl::StrCat("verify: ", report.status().ToString()));
  }
  out.verify_summary = report->Summary();
  if (!report->ok) return fail(Disposition::kIncorrect, out.verify_summary);
  out.time_ms = Median(out.samples_ms);
  out.disposition = Disposition::kPassed;
  m.Drop(std::move(invoker));
  return out;
}

namespace {

// Retime's rounds: `repetitions`, or enough for retime_min_kernel_ms of the first round's
// fastest candidate (capped at retime_max_repetitions).
int RetimeRounds(const EvaluatorOptions& o, int repetitions, const std::vector<double>& first_round) {
  const double fastest = *std::min_element(first_round.begin(), first_round.end());
  if (o.retime_min_kernel_ms <= 0 || fastest <= 0) return repetitions;
  const double wanted = std::ceil(o.retime_min_kernel_ms / fastest);
  return std::max(repetitions, static_cast<int>(std::min<double>(wanted, o.retime_max_repetitions)));
}

}  // namespace

std::vector<Measurement> Evaluator::Retime(const std::vector<const CompiledCandidate*>& candidates,
                                           int repetitions) {
  Impl& m = *impl_;
  std::vector<Measurement> out(candidates.size());
  if (candidates.empty()) return out;
  Impl::Section guarded(m);
  std::vector<std::unique_ptr<solver::Invoker>> invokers(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (m.lost) {
      out[i].disposition = Disposition::kSkipped;
      out[i].error = m.lost_reason;
      continue;
    }
    absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = m.Load(*candidates[i]);
    if (!inv.ok()) {
      out[i].disposition = m.FailureDisposition(inv.status());
      out[i].error = absl::StrCat("load: ", inv.status().ToString());
      continue;
    }
    invokers[i] = *std::move(inv);
    out[i].disposition = Disposition::kPassed;
  }
  // One batch, round-robin over the loaded candidates: run k times candidate live[k % n].
  std::vector<size_t> live;
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (invokers[i] && out[i].disposition == Disposition::kPassed) live.push_back(i);
  }
  if (!live.empty()) {
    size_t next = 0;
    const auto launch = [&] { return invokers[live[next++ % live.size()]]->Run(m.Buffers()); };
    // A first round alone sizes the watchdog's allowance for the rest.
    absl::StatusOr<std::vector<double>> t = m.TimeBatch(launch, static_cast<int>(live.size()), 0);
    const int rounds = t.ok() ? RetimeRounds(m.options, repetitions, *t) : repetitions;
    if (t.ok() && rounds > 1) {
      const double slowest = *std::max_element(t->begin(), t->end());
      absl::StatusOr<std::vector<double>> rest = m.TimeBatch(
          launch, static_cast<int>(live.size()) * (rounds - 1), slowest);
      if (rest.ok()) {
        t->insert(t->end(), rest->begin(), rest->end());
      } else {
        t = rest.status();
      }
    }
    for (size_t k = 0; k < live.size(); ++k) {
      Measurement& o = out[live[k]];
      if (!t.ok()) {
        o.disposition = m.FailureDisposition(t.status());
        o.error = absl::StrCat("retime: ", t.status().ToString());
        continue;
      }
      for (size_t r = k; r < t->size(); r += live.size()) o.samples_ms.push_back((*t)[r]);
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (out[i].disposition == Disposition::kPassed) out[i].time_ms = Median(out[i].samples_ms);
    if (invokers[i]) m.Drop(std::move(invokers[i]));
  }
  return out;
}

}  // namespace tuna::search
