// How many distinct kernel builds a network needs (issue #19, "compile once"): for every problem
// of a driver file and every applicable solver, the candidates a search may try (every valid
// config of a tunable solver, or --budget of them per problem, as a model/random search would
// try at most) and the distinct build keys (KernelIdentity: source, options, entries, arch,
// compiler version) they need. A solver whose kernels take problem sizes at run time needs one
// build per tile config for the whole network; one with sizes as -D options needs one per
// (config, problem). Compiles nothing: it asks each solver for its solution and hashes the
// build requests, so it runs in seconds for any arch the backend can name.
//
// With --model it counts what a default `tuna tune -f` builds ahead in its compile steps instead:
// per perf job, the model-guided search's blind proposals (search::ModelBlindProposals, after
// the default config; the generic solvers' budget cut where a specialised solver applies), taken
// from the strategy itself, so a change of the first sample's order shows in the count.
//
//   bazel run //bench/search:distinct_builds -- --target sm_90 \
//       -f $PWD/bench/kernels/data/resnet50_n32_fp16_nhwc.txt [--model [--threads 16]]
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "bench/search/space_count.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

struct SolverCount {
  uint64_t problems = 0;
  uint64_t candidates = 0;
  std::set<std::string> builds;
};

// What a default compile step builds for a perf job of `s` on `p`: the default config, then the
// model-guided strategy's proposals before its cost model can follow timings.
std::vector<solver::PerfConfig> BlindProposals(const solver::Solver& s, const solver::Target& t,
                                               const Problem& p, int threads) {
  if (!s.IsTunable() || s.Space(t, p).empty()) return {s.DefaultConfig(t, p)};
  search::StrategyInput in;
  in.space = s.Space(t, p);
  in.is_valid = [&](const solver::PerfConfig& c) { return s.IsValid(t, p, c).ok(); };
  search::TuneOptions o;
  o.budget = search::DefaultBudget(search::StrategyKind::kModel);
  in.budget = search::SearchBudget(o, solver::SolverRegistry::Builtin(), t, p, s);
  in.prior = {s.DefaultConfig(t, p)};
  const size_t batch = search::DefaultBatch(threads);
  uint64_t left = search::ModelBlindProposals(in.space.axes().size(), batch, t.IsGpu(), in.budget);
  std::unique_ptr<search::SearchStrategy> strategy = search::MakeStrategy(search::StrategyKind::kModel);
  if (!strategy->Start(in).ok()) return {};
  std::vector<solver::PerfConfig> out;
  while (left > 0) {
    std::vector<solver::PerfConfig> next = strategy->Next(std::min<uint64_t>(batch, left));
    if (next.empty()) break;
    left -= next.size();
    out.insert(out.end(), next.begin(), next.end());
  }
  return out;
}

void Count(std::vector<solver::PerfConfig> configs, const solver::Solver& s, const solver::Target& t,
           const Problem& p, uint64_t budget, SolverCount& out) {
  if (budget > 0 && configs.size() > budget) configs.resize(budget);
  ++out.problems;
  const std::set<std::string> keys = BuildKeys(s, t, p, configs, &out.candidates);
  out.builds.insert(keys.begin(), keys.end());
}


int Main(int argc, char** argv) {
  CLI::App app{"distinct kernel builds of a driver file"};
  std::string file, arch = "sm_90";
  uint64_t budget = 0;
  bool model = false;
  int threads = 16;
  app.add_flag("--model", model, "count a default tune's compile steps (model-guided blind proposals)");
  app.add_option("--threads", threads, "--model: the worker's compile threads (batch size)")->capture_default_str();
  app.add_option("-f,--file", file, "MIOpenDriver lines")->required();
  app.add_option("--target", arch, "arch (sm_90, gfx90a, cpu-avx2)")->capture_default_str();
  app.add_option("--budget", budget, "candidates per solver and problem (0 = every valid one)");
  CLI11_PARSE(app, argc, argv);
  absl::StatusOr<solver::Target> target = solver::TargetForArch(arch);
  absl::StatusOr<DriverFile> parsed = ParseDriverFile(file);
  if (!target.ok() || !parsed.ok()) {
    std::fprintf(stderr, "%s\n", (!target.ok() ? target.status() : parsed.status()).ToString().c_str());
    return 2;
  }
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  std::map<std::string, SolverCount> counts;
  uint64_t problems = 0;
  for (const DriverFileLine& line : parsed->lines) {
    for (const Problem& p : line.problems) {
      ++problems;
      std::vector<const solver::Solver*> serving;
      for (const solver::RegisteredSolver& r : registry.Applicable(*target, p)) {
        const auto dirs = r.solver->Directions();
        if (std::find(dirs.begin(), dirs.end(), p.direction) != dirs.end()) serving.push_back(r.solver);
      }
      for (const solver::Solver* s : serving) {
        Count(model ? BlindProposals(*s, *target, p, threads) : ValidConfigs(*s, *target, p), *s,
              *target, p, budget, counts[std::string(s->Name())]);
      }
    }
  }
  std::set<std::string> all;
  uint64_t candidates = 0;
  fmt::print("{} problems, target {}, {}\n", problems, arch,
             model ? fmt::format("a default tune's compile steps ({} compile threads)", threads)
                   : fmt::format("budget {}", budget == 0 ? "all" : std::to_string(budget)));
  fmt::print("{:<28} {:>8} {:>11} {:>9} {:>10}\n", "solver", "problems", "candidates", "builds", "cand/build");
  for (const auto& [name, c] : counts) {
    all.insert(c.builds.begin(), c.builds.end());
    candidates += c.candidates;
    fmt::print("{:<28} {:>8} {:>11} {:>9} {:>10.1f}\n", name, c.problems, c.candidates, c.builds.size(),
               c.builds.empty() ? 0.0 : static_cast<double>(c.candidates) / c.builds.size());
  }
  fmt::print("{:<28} {:>8} {:>11} {:>9} {:>10.1f}\n", "total", problems, candidates, all.size(),
             all.empty() ? 0.0 : static_cast<double>(candidates) / all.size());
  return 0;
}

}  // namespace
}  // namespace tuna::search

int main(int argc, char** argv) { return tuna::search::Main(argc, argv); }
