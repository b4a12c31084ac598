#include "tuner_core/runtime/driver_run.h"

#include <cmath>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/transpose.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/runtime/convolution.h"
#include "tuner_core/runtime/find_controls.h"
#include "tuner_core/runtime/driver_text.h"
#include "tuner_core/solver/solution.h"

namespace tuna::runtime {
namespace {

absl::Status WithStep(const char* step, const absl::Status& st) {
  return absl::Status(st.code(), absl::StrCat(step, ": ", st.message()));
}

// -S 0: immediate mode's first solution (GetSolution: the find db, else the heuristics picker,
// else the analytic fallback), compiled, with where the solver and its params came from.
absl::StatusOr<uint64_t> ChooseFirstImmediate(Handle& h, const Problem& p, std::ostream& out) {
  absl::StatusOr<std::vector<ConvSolution>> sols = GetSolution(h, p, 1);
  if (!sols.ok()) return WithStep("immediate", sols.status());
  const ConvSolution& s = sols->front();
  if (absl::Status st = CompileSolution(h, p, s.solver_id); !st.ok()) return WithStep("compile", st);
  absl::StatusOr<const PreparedInvoker*> inv = PrepareSolution(h, p, s.solver_id);
  if (!inv.ok()) return inv.status();
  const bool miss = s.source == ChoiceSource::kHeuristics || s.source == ChoiceSource::kFallback;
  const std::string params = (*inv)->params.empty()
                                 ? std::string()
                                 : fmt::format(", params '{}' from {}", (*inv)->params,
                                               (*inv)->params_source);
  out << fmt::format("solver: {} (id {}) from immediate mode (-S 0){}: solver from {}{}{}, workspace {} bytes\n",
                     s.solver, s.solver_id, miss ? ", find-db miss" : "", ChoiceSourceName(s.source),
                     s.note.empty() ? "" : fmt::format(" ({})", s.note), params,
                     (*inv)->solution.workspace_bytes);
  return s.solver_id;
}

// -S X: the solver X, compiled, in immediate mode.
absl::StatusOr<uint64_t> ChooseImmediate(Handle& h, const Problem& p, const std::string& solution,
                                         std::ostream& out) {
  if (solution == "0") return ChooseFirstImmediate(h, p, out);
  uint64_t id = 0;
  const solver::RegisteredSolver* r =
      absl::SimpleAtoi(solution, &id) ? h.registry().ById(id) : h.registry().ByName(solution);
  if (r == nullptr) return absl::NotFoundError(absl::StrCat("unknown solution '", solution, "'"));
  absl::StatusOr<uint64_t> ws = GetSolutionWorkspaceSize(h, p, r->id);
  if (!ws.ok()) return ws.status();
  absl::StatusOr<const PreparedInvoker*> inv = PrepareSolution(h, p, r->id);
  if (!inv.ok()) return inv.status();
  const std::string params = (*inv)->params.empty()
                                 ? std::string()
                                 : fmt::format(", params '{}' from {}", (*inv)->params, (*inv)->params_source);
  out << fmt::format("solver: {} (id {}) from immediate mode (-S){}, workspace {} bytes\n",
                     r->solver->Name(), r->id, params, *ws);
  return r->id;
}

// Find (exhaustive with -s 1): the fastest solution, and where its choice and params came from.
absl::StatusOr<uint64_t> ChooseByFind(Handle& h, const Problem& p, bool search, std::ostream& out) {
  FindOptions fo;
  fo.exhaustive_search = search;
  absl::StatusOr<FindResult> found = FindConvolution(h, p, fo);
  if (!found.ok()) return WithStep("find", found.status());
  const ConvSolution& best = found->solutions.front();
  std::string from(ChoiceSourceName(best.source));
  if (best.params_source == ChoiceSource::kSearch) {
    from += ", params from search";
  } else if (!best.params.empty()) {
    from += fmt::format(", params from {}", ChoiceSourceName(best.params_source));
  }
  out << fmt::format("solver: {} (id {}) from {} (find mode {}, enforce {}), {} ms, params '{}'\n",
                     best.solver, best.solver_id, from, FindModeName(found->trace.effective_mode),
                     FindEnforceName(h.config().find_enforce), best.time_ms, best.params);
  for (size_t i = 1; i < found->solutions.size(); ++i) {
    const auto& s = found->solutions[i];
    out << fmt::format("  also: {} (id {}) {} ms\n", s.solver, s.solver_id, s.time_ms);
  }
  return best.solver_id;
}

// The problem's tensors on the host and the device: random inputs, the written tensor poisoned
// (0xff bytes) so an unwritten element fails verification; the solution's workspace.
struct DriverBuffers {
  int written = 0;  // 0 x, 1 w, 2 y
  std::vector<std::byte> host[3];
  backend::DeviceBuffer device[3];
  backend::DeviceBuffer workspace;
  solver::ConvBuffers Conv() const {
    return {&device[0], &device[1], &device[2], workspace.valid() ? &workspace : nullptr};
  }
};

absl::Status PrepareBuffers(backend::Device& dev, const Problem& p, uint64_t workspace_bytes,
                            DriverBuffers& b) {
  const reference::ElementType in_t = reference::StorageType(p.data_type);
  const reference::ElementType out_t = reference::OutputType(p, p.direction);
  b.written = static_cast<int>(solver::WrittenRole(p.direction));
  const int64_t counts[3] = {p.XDesc().ElementCount(), p.WDesc().ElementCount(),
                             p.YDesc().ElementCount()};
  for (int i = 0; i < 3; ++i) {
    const reference::ElementType t = i == b.written ? out_t : in_t;
    b.host[i] = i == b.written
                    ? std::vector<std::byte>(counts[i] * reference::ElementSize(t), std::byte{0xff})
                    : reference::RandomBuffer(t, counts[i], 11 + i);
    absl::StatusOr<backend::DeviceBuffer> buf = dev.Alloc(b.host[i].size());
    if (!buf.ok()) return buf.status();
    b.device[i] = *std::move(buf);
    if (absl::Status st = dev.CopyToDevice(b.device[i], b.host[i].data(), b.host[i].size());
        !st.ok()) {
      return st;
    }
  }
  if (workspace_bytes > 0) {
    absl::StatusOr<backend::DeviceBuffer> ws = dev.Alloc(workspace_bytes);
    if (!ws.ok()) return ws.status();
    b.workspace = *std::move(ws);
  }
  return absl::OkStatus();
}

// -t 1: `iter` timed runs of `p`: MIOpenDriver's "GPU Kernel Time ... Elapsed" and "stats:" lines
// of the problem the command line `named` (a transposed one: p is its convolution), then tuna's
// own line (median, mean, GFLOP/s of the direct convolution).
absl::Status PrintTime(Handle& h, const Problem& named, const Problem& p, uint64_t solver_id,
                       const DriverBuffers& b, int iter, std::ostream& out) {
  absl::StatusOr<std::vector<double>> ms = TimeConvolution(h, p, solver_id, b.Conv(), iter);
  if (!ms.ok()) return WithStep("time", ms.status());
  out << MiopenTimeLines(named, MiopenAverageTime(*ms));
  std::vector<double> v = *ms;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const double median = v[v.size() / 2];
  out << fmt::format("Kernel time: {:.4f} ms (median of {}), mean {:.4f} ms, {:.2f} GFLOP/s\n",
                     median, v.size(), sum / v.size(), p.Flops() / (median * 1e6));
  return absl::OkStatus();
}

// -V 1: the device's output of `p` against the CPU reference of the same inputs: MIOpenDriver's
// "... Verifies OK on CPU reference (err < tol)" / "... FAILED: ..." line (rms_range against the
// RMS bound) named for the command line's problem `named`, then tuna's summary of every metric.
absl::StatusOr<bool> Verify(const Problem& named, const Problem& p, const DriverBuffers& b,
                            const std::vector<std::byte>& got, std::ostream& out) {
  std::vector<std::byte> expected(got.size());
  reference::ConvTensors t{b.host[0].data(), b.host[1].data(), b.host[2].data(), expected.data()};
  if (absl::Status st = reference::RunConv(p, t); !st.ok()) return WithStep("reference", st);
  absl::StatusOr<reference::VerifyReport> rep =
      reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
  if (!rep.ok()) return WithStep("verify", rep.status());
  const reference::Tolerance tol = reference::DefaultTolerance(p.data_type);
  const double bound = std::max(
      tol.rms, tol.rms_per_sqrt_l * std::sqrt(static_cast<double>(rep->reduction_length)));
  out << MiopenVerifyLine(named, rep->ok, rep->rms_error, bound, rep->mismatches);
  out << (rep->ok ? "Verifies OK on CPU reference: " : "Verification FAILED: ") << rep->Summary()
      << "\n";
  return rep->ok;
}

}  // namespace

absl::Status ReadDriverRunFlags(const std::vector<std::string>& args, DriverRunFlags& f) {
  for (size_t i = 1; i + 1 < args.size(); ++i) {
    const std::string& a = args[i];
    const std::string& v = args[i + 1];
    int* target = nullptr;
    if (a == "-V" || a == "--verify") target = &f.verify;
    if (a == "-t" || a == "--time") target = &f.time;
    if (a == "-i" || a == "--iter") target = &f.iter;
    if (a == "-s" || a == "--search") target = &f.search;
    if (a == "-S" || a == "--solution") {
      f.solution = v;
      ++i;
      continue;
    }
    if (target != nullptr) {
      if (!absl::SimpleAtoi(v, target)) {
        return absl::InvalidArgumentError(fmt::format("{} {}: not a number", a, v));
      }
      ++i;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DriverRunReport> RunDriverProblem(Handle& h, const Problem& given,
                                                 const DriverRunFlags& f, std::ostream& out) {
  out << "problem: " << ToDriverLine(given) << "\n";
  absl::StatusOr<Problem> conv = AsConvolution(given);
  if (!conv.ok()) return conv.status();
  const Problem& p = *conv;
  if (given.mode == ConvMode::kTrans) out << "runs as: " << ToDriverLine(p) << " (as MIOpen runs it)\n";
  const bool immediate = f.solution != "-1";
  absl::StatusOr<uint64_t> solver_id =
      immediate ? ChooseImmediate(h, p, f.solution, out) : ChooseByFind(h, p, f.search != 0, out);
  if (!solver_id.ok()) return solver_id.status();
  absl::StatusOr<const PreparedInvoker*> prepared = PrepareSolution(h, p, *solver_id);
  if (!prepared.ok()) return prepared.status();

  backend::Device& dev = h.device();
  DriverBuffers b;
  if (absl::Status st = PrepareBuffers(dev, p, (*prepared)->solution.workspace_bytes, b);
      !st.ok()) {
    return st;
  }
  absl::Status run = immediate ? Immediate(h, p, *solver_id, b.Conv())
                               : RunConvolution(h, p, *solver_id, b.Conv());
  if (run.ok()) run = dev.Synchronize();
  if (!run.ok()) return WithStep("run", run);
  std::vector<std::byte> got(b.host[b.written].size());
  if (absl::Status st = dev.CopyToHost(got.data(), b.device[b.written], got.size()); !st.ok()) {
    return st;
  }
  if (f.time != 0) {
    if (absl::Status st = PrintTime(h, given, p, *solver_id, b, f.iter, out); !st.ok()) return st;
  }
  DriverRunReport report;
  if (f.verify != 0) {
    absl::StatusOr<bool> ok = Verify(given, p, b, got, out);
    if (!ok.ok()) return ok.status();
    report.verified = *ok;
  }
  return report;
}

}  // namespace tuna::runtime
