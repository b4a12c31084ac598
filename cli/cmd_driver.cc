// `tuna driver [--backend B] conv|convfp16|convbfp16 <MIOpenDriver flags>`: MIOpenDriver's conv
// command over the runtime (tuner_core/runtime). The driver flags pass through CLI11 untouched
// (prefix_command) and are parsed by ParseDriverLine; the run flags MIOpenDriver has besides the
// problem are read here:
//   -V/--verify 1    verify against the CPU reference (MIOpenDriver's default: on)
//   -t/--time 1      print the kernel time      -i/--iter N   timed iterations (default 10)
//   -s/--search 1    Find with exhaustive search (tunes perf configs, writes the user perf db)
//   -S/--solution X  immediate mode with solver id or name X (-1 = Find, the default)
// Environment: the MIOPEN_* controls of runtime/find_controls.h, TUNA_BACKEND.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/terminal_text.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/reference/element.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/reference/verify.h"
#include "tuner_core/runtime/convolution.h"
#include "tuner_core/runtime/find_controls.h"
#include "tuner_core/runtime/handle.h"

namespace tuna::cli {
namespace {

struct RunFlags {
  int verify = 1, time = 0, iter = 10, search = 0;
  std::string solution = "-1";
};

// Reads the run flags MIOpenDriver takes besides the problem (ParseDriverLine ignores them).
absl::Status ReadRunFlags(const std::vector<std::string>& args, RunFlags& f) {
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
      if (!absl::SimpleAtoi(v, target)) return absl::InvalidArgumentError(fmt::format("{} {}: not a number", a, v));
      ++i;
    }
  }
  return absl::OkStatus();
}

int RunOne(runtime::Handle& h, const Problem& p, const RunFlags& f) {
  std::cout << "problem: " << ToDriverLine(p) << "\n";
  uint64_t solver_id = 0;
  if (f.solution != "-1") {
    const solver::RegisteredSolver* r = nullptr;
    uint64_t id = 0;
    r = absl::SimpleAtoi(f.solution, &id) ? h.registry().ById(id) : h.registry().ByName(f.solution);
    if (r == nullptr) {
      std::cerr << "tuna driver: unknown solution '" << f.solution << "'\n";
      return 2;
    }
    solver_id = r->id;
    absl::StatusOr<uint64_t> ws = runtime::GetSolutionWorkspaceSize(h, p, solver_id);
    if (!ws.ok()) {
      std::cerr << "tuna driver: " << EscapeControlBytes(ws.status().message()) << "\n";
      return 1;
    }
    if (absl::Status st = runtime::CompileSolution(h, p, solver_id); !st.ok()) {
      std::cerr << "tuna driver: " << st.ToString() << "\n";
      return 1;
    }
    std::cout << fmt::format("solver: {} (id {}) from immediate mode (-S), workspace {} bytes\n",
                             r->solver->Name(), r->id, *ws);
  } else {
    runtime::FindOptions fo;
    fo.exhaustive_search = f.search != 0;
    absl::StatusOr<runtime::FindResult> found = runtime::FindConvolution(h, p, fo);
    if (!found.ok()) {
      std::cerr << "tuna driver: find: " << found.status().ToString() << "\n";
      return 1;
    }
    const runtime::ConvSolution& best = found->solutions.front();
    solver_id = best.solver_id;
    std::string from(runtime::ChoiceSourceName(best.source));
    if (best.params_source == runtime::ChoiceSource::kSearch) from += ", params from search";
    else if (!best.params.empty()) from += fmt::format(", params from {}", runtime::ChoiceSourceName(best.params_source));
    std::cout << fmt::format("solver: {} (id {}) from {} (find mode {}, enforce {}), {} ms, params '{}'\n",
                             best.solver, best.solver_id, from,
                             runtime::FindModeName(found->trace.effective_mode),
                             runtime::FindEnforceName(h.config().find_enforce), best.time_ms, best.params);
    for (size_t i = 1; i < found->solutions.size(); ++i) {
      const auto& s = found->solutions[i];
      std::cout << fmt::format("  also: {} (id {}) {} ms\n", s.solver, s.solver_id, s.time_ms);
    }
  }
  absl::StatusOr<const runtime::PreparedInvoker*> prepared = runtime::PrepareSolution(h, p, solver_id);
  if (!prepared.ok()) {
    std::cerr << "tuna driver: " << prepared.status().ToString() << "\n";
    return 1;
  }

  // Buffers: random inputs, the written tensor poisoned so an unwritten element fails -V.
  backend::Device& dev = h.device();
  const reference::ElementType in_t = reference::StorageType(p.data_type);
  const reference::ElementType out_t = reference::OutputType(p, p.direction);
  const int written = p.direction == Direction::kForward ? 2 : p.direction == Direction::kBackwardData ? 0 : 1;
  const int64_t counts[3] = {p.XDesc().ElementCount(), p.WDesc().ElementCount(), p.YDesc().ElementCount()};
  std::vector<std::byte> host[3];
  backend::DeviceBuffer buf[3];
  for (int i = 0; i < 3; ++i) {
    const reference::ElementType t = i == written ? out_t : in_t;
    host[i] = i == written ? std::vector<std::byte>(counts[i] * reference::ElementSize(t), std::byte{0xff})
                           : reference::RandomBuffer(t, counts[i], 11 + i);
    absl::StatusOr<backend::DeviceBuffer> b = dev.Alloc(host[i].size());
    if (!b.ok()) {
      std::cerr << "tuna driver: " << b.status().ToString() << "\n";
      return 1;
    }
    buf[i] = *std::move(b);
    if (absl::Status st = dev.CopyToDevice(buf[i], host[i].data(), host[i].size()); !st.ok()) {
      std::cerr << "tuna driver: " << st.ToString() << "\n";
      return 1;
    }
  }
  backend::DeviceBuffer ws;
  if (uint64_t bytes = (*prepared)->solution.workspace_bytes; bytes > 0) {
    absl::StatusOr<backend::DeviceBuffer> b = dev.Alloc(bytes);
    if (!b.ok()) {
      std::cerr << "tuna driver: " << b.status().ToString() << "\n";
      return 1;
    }
    ws = *std::move(b);
  }
  const solver::ConvBuffers buffers{&buf[0], &buf[1], &buf[2], ws.valid() ? &ws : nullptr};
  const bool immediate = f.solution != "-1";
  absl::Status run = immediate ? runtime::Immediate(h, p, solver_id, buffers)
                               : runtime::RunConvolution(h, p, solver_id, buffers);
  if (run.ok()) run = dev.Synchronize();
  if (!run.ok()) {
    std::cerr << "tuna driver: run: " << run.ToString() << "\n";
    return 1;
  }
  std::vector<std::byte> got(host[written].size());
  if (absl::Status st = dev.CopyToHost(got.data(), buf[written], got.size()); !st.ok()) {
    std::cerr << "tuna driver: " << st.ToString() << "\n";
    return 1;
  }
  if (f.time != 0) {
    absl::StatusOr<std::vector<double>> ms = runtime::TimeConvolution(h, p, solver_id, buffers, f.iter);
    if (!ms.ok()) {
      std::cerr << "tuna driver: time: " << ms.status().ToString() << "\n";
      return 1;
    }
    std::vector<double> v = *ms;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    std::cout << fmt::format("Kernel time: {:.4f} ms (median of {}), mean {:.4f} ms, {:.2f} GFLOP/s\n",
                             v[v.size() / 2], v.size(), sum / v.size(), p.Flops() / (v[v.size() / 2] * 1e6));
  }
  if (f.verify != 0) {
    std::vector<std::byte> expected(got.size());
    reference::ConvTensors t{host[0].data(), host[1].data(), host[2].data(), expected.data()};
    if (absl::Status st = reference::RunConv(p, t); !st.ok()) {
      std::cerr << "tuna driver: reference: " << st.ToString() << "\n";
      return 1;
    }
    absl::StatusOr<reference::VerifyReport> rep = reference::VerifyConvOutput(p, p.direction, got.data(), expected.data());
    if (!rep.ok()) {
      std::cerr << "tuna driver: verify: " << rep.status().ToString() << "\n";
      return 1;
    }
    std::cout << (rep->ok ? "Verifies OK on CPU reference: " : "Verification FAILED: ") << rep->Summary() << "\n";
    if (!rep->ok) return 1;
  }
  return 0;
}

