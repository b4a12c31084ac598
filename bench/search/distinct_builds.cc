// How many distinct kernel builds a network needs (issue #19, "compile once"): for every problem
// of a driver file and every applicable solver, the candidates a search may try (every valid
// config of a tunable solver, or --budget of them per problem, as a model/random search would
// try at most) and the distinct build keys (KernelIdentity: source, options, entries, arch,
// compiler version) they need. A solver whose kernels take problem sizes at run time needs one
// build per tile config for the whole network; one with sizes as -D options needs one per
// (config, problem). Compiles nothing: it asks each solver for its solution and hashes the
// build requests, so it runs in seconds for any arch the backend can name.
//
//   bazel run //bench/search:distinct_builds -- --target sm_90 \
//       -f $PWD/bench/kernels/data/resnet50_n32_fp16_nhwc.txt
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "bench/search/space_count.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

struct SolverCount {
  uint64_t problems = 0;
  uint64_t candidates = 0;
  std::set<std::string> builds;
};

void Count(const solver::Solver& s, const solver::Target& t, const Problem& p, uint64_t budget, SolverCount& out) {
  std::vector<solver::PerfConfig> configs = ValidConfigs(s, t, p);
  if (budget > 0 && configs.size() > budget) configs.resize(budget);
  ++out.problems;
  const std::set<std::string> keys = BuildKeys(s, t, p, configs, &out.candidates);
  out.builds.insert(keys.begin(), keys.end());
}

int Main(int argc, char** argv) {
  CLI::App app{"distinct kernel builds of a driver file"};
  std::string file, arch = "sm_90";
  uint64_t budget = 0;
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
      for (const solver::RegisteredSolver& r : registry.Applicable(*target, p)) {
        const auto dirs = r.solver->Directions();
        if (std::find(dirs.begin(), dirs.end(), p.direction) == dirs.end()) continue;
        Count(*r.solver, *target, p, budget, counts[std::string(r.solver->Name())]);
      }
    }
  }
  std::set<std::string> all;
  uint64_t candidates = 0;
  fmt::print("{} problems, target {}, budget {}\n", problems, arch, budget == 0 ? "all" : std::to_string(budget));
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
