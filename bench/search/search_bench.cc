// Search-efficiency benchmark: for a problem set and one tunable solver, how many candidates
// exhaustive, random and model-guided search measure before one comes within --within (3%) of
// the exhaustive best.
//
// Method: every problem is first tuned exhaustively on the chosen backend (the real Tuner:
// compile, verify, time; no re-timing so all times come from the same procedure). The three
// strategies are then replayed against that measured table — each proposal is answered with
// the time measured for that config, failures stay failures — for --seeds seeds each. Replay
// keeps the comparison free of timing noise between runs and costs no extra device time.
// Every strategy starts with the solver's default config (as the Tuner does).
//
//   bazel run //bench/search:search_bench -- --backend cuda --solver TunaIgemmFwd -f problems.txt
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/search/report.h"
#include "tuner_core/search/session.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

struct Table {
  std::map<std::vector<int64_t>, std::pair<bool, double>> points;  // values -> (ok, ms)
  double best = 0;
};

// Candidates measured until one within `within` of the best (0 when none ever is).
uint64_t Replay(StrategyKind kind, uint64_t seed, const solver::SearchSpace& space,
                const solver::PerfConfig& default_config, const Table& t, double within) {
  auto s = MakeStrategy(kind);
  StrategyInput in;
  in.space = space;
  in.is_valid = [&t](const solver::PerfConfig& c) { return t.points.count(c.values) > 0; };
  in.seed = seed;
  in.prior = {default_config};
  if (!s->Start(in).ok()) return 0;
  uint64_t n = 0;
  for (;;) {
    auto batch = s->Next(8);
    if (batch.empty()) return 0;
    std::vector<Observation> obs;
    for (const auto& c : batch) {
      ++n;
      const auto& [ok, ms] = t.points.at(c.values);
      if (ok && ms <= t.best * (1 + within)) return n;
      obs.push_back({c, ok, ms});
    }
    s->Observe(obs);
  }
}

