// `tuna driver [--backend B] conv|convfp16|convbfp16 <MIOpenDriver flags>`: MIOpenDriver's conv
// command over the runtime (tuner_core/runtime). The driver flags pass through CLI11 untouched
// (prefix_command) and are parsed by ParseDriverLine; the run flags MIOpenDriver has besides the
// problem are read by runtime/driver_run.h, which also runs each problem:
//   -V/--verify 1    verify against the CPU reference (MIOpenDriver's default: on)
//   -t/--time 1      print the kernel time      -i/--iter N   timed iterations (default 10)
//   -s/--search 1    Find with exhaustive search (tunes perf configs, writes the user perf db)
//   -S/--solution X  immediate mode with solver id or name X (-1 = Find, the default; 0 = the
//                    first solution of immediate mode: find db, else heuristics model, else fallback)
// Environment: the MIOPEN_* controls of runtime/find_controls.h, TUNA_BACKEND.
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "cli/command.h"
#include "cli/terminal_text.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/runtime/driver_run.h"
#include "tuner_core/runtime/find_controls.h"
#include "tuner_core/runtime/handle.h"

namespace tuna::cli {
namespace {

constexpr const char* kDriverHelp = R"(usage: tuna driver [--backend cpu|cuda|hip] conv|convfp16|convbfp16|convint8 FLAGS
MIOpenDriver's convolution flags (defaults as MIOpenDriver's):
  -n N  -c C  -H H  -W W  -k K  -y R  -x S     batch, channels, input size, filters, filter size
  -p -q  -u -v  -l -j                          padding, stride, dilation (height, width)
  -g G  -m conv|trans  -F 0|1|2|4              groups, mode, direction (0 all, 1 F, 2 B, 4 W)
  -z default|same|valid                        padding mode
  --in_layout --fil_layout --out_layout L      NCHW or NHWC (3D: --spatial_dim 3 with -! D and the
                                               other depth flags)
Run flags:
  -V 0|1  verify against the CPU reference (default 1)    -t 0|1  print the kernel time
  -i N    timed iterations (default 10)                    -s 0|1  Find with exhaustive search
  -S X    immediate mode with solver id or name X (-1: Find, the default; 0: immediate mode's
          first solution: find db, else the heuristics model, else the analytic fallback)
Environment: MIOPEN_FIND_MODE, MIOPEN_FIND_ENFORCE, MIOPEN_USER_DB_PATH, MIOPEN_SYSTEM_DB_PATH, TUNA_BACKEND.
)";

int RunDriver(const std::string& backend_flag, std::vector<std::string> args) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h" || a == "-?") {
      std::cout << kDriverHelp;
      return 0;
    }
  }
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
  runtime::DriverRunFlags flags;
  if (absl::Status st = runtime::ReadDriverRunFlags(args, flags); !st.ok()) {
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
  for (const Problem& p : *problems) {
    absl::StatusOr<runtime::DriverRunReport> run = runtime::RunDriverProblem(**h, p, flags, std::cout);
    if (!run.ok()) {
      std::cerr << "tuna driver: " << EscapeControlBytes(run.status().message()) << "\n";
      rc = std::max(rc, absl::IsNotFound(run.status()) ? 2 : 1);  // NotFound: unknown -S solution
    } else if (!run->verified) {
      rc = std::max(rc, 1);
    }
  }
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
  cmd->footer(std::string(kDriverHelp) +
              "example: tuna driver conv -n 1 -c 8 -H 16 -W 16 -k 8 -y 3 -x 3 -p 1 -q 1 -V 1 -t 1");
  cmd->callback([ctx, cmd, backend] {
    std::vector<std::string> args = cmd->remaining();
    *ctx.selected = [b = *backend, args] { return RunDriver(b, args); };
  });
}

}  // namespace tuna::cli
