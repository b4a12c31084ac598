// Host cost of a search strategy (issue #19: the executor's time outside device work): for every
// problem of a driver file and every applicable tunable solver of a target, how long the
// strategy takes to start (Start: the space enumerated and filtered by the solver's IsValid, as
// Tuner::PlanAhead does) and to propose each batch (Next: for the model-guided strategy, the cost
// model's fit and the scoring of the unseen points) and take its observations (Observe), over a
// whole search of --budget candidates in batches of --batch. Observations are synthetic (a
// deterministic pseudo-time per config): the cost of the strategy does not depend on the values.
// Needs no device and compiles nothing.
//
//   bazel run -c opt //bench/search:strategy_cost -- --target sm_90 -f $PWD/examples/resnet50_n32.txt
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// A deterministic pseudo-time of a config (1 to 11 ms).
double PseudoMs(const solver::PerfConfig& c) {
  uint64_t h = 1469598103934665603ULL;
  for (int64_t v : c.values) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ULL;
  return 1.0 + static_cast<double>(h % 1000) / 100.0;
}

struct Cost {
  uint64_t searches = 0;
  uint64_t space = 0;     // largest space (points before validity)
  size_t axes = 0;
  uint64_t batches = 0;
  double start_ms = 0;    // summed
  double start_max = 0;
  double next_ms = 0;     // summed over batches
  double next_max = 0;    // the slowest batch
  double observe_ms = 0;
};

void Search(const solver::Solver& s, const solver::Target& t, const Problem& p, StrategyKind kind,
            uint64_t budget, size_t batch, Cost& cost) {
  const solver::SearchSpace space = s.Space(t, p);
  if (space.empty()) return;
  std::unique_ptr<SearchStrategy> strategy = MakeStrategy(kind);
  StrategyInput in;
  in.space = space;
  in.is_valid = [&](const solver::PerfConfig& c) { return s.IsValid(t, p, c).ok(); };
  in.budget = budget;
  in.prior = {s.DefaultConfig(t, p)};
  auto t0 = Clock::now();
  if (!strategy->Start(in).ok()) return;
  const double start = MsSince(t0);
  ++cost.searches;
  cost.space = std::max(cost.space, space.Size());
  cost.axes = space.axes().size();
  cost.start_ms += start;
  cost.start_max = std::max(cost.start_max, start);
  for (;;) {
    t0 = Clock::now();
    std::vector<solver::PerfConfig> next = strategy->Next(batch);
    const double ms = MsSince(t0);
    if (next.empty()) break;
    ++cost.batches;
    cost.next_ms += ms;
    cost.next_max = std::max(cost.next_max, ms);
    std::vector<Observation> obs;
    for (const solver::PerfConfig& c : next) obs.push_back({c, true, PseudoMs(c)});
    t0 = Clock::now();
    strategy->Observe(obs);
    cost.observe_ms += MsSince(t0);
  }
}

int Main(int argc, char** argv) {
  CLI::App app{"host cost of a search strategy over a driver file's problems"};
  std::string file, arch = "sm_90", strategy_name = "model";
  std::vector<std::string> only;
  uint64_t budget = 48;
  size_t batch = 16;
  app.add_option("-f,--file", file, "MIOpenDriver lines")->required();
  app.add_option("--target", arch, "arch (sm_90, gfx90a, cpu-avx2)")->capture_default_str();
  app.add_option("--strategy", strategy_name, "exhaustive | random | model")->capture_default_str();
  app.add_option("--budget", budget, "candidates per search")->capture_default_str();
  app.add_option("--batch", batch, "proposals per batch (the Tuner's: 2 x compile threads, <= 16)")
      ->capture_default_str();
  app.add_option("--solver", only, "only these solvers (repeatable)");
  CLI11_PARSE(app, argc, argv);
  absl::StatusOr<solver::Target> target = solver::TargetForArch(arch);
  absl::StatusOr<DriverFile> parsed = ParseDriverFile(file);
  absl::StatusOr<StrategyKind> kind = ParseStrategyKind(strategy_name);
  if (!target.ok() || !parsed.ok() || !kind.ok()) {
    const absl::Status st = !target.ok() ? target.status() : !parsed.ok() ? parsed.status() : kind.status();
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 2;
  }
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  std::map<std::string, Cost> costs;
  for (const DriverFileLine& line : parsed->lines) {
    for (const Problem& p : line.problems) {
      for (const solver::RegisteredSolver& r : registry.Applicable(*target, p)) {
        const std::string name(r.solver->Name());
        const auto dirs = r.solver->Directions();
        if (!r.solver->IsTunable() || std::find(dirs.begin(), dirs.end(), p.direction) == dirs.end() ||
            (!only.empty() && std::find(only.begin(), only.end(), name) == only.end())) {
          continue;
        }
        Search(*r.solver, *target, p, *kind, budget, batch, costs[name]);
      }
    }
  }
  fmt::print("target {}, strategy {}, budget {}, batch {}\n", arch, strategy_name, budget, batch);
  fmt::print("{:<24} {:>8} {:>5} {:>12} {:>10} {:>10} {:>8} {:>10} {:>10} {:>10}\n", "solver", "searches",
             "axes", "max space", "start ms", "start max", "batches", "next ms", "next max", "observe");
  Cost all;
  for (const auto& [name, c] : costs) {
    fmt::print("{:<24} {:>8} {:>5} {:>12} {:>10.1f} {:>10.1f} {:>8} {:>10.1f} {:>10.1f} {:>10.2f}\n", name,
               c.searches, c.axes, c.space, c.start_ms / std::max<uint64_t>(1, c.searches), c.start_max,
               c.batches, c.next_ms / std::max<uint64_t>(1, c.batches), c.next_max,
               c.observe_ms / std::max<uint64_t>(1, c.batches));
    all.start_ms += c.start_ms;
    all.next_ms += c.next_ms;
    all.observe_ms += c.observe_ms;
  }
  fmt::print("total: start {:.1f} s, next {:.1f} s, observe {:.2f} s (per-search means above; "
             "per-batch means for next and observe)\n",
             all.start_ms / 1e3, all.next_ms / 1e3, all.observe_ms / 1e3);
  return 0;
}

}  // namespace
}  // namespace tuna::search

int main(int argc, char** argv) { return tuna::search::Main(argc, argv); }
