#include "tuner_core/search/measure/evaluator.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <limits>

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

HostTensors MakeInputs(const Problem& p, uint64_t seed) {
  const reference::ElementType t = reference::StorageType(p.data_type);
  HostTensors h;
  h.x = reference::RandomBuffer(t, p.XDesc().ElementCount(), seed * 4 + 1);
  h.w = reference::RandomBuffer(t, p.WDesc().ElementCount(), seed * 4 + 2);
  h.y = reference::RandomBuffer(t, p.YDesc().ElementCount(), seed * 4 + 3);
  // The INT8 forward output is int32: size the host buffer as the device one.
  if (p.direction == Direction::kForward && p.data_type == DataType::kInt8) {
    h.y.resize(BytesOf(p, p.YDesc(), true));
  }
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
      : device(d), problem(p), options(o), is_gpu(d.Info().warp_size > 1) {}
  ~Impl() {
    if (!watchdog.wedged()) return;
    // A hung launch may still be using the buffers: leak them (see watchdog.h).
    auto* leaked = new backend::DeviceBuffer[5];
    leaked[0] = std::move(x);
    leaked[1] = std::move(w);
    leaked[2] = std::move(y);
    leaked[3] = std::move(workspace);
    leaked[4] = std::move(flush);
  }

  backend::Device& device;
  Problem problem;
  EvaluatorOptions options;
  bool is_gpu;
  DeviceWatchdog watchdog;
  bool lost = false;       // device context lost: nothing more can run
  std::string lost_reason;
  backend::DeviceBuffer x, w, y, workspace, flush;
  HostTensors host;
  std::vector<std::byte> expected;

  const backend::DeviceBuffer& Out() {
    switch (problem.direction) {
      case Direction::kForward: return y;
      case Direction::kBackwardData: return x;
      case Direction::kBackwardWeights: return w;
    }
    return y;
  }
  solver::ConvBuffers Buffers() const { return {&x, &w, &y, workspace.valid() ? &workspace : nullptr}; }

  // Runs device work under the watchdog.
  absl::Status OnDevice(std::function<absl::Status()> task) {
    if (lost) return absl::FailedPreconditionError(lost_reason);
    absl::Status st = watchdog.Run(std::move(task), options.launch_timeout);
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

  // Device-side: inputs fresh, output poisoned (a kernel that writes nothing cannot pass).
  absl::Status PrepareRun() {
    const Direction d = problem.direction;
    if (d != Direction::kBackwardData) {
      if (absl::Status st = Upload(x, host.x); !st.ok()) return st;
    }
    if (d != Direction::kBackwardWeights) {
      if (absl::Status st = Upload(w, host.w); !st.ok()) return st;
    }
    if (d != Direction::kForward) {
      if (absl::Status st = Upload(y, host.y); !st.ok()) return st;
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

  // One timed launch (flush first on GPUs, outside the timed region).
  absl::StatusOr<double> TimeOnce(solver::Invoker& invoker) {
    double ms = 0;
    absl::Status st = OnDevice([&]() -> absl::Status {
      if (flush.valid()) {
        if (absl::Status f = device.Memset(flush, 0, flush.bytes()); !f.ok()) return f;
      }
      absl::StatusOr<std::vector<double>> t =
          device.TimeLaunches([&] { return invoker.Run(Buffers()); }, 1);
      if (!t.ok()) return t.status();
      ms = t->front();
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
    return ms;
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
    absl::Status st = OnDevice([&]() -> absl::Status {
      if (absl::Status ws = EnsureWorkspace(c.solution.workspace_bytes); !ws.ok()) return ws;
      absl::StatusOr<std::unique_ptr<solver::Invoker>> inv =
          solver::Invoker::Create(device, c.solution, c.code);
      if (!inv.ok()) return inv.status();
      invoker = *std::move(inv);
      return absl::OkStatus();
    });
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

Evaluator::Evaluator(std::unique_ptr<Impl> impl, Problem problem)
    : impl_(std::move(impl)), problem_(std::move(problem)) {}

Evaluator::~Evaluator() = default;

bool Evaluator::healthy() const { return !impl_->lost; }

absl::StatusOr<std::unique_ptr<Evaluator>> Evaluator::Create(
    backend::Device& device, const Problem& problem, const EvaluatorOptions& options,
    const solver::SolverRegistry* registry, const backend::Backend* backend,
    const solver::Target* target) {
  if (absl::Status st = reference::CheckProblem(problem); !st.ok()) return st;
  auto impl = std::make_unique<Impl>(device, problem, options);
  Impl& m = *impl;
  m.host = MakeInputs(problem, options.seed);

  absl::Status st = m.OnDevice([&]() -> absl::Status {
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
      if (absl::Status s = alloc(m.flush, bytes); !s.ok()) return s;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;

  ReferenceInfo info;
  const auto t0 = std::chrono::steady_clock::now();
  const solver::Solver* ref_solver = nullptr;
  if (problem.Flops() > options.cpu_reference_max_flops && registry && backend && target) {
    for (const solver::RegisteredSolver& r : registry->All()) {
      const std::string_view name = r.solver->Name();
      const bool wanted = options.reference_solver.empty()
                              ? name.substr(0, 19) == "ConvDirectNaiveConv"
                              : name == options.reference_solver;
      const auto dirs = r.solver->Directions();
      if (wanted && std::find(dirs.begin(), dirs.end(), problem.direction) != dirs.end() &&
          r.solver->IsApplicable(*target, problem).ok()) {
        ref_solver = r.solver;
        break;
      }
    }
    if (ref_solver == nullptr) {
      spdlog::warn("evaluator: no device reference solver for {}; using the CPU reference",
                   problem.Canonical());
    }
  }

  if (ref_solver == nullptr) {
    absl::StatusOr<std::vector<std::byte>> ref = CpuReference(problem, m.host, options.reference_threads);
    if (!ref.ok()) return ref.status();
    m.expected = *std::move(ref);
    info.source = "cpu";
  } else {
    Compiler compiler(*backend, *target, CompilerOptions{1});
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
      }(), nullptr, nullptr, nullptr);
      if (!check.ok()) return check.status();
      CompiledCandidate c = compiler.CompileOne(*ref_solver, small, ref_solver->DefaultConfig(*target, small));
      if (c.disposition != Disposition::kPassed) {
        return absl::FailedPreconditionError(absl::StrCat("reference solver ", std::string(ref_solver->Name()),
                                                          " does not build: ", c.error));
      }
      Measurement meas = (*check)->Evaluate(c, 0);
      if (meas.disposition != Disposition::kPassed) {
        return absl::FailedPreconditionError(absl::StrCat(
            "reference solver ", std::string(ref_solver->Name()), " failed its batch-1 check against the CPU reference: ",
            std::string(DispositionName(meas.disposition)), ": ", meas.error));
      }
      info.check = meas.verify_summary;
    }
    // 2. The full-size reference output.
    CompiledCandidate c = compiler.CompileOne(*ref_solver, problem, ref_solver->DefaultConfig(*target, problem));
    if (c.disposition != Disposition::kPassed) {
      return absl::FailedPreconditionError(absl::StrCat("reference solver ", std::string(ref_solver->Name()),
                                                        " does not build: ", c.error));
    }
    absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = m.Load(c);
    if (!inv.ok()) return inv.status();
    if (absl::Status s = m.RunVerified(**inv, m.expected); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat("reference solver run: ", s.message()));
    }
    m.Drop(*std::move(inv));
    info.source = std::string(ref_solver->Name());
  }
  info.ms = MsSince(t0);
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
  absl::StatusOr<std::unique_ptr<solver::Invoker>> inv = m.Load(candidate);
  if (!inv.ok()) {
    out.disposition = m.FailureDisposition(inv.status());
    out.error = absl::StrCat("load: ", inv.status().ToString());
    return out;
  }
  std::unique_ptr<solver::Invoker> invoker = *std::move(inv);

  std::vector<std::byte> got;
  if (absl::Status st = m.RunVerified(*invoker, got); !st.ok()) {
    out.disposition = m.FailureDisposition(st);
    out.error = absl::StrCat("run: ", st.ToString());
    m.Drop(std::move(invoker));
    return out;
  }
  absl::StatusOr<reference::VerifyReport> report = reference::VerifyConvOutput(
      problem_, problem_.direction, got.data(), m.expected.data(), false,
      m.options.has_tolerance ? &m.options.tolerance : nullptr);
  if (!report.ok()) {
    out.disposition = Disposition::kIncorrect;
    out.error = absl::StrCat("verify: ", report.status().ToString());
    m.Drop(std::move(invoker));
    return out;
  }
  out.verify_summary = report->Summary();
  if (!report->ok) {
    out.disposition = Disposition::kIncorrect;
    out.error = out.verify_summary;
    m.Drop(std::move(invoker));
    return out;
  }

  const int reps = std::max(1, m.options.repetitions);
  const int early = std::clamp(m.options.early_repetitions, 1, reps);
  double total = 0;
  for (int r = 0; r < reps; ++r) {
    if (r == early) {
      const double est = Median(out.samples_ms);
      if (best_so_far_ms > 0 && est > m.options.early_drop_ratio * best_so_far_ms) {
        out.dropped_early = true;
        break;
      }
    }
    if (r >= early && total >= m.options.max_timing_ms) break;
    absl::StatusOr<double> t = m.TimeOnce(*invoker);
    if (!t.ok()) {
      out.disposition = m.FailureDisposition(t.status());
      out.error = absl::StrCat("timing: ", t.status().ToString());
      m.Drop(std::move(invoker));
      return out;
    }
    out.samples_ms.push_back(*t);
    total += *t;
  }
  out.time_ms = Median(out.samples_ms);
  out.disposition = Disposition::kPassed;
  m.Drop(std::move(invoker));
  return out;
}

std::vector<Measurement> Evaluator::Retime(const std::vector<const CompiledCandidate*>& candidates,
                                           int repetitions) {
  Impl& m = *impl_;
  std::vector<Measurement> out(candidates.size());
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
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (!invokers[i] || out[i].disposition != Disposition::kPassed) continue;
      absl::StatusOr<double> t = m.TimeOnce(*invokers[i]);
      if (!t.ok()) {
        out[i].disposition = m.FailureDisposition(t.status());
        out[i].error = absl::StrCat("retime: ", t.status().ToString());
        continue;
      }
      out[i].samples_ms.push_back(*t);
    }
  }
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (out[i].disposition == Disposition::kPassed) out[i].time_ms = Median(out[i].samples_ms);
    if (invokers[i]) m.Drop(std::move(invokers[i]));
  }
  return out;
}

}  // namespace tuna::search