int Main(int argc, char** argv) {
  CLI::App app("search-efficiency benchmark of the tuner's strategies");
  std::string backend = "cpu", solver_name = "TunaCpuGemmConv", file, json;
  std::vector<std::string> drivers;
  int device = 0, seeds = 10, repetitions = 5;
  double within = 0.03;
  uint64_t max_points = 4096;
  app.add_option("--backend", backend, "cpu | cuda | hip");
  app.add_option("--device", device, "device index");
  app.add_option("--solver", solver_name, "the tunable solver to search");
  app.add_option("-f,--file", file, "file of MIOpenDriver lines");
  app.add_option("--driver", drivers, "MIOpenDriver line (repeatable)");
  app.add_option("--seeds", seeds, "seeds per strategy");
  app.add_option("--within", within, "target: within this fraction of the exhaustive best");
  app.add_option("--repetitions", repetitions, "timed runs per candidate in the exhaustive pass");
  app.add_option("--max-points", max_points, "skip problems whose space has more valid points");
  app.add_option("--json", json, "write the table as JSON here");
  CLI11_PARSE(app, argc, argv);

  std::vector<Problem> problems;
  for (const std::string& d : drivers) {
    auto p = ParseDriverLine(d);
    if (!p.ok()) return std::fprintf(stderr, "%s\n", p.status().ToString().c_str()), 2;
    problems.insert(problems.end(), p->begin(), p->end());
  }
  if (!file.empty()) {
    auto f = ParseDriverFile(file);
    if (!f.ok() || !f->errors.empty()) return std::fprintf(stderr, "cannot parse %s\n", file.c_str()), 2;
    for (const auto& l : f->lines) problems.insert(problems.end(), l.problems.begin(), l.problems.end());
  }
  if (problems.empty()) {
    problems = *ParseDriverLine("conv -n 4 -c 32 -H 14 -W 14 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1");
  }
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const solver::RegisteredSolver* rs = registry.ByName(solver_name);
  if (rs == nullptr || !rs->solver->IsTunable()) {
    return std::fprintf(stderr, "'%s' is not a tunable builtin solver\n", solver_name.c_str()), 2;
  }

  SessionOptions s;
  s.backend = backend;
  s.device = device;
  s.tune.strategy = StrategyKind::kExhaustive;
  s.tune.solvers = {solver_name};
  s.tune.retime_top = 0;  // one timing procedure for every point of the table
  s.tune.evaluator.repetitions = repetitions;
  s.tune.evaluator.early_drop_ratio = 1e9;  // full timing of every point: the table is the truth
  s.tune.progress = [](const TuneProgress& p) {
    if (p.done % 50 == 0 || p.done == p.total)
      std::fprintf(stderr, "  %llu/%llu\n", (unsigned long long)p.done, (unsigned long long)p.total);
  };
  tuna::Json rows_json = tuna::Json::array();
  std::string table = fmt::format("{:<70} {:>6} {:>10} {:>10} {:>10} {:>10}\n", "problem", "valid", "best ms",
                                  "exhaustive", "random", "model");
  double sum_ex = 0, sum_rand = 0, sum_model = 0;
  int rows = 0;
  for (const Problem& p : problems) {
    auto target = solver::TargetForArch(backend == "cpu" ? "cpu-x86_64" : backend == "cuda" ? "sm_90" : "gfx90a");
    if (target.ok() && rs->solver->IsApplicable(*target, p).ok()) {
      const solver::SearchSpace space = rs->solver->Space(*target, p);
      uint64_t valid = 0;
      for (uint64_t i = 0; i < space.Size() && valid <= max_points; ++i)
        valid += rs->solver->IsValid(*target, p, space.At(i)).ok() ? 1 : 0;
      if (valid > max_points) {
        std::fprintf(stderr, "skipping %s: more than %llu valid points\n", p.Canonical().c_str(),
                     (unsigned long long)max_points);
        continue;
      }
    }
    std::fprintf(stderr, "exhaustive pass: %s\n", ToDriverLine(p).c_str());
    auto results = TuneProblems({p}, s, registry);
    if (!results.ok()) return std::fprintf(stderr, "%s\n", results.status().ToString().c_str()), 1;
    const TuneResult& r = results->front();
    if (r.solvers.empty() || r.solvers[0].disposition != Disposition::kPassed) {
      std::fprintf(stderr, "  %s: no passing candidate, skipped\n", solver_name.c_str());
      continue;
    }
    const SolverTuneResult& sr = r.solvers[0];
    Table t;
    for (const auto& [config, m] : sr.history) {
      const bool ok = m.disposition == Disposition::kPassed;
      t.points[config.values] = {ok, m.time_ms};
      if (ok && (t.best == 0 || m.time_ms < t.best)) t.best = m.time_ms;
    }
    const solver::SearchSpace space = [&] {
      auto tg = solver::TargetForArch(r.arch);
      return rs->solver->Space(tg.ok() ? *tg : solver::Target{}, p);
    }();
    const solver::PerfConfig def = sr.history.front().first;
    const double ex = static_cast<double>(Replay(StrategyKind::kExhaustive, 1, space, def, t, within));
    double rnd = 0, mdl = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      rnd += static_cast<double>(Replay(StrategyKind::kRandom, seed, space, def, t, within)) / seeds;
      mdl += static_cast<double>(Replay(StrategyKind::kModel, seed, space, def, t, within)) / seeds;
    }
    std::string name = r.problem.Canonical();
    table += fmt::format("{:<70} {:>6} {:>10.4f} {:>10.0f} {:>10.1f} {:>10.1f}\n", name.substr(0, 70),
                         t.points.size(), t.best, ex, rnd, mdl);
    rows_json.push_back({{"driver", ToDriverLine(p)},
                         {"arch", r.arch},
                         {"valid", t.points.size()},
                         {"best_ms", JsonMeasure(t.best)},
                         {"best_params", sr.best_params},
                         {"exhaustive", JsonMeasure(ex)},
                         {"random_mean", JsonMeasure(rnd)},
                         {"model_mean", JsonMeasure(mdl)}});
    sum_ex += ex, sum_rand += rnd, sum_model += mdl;
    ++rows;
  }
  if (rows > 0) {
    table += fmt::format("{:<70} {:>6} {:>10} {:>10.1f} {:>10.1f} {:>10.1f}\n", "mean", "", "", sum_ex / rows,
                         sum_rand / rows, sum_model / rows);
  }
  std::printf("solver %s, backend %s, candidates until within %.0f%% of the exhaustive best (%d seeds)\n%s",
              solver_name.c_str(), backend.c_str(), within * 100, seeds, table.c_str());
  if (!json.empty()) {
    std::ofstream out(json);
    out << JsonText({{"solver", solver_name},
                     {"backend", backend},
                     {"within", within},
                     {"seeds", seeds},
                     {"rows", rows_json}},
                    /*items_on_lines=*/true)
        << "\n";
  }
  return rows > 0 ? 0 : 1;
}

}  // namespace
}  // namespace tuna::search

int main(int argc, char** argv) { return tuna::search::Main(argc, argv); }
