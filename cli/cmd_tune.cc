// `tuna tune`: tune problems in this process, without a database (the in-process path;
// tuner_core/search/session.h does the work so other callers can run it as a library).
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "absl/strings/str_split.h"
#include "cli/command.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/report.h"
#include "tuner_core/search/session.h"
#include "tuner_core/solver/registry.h"

namespace tuna::cli {
namespace {

struct TuneArgs {
  std::string driver;
  std::string file;
  std::string backend = "cpu";
  int device = 0;
  std::string strategy = "exhaustive";
  uint64_t budget = 0;
  uint64_t seed = 1;
  std::string json;
  bool dry_run = false;
  std::string target;
  std::vector<std::string> solvers;
  int repetitions = 10;
  int threads = 0;
};

int RunTune(const TuneArgs& a) {
  std::vector<Problem> problems;
  if (a.driver.empty() == a.file.empty()) {
    std::fprintf(stderr, "tuna tune: give exactly one of --driver LINE or -f FILE\n");
    return 2;
  }
  if (!a.driver.empty()) {
    auto p = ParseDriverLine(a.driver);
    if (!p.ok()) {
      std::fprintf(stderr, "tuna tune: %s\n", std::string(p.status().message()).c_str());
      return 2;
    }
    problems = *std::move(p);
  } else {
    auto f = ParseDriverFile(a.file);
    if (!f.ok()) {
      std::fprintf(stderr, "tuna tune: %s\n", std::string(f.status().message()).c_str());
      return 2;
    }
    for (const auto& e : f->errors) {
      std::fprintf(stderr, "tuna tune: %s:%d: %s\n", a.file.c_str(), e.line_number, e.reason.c_str());
    }
    if (!f->errors.empty()) return 2;
    for (const auto& line : f->lines) problems.insert(problems.end(), line.problems.begin(), line.problems.end());
  }
  if (a.dry_run && a.target.empty()) {
    std::fprintf(stderr, "tuna tune: --dry-run needs --target ARCH (e.g. gfx90a, sm_90)\n");
    return 2;
  }
  auto strategy = search::ParseStrategyKind(a.strategy);
  if (!strategy.ok()) {
    std::fprintf(stderr, "tuna tune: %s\n", std::string(strategy.status().message()).c_str());
    return 2;
  }
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  for (const std::string& name : a.solvers) {
    if (registry.ByName(name) == nullptr) {
      std::fprintf(stderr, "tuna tune: unknown solver '%s' (see `tuna solvers`)\n", name.c_str());
      return 2;
    }
  }

  search::SessionOptions s;
  s.backend = a.backend;
  s.device = a.device;
  s.target_arch = a.target;
  s.tune.dry_run = a.dry_run;
  s.tune.strategy = *strategy;
  s.tune.budget = a.budget;
  s.tune.seed = a.seed;
  s.tune.solvers = a.solvers;
  s.tune.compiler.threads = a.threads;
  s.tune.evaluator.repetitions = std::max(1, a.repetitions);
  s.tune.evaluator.seed = a.seed;

  size_t current = 0;
  auto last = std::chrono::steady_clock::now() - std::chrono::seconds(10);
  s.tune.progress = [&](const search::TuneProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < std::chrono::seconds(1) && p.done != p.total) return;
    last = now;
    std::string best = p.best_ms > 0 ? fmt::format("best {:.4f} ms ({})", p.best_ms, p.best_solver) : "best -";
    std::fprintf(stderr, "[%zu/%zu] %s: %llu/%llu candidates, %s\n", current + 1, problems.size(),
                 p.solver.c_str(), static_cast<unsigned long long>(p.done),
                 static_cast<unsigned long long>(p.total), best.c_str());
  };
  int failed = 0;
  auto results = search::TuneProblems(problems, s, registry, [&](size_t i, const search::TuneResult& r) {
    std::fputs(search::FormatTuneResult(r).c_str(), stdout);
    std::fflush(stdout);
    if (!r.error.empty() || (!r.dry_run && r.best < 0)) ++failed;
    current = i + 1;
  });
  if (!results.ok()) {
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
  return failed == 0 ? 0 : 1;
}

}  // namespace

void AddTuneCommand(CLI::App& app, CommandContext ctx) {
  CLI::App* cmd = app.add_subcommand("tune", "tune problems on this machine (no database)");
  auto args = std::make_shared<TuneArgs>();
  cmd->add_option("--driver", args->driver, "one MIOpenDriver command line");
  cmd->add_option("-f,--file", args->file, "file of MIOpenDriver lines");
  cmd->add_option("--backend", args->backend, "cpu | cuda | hip")->check(CLI::IsMember({"cpu", "cuda", "hip"}));
  cmd->add_option("--device", args->device, "device index");
  cmd->add_option("--strategy", args->strategy, "exhaustive | random | model")
      ->check(CLI::IsMember({"exhaustive", "random", "model"}));
  cmd->add_option("--budget", args->budget, "candidates per tunable solver (0 = all valid)");
  cmd->add_option("--seed", args->seed, "strategy and data seed");
  cmd->add_option("--json", args->json, "write results as JSON to this file");
  cmd->add_flag("--dry-run", args->dry_run, "compile every candidate for --target; no device");
  cmd->add_option("--target", args->target, "arch for --dry-run (gfx90a, sm_90, cpu-avx2)");
  cmd->add_option("-s,--solvers", args->solvers, "only these solvers (comma-separated)")->delimiter(',');
  cmd->add_option("--repetitions", args->repetitions, "timed runs per candidate");
  cmd->add_option("--compile-threads", args->threads, "compile threads (0 = all cores)");
  cmd->callback([ctx, args] { *ctx.selected = [args] { return RunTune(*args); }; });
}

}  // namespace tuna::cli
