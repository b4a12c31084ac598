// Search-efficiency benchmark (issue #19 part 4): for many problems and solvers, how much of the
// space each strategy times before one candidate comes within --within (3 %) of the exhaustive
// best.
//
// Two steps, so the device is needed once:
//   measure  every problem x tunable solver is tuned exhaustively on the backend (the real Tuner:
//            compile, verify, time; no re-timing, no early drop, so all times come from the same
//            procedure) and the table of every valid point is written with --save-tables.
//   replay   each strategy is replayed against the tables (from this run or --tables FILE):
//            every proposal is answered with the time measured for that config, failures stay
//            failures, --seeds seeds each, batches of --batch (the Tuner's 2 x compile threads).
// Replay keeps the comparison free of timing noise between runs and costs no device time; the
// committed tables under bench/search/tables/ replay anywhere.
//
//   bazel run //bench/search:search_bench -- --backend cuda -f FILE --solver TunaIgemmFwd \
//       --solver TunaDirectTiledFwd --save-tables /tmp/tables.json
//   bazel run //bench/search:search_bench -- --tables $PWD/bench/search/tables/cpu.json
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>

#include "CLI/CLI.hpp"
#include "fmt/format.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/session.h"
#include "tuner_core/search/strategy/strategy.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

// One problem x solver, measured exhaustively.
struct Table {
  std::string solver;
  std::string driver;
  std::string arch;
  std::vector<int64_t> default_values;
  std::map<std::vector<int64_t>, std::pair<bool, double>> points;  // values -> (ok, ms)
  double best = 0;
};

struct Contender {
  std::string name;
  std::function<std::unique_ptr<SearchStrategy>()> make;
};

std::vector<Contender> Contenders() {
  ModelStrategyOptions ridge;
  ridge.cost_model = CostModelKind::kRidge;
  return {{"random", [] { return NewRandomStrategy(); }},
          {"model-gbt", [] { return NewModelStrategy(); }},
          {"model-ridge", [ridge] { return NewModelStrategy(ridge); }}};
}

// Candidates timed until one within `within` of the best (the whole table when never).
uint64_t Replay(SearchStrategy& s, uint64_t seed, size_t batch, const solver::SearchSpace& space,
                const Table& t, double within) {
  StrategyInput in;
  in.space = space;
  in.is_valid = [&t](const solver::PerfConfig& c) { return t.points.count(c.values) > 0; };
  in.seed = seed;
  in.prior = {solver::PerfConfig{t.default_values}};
  if (!s.Start(in).ok()) return t.points.size();
  uint64_t n = 0;
  for (;;) {
    auto proposals = s.Next(batch);
    if (proposals.empty()) return std::max<uint64_t>(n, t.points.size());
    std::vector<Observation> obs;
    for (const auto& c : proposals) {
      ++n;
      const auto& [ok, ms] = t.points.at(c.values);
      if (ok && ms <= t.best * (1 + within)) return n;
      obs.push_back({c, ok, ms});
    }
    s.Observe(obs);
  }
}

Json TableJson(const Table& t) {
  Json points = Json::array();
  for (const auto& [values, r] : t.points) {
    points.push_back({{"p", values}, {"ok", r.first}, {"ms", r.first ? JsonMeasure(r.second) : Json()}});
  }
  return {{"solver", t.solver}, {"driver", t.driver}, {"arch", t.arch},
          {"default", t.default_values}, {"points", points}};
}

absl::StatusOr<std::vector<Table>> ReadTables(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  Json doc = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("tables")) return absl::DataLossError(path + ": not a tables file");
  std::vector<Table> out;
  for (const Json& j : doc["tables"]) {
    Table t{j.value("solver", ""), j.value("driver", ""), j.value("arch", ""),
            j.value("default", std::vector<int64_t>{}), {}, 0};
    for (const Json& p : j["points"]) {
      const bool ok = p.value("ok", false) && p["ms"].is_number();
      const double ms = ok ? p["ms"].get<double>() : 0;
      t.points[p["p"].get<std::vector<int64_t>>()] = {ok, ms};
      if (ok && (t.best == 0 || ms < t.best)) t.best = ms;
    }
    if (t.best > 0) out.push_back(std::move(t));
  }
  return out;
}

