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
// With --compile it also compiles every distinct build once with this host's compiler for the
// target (NVRTC for sm_*, hiprtc for gfx*, the C++ compiler for cpu-*) on N threads, and
// prints each solver's compile seconds (the sum of its builds' walls), its slowest build and the
// --slowest N slowest builds with their options: the compile cost of a cold run, measured
// without a GPU.
//
//   bazel run //bench/search:distinct_builds -- --target sm_90 \
//       -f $PWD/bench/kernels/data/resnet50_n32_fp16_nhwc.txt [--model [--threads 16]] [--compile 16]
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_join.h"
#include "fmt/format.h"
#include "bench/search/space_count.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

struct SolverCount {
  uint64_t problems = 0;
  uint64_t candidates = 0;
  std::map<std::string, backend::CompileRequest> builds;
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
  o.patience = search::DefaultPatience(search::StrategyKind::kModel);
  o.whole_space = search::kWholeSpace;
  in.budget = search::LimitsOf(o, solver::SolverRegistry::Builtin(), t, p, s).budget;
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
  out.builds.merge(BuildRequests(s, t, p, configs, &out.candidates));
}

// One compile of --compile: its wall, the solver it is counted under, its options.
struct TimedBuild {
  double seconds;
  std::string solver, options;
  bool ok;
};

// Compiles every solver's builds once (a build two solvers share, once, under the first) on
// `threads` threads into `timed`; returns the wall of the whole, or the backend's error.
absl::StatusOr<double> CompileAll(const solver::Target& t, int threads,
                                  const std::map<std::string, SolverCount>& counts, std::vector<TimedBuild>& timed) {
  absl::StatusOr<std::unique_ptr<backend::Backend>> be =
      backend::OpenBackend(t.backend, backend::DetectOptions::FromEnv());
  if (!be.ok()) return be.status();
  if (absl::Status st = (*be)->CompilerStatus(); !st.ok()) return st;
  std::vector<std::pair<const backend::CompileRequest*, const std::string*>> items;  // (build, solver)
  std::set<std::string> seen;
  for (const auto& [name, c] : counts) {
    for (const auto& [key, req] : c.builds) {
      if (seen.insert(key).second) items.emplace_back(&req, &name);
    }
  }
  std::atomic<size_t> next{0};
  std::mutex mu;
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto work = [&] {
    for (size_t i = next++; i < items.size(); i = next++) {
      const auto [req, solver] = items[i];
      const Clock::time_point t0 = Clock::now();
      const bool ok = (*be)->Compile(*req).ok();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(mu);
      timed.push_back({s, *solver, req->source_name + " " + absl::StrJoin(req->options, " "), ok});
    }
  };
  std::vector<std::thread> pool;
  for (int i = 0; i < std::max(1, threads); ++i) pool.emplace_back(work);
  for (std::thread& th : pool) th.join();
  return std::chrono::duration<double>(Clock::now() - start).count();
}


// Compile seconds (the sum of walls), the slowest build and the failures of some builds.
struct Compiled {
  double seconds = 0, slowest = 0;
  uint64_t failed = 0;
};

// The timed builds per solver, and all of them in `total`.
std::map<std::string, Compiled> BySolver(const std::vector<TimedBuild>& timed, Compiled& total) {
  std::map<std::string, Compiled> out;
  for (const TimedBuild& b : timed) {
    for (Compiled* c : {&out[b.solver], &total}) {
      c->seconds += b.seconds;
      c->slowest = std::max(c->slowest, b.seconds);
      c->failed += b.ok ? 0 : 1;
    }
  }
  return out;
}

int Main(int argc, char** argv) {
  CLI::App app{"distinct kernel builds of a driver file"};
  std::string file, arch = "sm_90";
  uint64_t budget = 0;
  bool model = false;
  int threads = 16, compile_threads = 0, slowest = 0;
  app.add_flag("--model", model, "count a default tune's compile steps (model-guided blind proposals)");
  app.add_option("--threads", threads, "--model: the worker's compile threads (batch size)")->capture_default_str();
  app.add_option("--compile", compile_threads,
                 "compile every distinct build once on this many threads and print the compile seconds");
  app.add_option("--slowest", slowest, "--compile: list the N slowest builds with their options");
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
  const bool compile = compile_threads > 0;
  double wall = 0;
  std::vector<TimedBuild> timed;
  if (compile) {
    absl::StatusOr<double> w = CompileAll(*target, compile_threads, counts, timed);
    if (!w.ok()) {
      std::fprintf(stderr, "--compile: %s\n", w.status().ToString().c_str());
      return 1;
    }
    wall = *w;
  }
  std::set<std::string> all;
  Compiled all_compiled;
  std::map<std::string, Compiled> compiled = BySolver(timed, all_compiled);
  uint64_t candidates = 0;
  fmt::print("{} problems, target {}, {}\n", problems, arch,
             model ? fmt::format("a default tune's compile steps ({} compile threads)", threads)
                   : fmt::format("budget {}", budget == 0 ? "all" : std::to_string(budget)));
  fmt::print("{:<28} {:>8} {:>11} {:>9} {:>10}{}\n", "solver", "problems", "candidates", "builds", "cand/build",
             compile ? fmt::format(" {:>10} {:>9}", "compile s", "slowest") : "");
  for (const auto& [name, c] : counts) {
    for (const auto& [key, req] : c.builds) all.insert(key);
    candidates += c.candidates;
    const Compiled& k = compiled[name];
    fmt::print("{:<28} {:>8} {:>11} {:>9} {:>10.1f}{}\n", name, c.problems, c.candidates, c.builds.size(),
               c.builds.empty() ? 0.0 : static_cast<double>(c.candidates) / c.builds.size(),
               compile ? fmt::format(" {:>10.1f} {:>9.2f}", k.seconds, k.slowest) : "");
  }
  fmt::print("{:<28} {:>8} {:>11} {:>9} {:>10.1f}{}\n", "total", problems, candidates, all.size(),
             all.empty() ? 0.0 : static_cast<double>(candidates) / all.size(),
             compile ? fmt::format(" {:>10.1f}", all_compiled.seconds) : "");
  if (compile) {
    fmt::print("compiled {} builds on {} threads in {:.1f} s wall; {} failed\n", all.size(), compile_threads, wall,
               all_compiled.failed);
    std::sort(timed.begin(), timed.end(), [](const TimedBuild& a, const TimedBuild& b) { return a.seconds > b.seconds; });
    for (size_t i = 0; i < timed.size() && i < static_cast<size_t>(slowest); ++i) {
      fmt::print("{:6.2f} s  {:<20} {}\n", timed[i].seconds, timed[i].solver, timed[i].options);
    }
  }
  return all_compiled.failed == 0 ? 0 : 1;
}

}  // namespace
}  // namespace tuna::search

int main(int argc, char** argv) { return tuna::search::Main(argc, argv); }