int RunDriver(const std::string& backend_flag, std::vector<std::string> args) {
  if (args.empty()) {
    std::cerr << "tuna driver: expected conv|convfp16|convbfp16|convint8 and MIOpenDriver flags\n";
    return 2;
  }
  absl::StatusOr<runtime::RuntimeConfig> config = runtime::FromEnvironment();
  if (!config.ok()) {
    std::cerr << "tuna driver: " << EscapeControlBytes(config.status().message()) << "\n";
    return 2;
  }
  if (!backend_flag.empty()) config->backend = backend_flag;
  RunFlags flags;
  if (absl::Status st = ReadRunFlags(args, flags); !st.ok()) {
    std::cerr << "tuna driver: " << EscapeControlBytes(st.message()) << "\n";
    return 2;
  }
  absl::StatusOr<std::vector<Problem>> problems = ParseDriverLine(absl::StrJoin(args, " "));
  if (!problems.ok()) {
    std::cerr << "tuna driver: " << EscapeControlBytes(problems.status().message()) << "\n";
    return 2;
  }
  runtime::HandleOptions ho;
  ho.config = *config;
  absl::StatusOr<std::unique_ptr<runtime::Handle>> h = runtime::Handle::Create(std::move(ho));
  if (!h.ok()) {
    std::cerr << "tuna driver: " << h.status().ToString() << "\n";
    return 1;
  }
  std::cout << fmt::format("backend: {} ({}), db basename {}\n", (*h)->backend().Name(), (*h)->target().arch,
                           (*h)->db().files().basename);
  int rc = 0;
  for (const Problem& p : *problems) rc = std::max(rc, RunOne(**h, p, flags));
  const runtime::KernelCacheStats& ks = (*h)->kernels().stats();
  std::cout << fmt::format("kernels: {} compiled, {} from cache, {} from kdb\n", ks.compilations, ks.cache_hits,
                           ks.kdb_hits);
  return rc;
}

}  // namespace

void AddDriverCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("driver", "run a convolution through the runtime like MIOpenDriver");
  auto backend = std::make_shared<std::string>();
  cmd->add_option("--backend", *backend, "cpu, cuda or hip (default: $TUNA_BACKEND, else the best usable)");
  cmd->prefix_command();
  cmd->footer("example: tuna driver conv -n 1 -c 8 -H 16 -W 16 -k 8 -y 3 -x 3 -p 1 -q 1 -V 1 -t 1");
  cmd->callback([ctx, cmd, backend] {
    std::vector<std::string> args = cmd->remaining();
    *ctx.selected = [b = *backend, args] { return RunDriver(b, args); };
  });
}

}  // namespace tuna::cli