// Exhaustive tables of every problem x solver (skipping spaces above max_points valid points).
std::vector<Table> Measure(const std::vector<Problem>& problems, const std::vector<std::string>& solvers,
                           const std::string& backend, int device, int repetitions, uint64_t max_points) {
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  std::vector<Table> out;
  for (const std::string& name : solvers) {
    SessionOptions s;
    s.backend = backend;
    s.device = device;
    s.tune.strategy = StrategyKind::kExhaustive;
    s.tune.solvers = {name};
    s.tune.retime_top = 0;  // one timing procedure for every point of the table
    s.tune.evaluator.repetitions = repetitions;
    s.tune.evaluator.early_drop_ratio = 1e9;  // full timing of every point: the table is the truth
    s.tune.budget = max_points;
    for (const Problem& p : problems) {
      std::fprintf(stderr, "exhaustive pass: %s %s\n", name.c_str(), ToDriverLine(p).c_str());
      auto results = TuneProblems({p}, s, registry);
      if (!results.ok() || results->front().solvers.empty()) continue;
      const SolverTuneResult& sr = results->front().solvers[0];
      if (sr.disposition != Disposition::kPassed || sr.tried >= max_points) continue;
      Table t{name, ToDriverLine(p), results->front().arch, sr.history.front().first.values, {}, 0};
      for (const auto& [config, m] : sr.history) {
        const bool ok = m.disposition == Disposition::kPassed;
        t.points[config.values] = {ok, m.time_ms};
        if (ok && (t.best == 0 || m.time_ms < t.best)) t.best = m.time_ms;
      }
      out.push_back(std::move(t));
    }
  }
  return out;
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

int Main(int argc, char** argv) {
  CLI::App app("search-efficiency benchmark of the tuner's strategies");
  std::string backend = "cpu", file, tables_in, tables_out, json;
  std::vector<std::string> solvers = {"TunaCpuGemmConv"}, drivers;
  int device = 0, seeds = 10, repetitions = 5;
  size_t batch = 16;
  double within = 0.03;
  uint64_t max_points = 4096;
  app.add_option("--backend", backend, "cpu | cuda | hip (measure)");
  app.add_option("--device", device, "device index (measure)");
  app.add_option("--solver", solvers, "tunable solvers to measure (repeatable)");
  app.add_option("-f,--file", file, "file of MIOpenDriver lines (measure)");
  app.add_option("--driver", drivers, "MIOpenDriver line (repeatable; measure)");
  app.add_option("--repetitions", repetitions, "timed runs per candidate (measure)");
  app.add_option("--max-points", max_points, "skip spaces with more valid points (measure)");
  app.add_option("--save-tables", tables_out, "write the measured tables here");
  app.add_option("--tables", tables_in, "replay these tables instead of measuring");
  app.add_option("--seeds", seeds, "seeds per strategy");
  app.add_option("--batch", batch, "proposals per batch");
  app.add_option("--within", within, "target: within this fraction of the exhaustive best");
  app.add_option("--json", json, "write the replay results as JSON here");
  CLI11_PARSE(app, argc, argv);

  std::vector<Table> tables;
  if (!tables_in.empty()) {
    auto t = ReadTables(tables_in);
    if (!t.ok()) return std::fprintf(stderr, "%s\n", t.status().ToString().c_str()), 2;
    tables = *std::move(t);
  } else {
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
    tables = Measure(problems, solvers, backend, device, repetitions, max_points);
    if (!tables_out.empty()) {
      std::ofstream out(tables_out);
      out << JsonText({{"backend", backend}, {"tables", JsonList(tables, TableJson)}}, true) << "\n";
    }
  }

  const std::vector<Contender> contenders = Contenders();
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  std::vector<std::vector<double>> fractions(contenders.size());
  Json rows = Json::array();
  fmt::print("{:<18} {:<58} {:>6}", "solver", "problem", "valid");
  for (const Contender& c : contenders) fmt::print(" {:>12}", c.name);
  fmt::print("\n");
  for (const Table& t : tables) {
    const solver::RegisteredSolver* rs = registry.ByName(t.solver);
    auto problem = ParseDriverLine(t.driver);
    auto target = solver::TargetForArch(t.arch);
    if (rs == nullptr || !problem.ok() || !target.ok()) continue;
    const solver::SearchSpace space = rs->solver->Space(*target, problem->front());
    const double valid = static_cast<double>(t.points.size());
    fmt::print("{:<18} {:<58} {:>6}", t.solver.substr(0, 18), problem->front().Canonical().substr(0, 58), t.points.size());
    Json row = {{"solver", t.solver}, {"driver", t.driver}, {"valid", t.points.size()}};
    for (size_t i = 0; i < contenders.size(); ++i) {
      double mean = 0;
      for (int seed = 1; seed <= seeds; ++seed) {
        auto s = contenders[i].make();
        mean += static_cast<double>(Replay(*s, seed, batch, space, t, within)) / seeds;
      }
      fractions[i].push_back(mean / valid);
      row[contenders[i].name] = JsonRounded(mean, 1);
      fmt::print(" {:>12.1f}", mean);
    }
    fmt::print("\n");
    rows.push_back(row);
  }
  fmt::print("\n{} tables; fraction of the space timed until within {:.0f}% of the best "
             "(mean over {} seeds, batch {}):\n", tables.size(), within * 100, seeds, batch);
  Json summary = Json::object();
  for (size_t i = 0; i < contenders.size(); ++i) {
    const double med = Median(fractions[i]);
    fmt::print("  {:<12} median {:5.1f}%\n", contenders[i].name, 100 * med);
    summary[contenders[i].name] = JsonRounded(100 * med, 2);
  }
  if (!json.empty()) {
    std::ofstream out(json);
    out << JsonText({{"within", within}, {"seeds", seeds}, {"batch", batch},
                     {"median_percent_of_space", summary}, {"rows", rows}}, true) << "\n";
  }
  return tables.empty() ? 1 : 0;
}

}  // namespace
}  // namespace tuna::search

int main(int argc, char** argv) { return tuna::search::Main(argc, argv); }
