// Search-efficiency benchmark (issue #19 part 4) and the quality check of its acceptance: for many
// problems and solvers, how much of the space each strategy times before one candidate comes
// within --within (3 %) of the exhaustive best.
//
// Modes (the device is needed only by the first and the last):
//   measure   tables.h: every listed problem x tunable solver (--pairs FILE of "SOLVER DRIVER"
//             lines, or -f/--driver x --solver) is tuned exhaustively on the backend (the real
//             Tuner: compile, verify, time; no early drop, no re-timing) and the table of every
//             valid point is written with --save-tables (after each solver). Spaces above
//             --max-points are left out, each with a line; the plan and its time estimate are
//             printed first (--estimate-only: only that, no device, for --target; --synthetic:
//             synthetic times instead of a device, to check the replay's host cost).
//   replay    table_replay.h, over the tables just measured or --tables FILE: tune's default
//             search (model-guided, budget 48, patience 16, batches of 16, compile ahead; seed
//             1 as `tuna tune` runs it, and the mean over --seeds seeds) run to its own end, and
//             random / model-gbt / model-ridge with no budget until within. Printed per table and
//             as medians of the fraction of the space timed until within (never reached: the
//             whole space); also over the tables whose space is larger than the default's budget.
//   quality   quality.h: --picks REPORT.json[=LABEL] (repeatable; `tuna report --json` of the
//             tune run's sessions): --layers configs, their winners' spaces measured
//             exhaustively and the chosen params re-timed against the best.
//
//   bazel run //bench/search:search_bench -- --backend cuda --pairs $PWD/bench/gpu/search_tables.txt \
//       --save-tables /tmp/tables.json
//   bazel run //bench/search:search_bench -- --tables $PWD/bench/search/tables/h100.json
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "CLI/CLI.hpp"
#include "absl/strings/str_cat.h"
#include "bench/search/quality.h"
#include "bench/search/table_replay.h"
#include "bench/search/tables.h"
#include "fmt/format.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/strategy/strategy.h"

namespace tuna::search {
namespace {

struct Args {
  std::string backend = "cpu", target, pairs, file, tables_in, tables_out, json;
  std::vector<std::string> solvers = {"TunaCpuGemmConv"}, drivers, picks;
  int device = 0, seeds = 10, repetitions = 10, num_cu = 0, threads = 16, layers = 12;
  size_t batch = 16;
  double within = 0.03, deadline_s = 0;
  uint64_t max_points = 4096;
  bool estimate_only = false;
  bool synthetic = false;
  EstimateOptions estimate;
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

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// The replay figures of one table.
struct TableFigures {
  DefaultRun exact;          // seed 1: what `tuna tune` runs, cold
  double default_mean = 0;   // fraction until within, mean over seeds
  double default_pick = 0;   // seed 1's pick / the table's best
  DefaultRun transfer;       // seed 1, warm-started from the other tables' cold runs (TransferFrom)
  double transfer_mean = 0;  // fraction until within, mean over seeds (each from that seed's cold runs)
  double transfer_pick = 0;
  std::vector<double> others;  // per contender: candidates until within, mean over seeds
};

// Tune's default replayed cold on every table: cold[seed - 1][table].
absl::StatusOr<std::vector<std::vector<ReplayResult>>> ColdRuns(const std::vector<Table>& tables, const Args& a,
                                                               const solver::SolverRegistry& registry) {
  std::vector<std::vector<ReplayResult>> cold(a.seeds);
  for (int seed = 1; seed <= a.seeds; ++seed) {
    for (const Table& t : tables) {
      absl::StatusOr<DefaultRun> d = ReplayDefault(t, seed, a.threads, a.within, registry);
      if (!d.ok()) return d.status();
      cold[seed - 1].push_back(d->result);
    }
  }
  return cold;
}

double PickRatio(const Table& t, const DefaultRun& d) {
  return d.result.best_ms > 0 ? d.result.best_ms / t.best : 0;  // 0: nothing passed
}

absl::StatusOr<TableFigures> Figures(const std::vector<Table>& tables, size_t i,
                                     const std::vector<std::vector<ReplayResult>>& cold, const Args& a,
                                     const std::vector<Contender>& contenders, const solver::SolverRegistry& registry) {
  const Table& t = tables[i];
  TableFigures f;
  for (int seed = 1; seed <= a.seeds; ++seed) {
    absl::StatusOr<DefaultRun> d = ReplayDefault(t, seed, a.threads, a.within, registry);
    absl::StatusOr<DefaultRun> warm =
        ReplayDefault(t, seed, a.threads, a.within, registry, TransferFrom(tables, cold[seed - 1], i));
    if (!d.ok()) return d.status();
    if (!warm.ok()) return warm.status();
    if (seed == 1) f.exact = *d, f.transfer = *warm;
    f.default_mean += FractionUntilReached(t, d->result) / a.seeds;
    f.transfer_mean += FractionUntilReached(t, warm->result) / a.seeds;
  }
  f.default_pick = PickRatio(t, f.exact);
  f.transfer_pick = PickRatio(t, f.transfer);
  for (const Contender& c : contenders) {
    double mean = 0;
    for (int seed = 1; seed <= a.seeds; ++seed) {
      std::unique_ptr<SearchStrategy> s = c.make();
      absl::StatusOr<ReplayResult> r = ReplayUntilWithin(t, *s, seed, a.batch, a.within, registry);
      if (!r.ok()) return r.status();
      mean += static_cast<double>(r->reached_at > 0 ? r->reached_at : t.points.size()) / a.seeds;
    }
    f.others.push_back(mean);
  }
  return f;
}

// A driver line without the program name and the flags every line has.
std::string ShortDriver(std::string d) {
  for (const std::string cut : {"./bin/MIOpenDriver ", "-l 1 -j 1 -m conv -g 1 "}) {
    if (size_t at = d.find(cut); at != std::string::npos) d.erase(at, cut.size());
  }
  return d;
}

void PrintSummaryLine(const std::string& name, const std::vector<double>& all, const std::vector<double>& large) {
  fmt::print("  {:<26} median {:5.1f}% over {} tables; {:5.1f}% over the {} larger than the budget\n", name,
             100 * Median(all), all.size(), 100 * Median(large), large.size());
}

std::string RunCell(const ReplayResult& r) {
  return fmt::format("{}/{}/{}", r.reached_at > 0 ? std::to_string(r.reached_at) : "-", r.tried,
                     r.stopped_by.empty() ? "end" : r.stopped_by);
}

// One table's line and JSON row.
Json PrintFigures(const Table& t, const TableFigures& f, const std::vector<Contender>& contenders) {
  fmt::print("{:<18} {:<50} {:>5} {:>4} {:>18} {:>6.3f} {:>6.1f} {:>18} {:>6.3f} {:>6.1f}", t.solver.substr(0, 18),
             ShortDriver(t.driver).substr(0, 50), t.points.size(), f.exact.budget, RunCell(f.exact.result),
             f.default_pick, 100 * f.default_mean, RunCell(f.transfer.result), f.transfer_pick,
             100 * f.transfer_mean);
  for (double n : f.others) fmt::print(" {:>11.1f}", n);
  fmt::print("\n");
  const ReplayResult& r = f.exact.result;
  Json row = {{"solver", t.solver}, {"driver", t.driver}, {"valid", t.points.size()},
              {"default_budget", f.exact.budget}, {"default_reached_at", r.reached_at},
              {"default_tried", r.tried}, {"default_stopped_by", r.stopped_by},
              {"default_pick_ratio", JsonRounded(f.default_pick, 4)},
              {"default_mean_fraction", JsonRounded(f.default_mean, 4)},
              {"transfer_reached_at", f.transfer.result.reached_at}, {"transfer_tried", f.transfer.result.tried},
              {"transfer_stopped_by", f.transfer.result.stopped_by},
              {"transfer_pick_ratio", JsonRounded(f.transfer_pick, 4)},
              {"transfer_mean_fraction", JsonRounded(f.transfer_mean, 4)}};
  for (size_t i = 0; i < contenders.size(); ++i) row[contenders[i].name] = JsonRounded(f.others[i], 1);
  return row;
}

int Replay(const std::vector<Table>& tables, const Args& a) {
  const std::vector<Contender> contenders = Contenders();
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  absl::StatusOr<std::vector<std::vector<ReplayResult>>> cold = ColdRuns(tables, a, registry);
  if (!cold.ok()) {
    fmt::print("replay: {}\n", cold.status().ToString());
    return 1;
  }
  std::vector<std::vector<double>> all(contenders.size() + 4), large(contenders.size() + 4);
  int reached[2] = {0, 0}, picked[2] = {0, 0};
  Json rows = Json::array();
  // default (cold) and warm-started: seed 1 (where it came within, candidates tried, why it
  // ended), its pick / the best, and the fraction until within over the seeds; the others:
  // candidates until within.
  fmt::print("{:<18} {:<50} {:>5} {:>4} {:>18} {:>6} {:>6} {:>18} {:>6} {:>6}", "solver", "problem", "valid", "bdgt",
             "default: at/tried", "pick", "dflt%", "transfer: at/tried", "pick", "xfer%");
  for (const Contender& c : contenders) fmt::print(" {:>11}", c.name);
  fmt::print("\n");
  for (size_t i = 0; i < tables.size(); ++i) {
    const Table& t = tables[i];
    absl::StatusOr<TableFigures> f = Figures(tables, i, *cold, a, contenders, registry);
    if (!f.ok()) {
      fmt::print("{}: {}\n", t.solver, f.status().ToString());
      return 1;
    }
    const double valid = static_cast<double>(t.points.size());
    const bool is_large = t.points.size() > f->exact.budget;
    std::vector<double> fractions = {FractionUntilReached(t, f->exact.result), f->default_mean,
                                     FractionUntilReached(t, f->transfer.result), f->transfer_mean};
    for (double n : f->others) fractions.push_back(n / valid);
    for (size_t k = 0; k < fractions.size(); ++k) {
      all[k].push_back(fractions[k]);
      if (is_large) large[k].push_back(fractions[k]);
    }
    reached[0] += f->exact.result.reached_at > 0;
    reached[1] += f->transfer.result.reached_at > 0;
    picked[0] += f->default_pick > 0 && f->default_pick <= 1 + a.within;
    picked[1] += f->transfer_pick > 0 && f->transfer_pick <= 1 + a.within;
    rows.push_back(PrintFigures(t, *f, contenders));
  }
  const size_t n = all[0].size();
  fmt::print("\n{} tables; fraction of the space timed until within {:.0f}% of the best (never: 100 %), "
             "median (bar for the default: <= 10 %):\n", n, a.within * 100);
  std::vector<std::string> names = {"default cold (seed 1)", fmt::format("default cold (mean of {})", a.seeds),
                                    "default warm (seed 1)", fmt::format("default warm (mean of {})", a.seeds)};
  for (const Contender& c : contenders) names.push_back(c.name + fmt::format(" (mean of {})", a.seeds));
  Json summary = Json::object();
  for (size_t k = 0; k < names.size(); ++k) {
    PrintSummaryLine(names[k], all[k], large[k]);
    summary[names[k]] = {{"all", JsonRounded(100 * Median(all[k]), 2)}, {"larger_than_budget", JsonRounded(100 * Median(large[k]), 2)}};
  }
  const char* label[2] = {"default cold", "default warm (transfer from the other tables' cold runs)"};
  for (int k = 0; k < 2; ++k) {
    fmt::print("{} (seed 1): reached within {:.0f}% in {} of {} tables; its pick within {:.0f}% in {} of {}\n",
               label[k], a.within * 100, reached[k], n, a.within * 100, picked[k], n);
  }
  if (!a.json.empty()) {
    std::ofstream out(a.json);
    out << JsonText({{"within", a.within}, {"seeds", a.seeds}, {"batch", a.batch}, {"threads", a.threads},
                     {"default_reached", reached[0]}, {"default_pick_within", picked[0]},
                     {"transfer_reached", reached[1]}, {"transfer_pick_within", picked[1]},
                     {"median_percent_of_space", summary}, {"rows", rows}}, true) << "\n";
  }
  return n == 0 ? 1 : 0;
}

// The measure mode's jobs: --pairs lines "SOLVER DRIVER LINE" ('#' comments), else every
// problem of -f / --driver with every --solver.
absl::StatusOr<std::vector<TableJob>> Jobs(const Args& a) {
  std::vector<TableJob> jobs;
  if (!a.pairs.empty()) {
    std::ifstream in(a.pairs);
    if (!in) return absl::NotFoundError("cannot read " + a.pairs);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream words(line);
      std::string solver, rest;
      if (!(words >> solver) || solver[0] == '#') continue;
      std::getline(words, rest);
      auto p = ParseDriverLine(rest);
      if (!p.ok()) return absl::InvalidArgumentError(absl::StrCat(a.pairs, ": ", p.status().message()));
      for (const Problem& q : *p) jobs.push_back({solver, q});
    }
    return jobs;
  }
  std::vector<Problem> problems;
  for (const std::string& d : a.drivers) {
    auto p = ParseDriverLine(d);
    if (!p.ok()) return p.status();
    problems.insert(problems.end(), p->begin(), p->end());
  }
  if (!a.file.empty()) {
    auto f = ParseDriverFile(a.file);
    if (!f.ok() || !f->errors.empty()) return absl::InvalidArgumentError("cannot parse " + a.file);
    for (const auto& l : f->lines) problems.insert(problems.end(), l.problems.begin(), l.problems.end());
  }
  for (const std::string& s : a.solvers)
    for (const Problem& p : problems) jobs.push_back({s, p});
  return jobs;
}

SessionOptions Session(const Args& a) {
  SessionOptions s;
  s.backend = a.backend;
  s.device = a.device;
  s.tune.evaluator.repetitions = a.repetitions;
  return s;
}

absl::StatusOr<solver::Target> PlanningTarget(const Args& a) {
  if (!a.target.empty()) return solver::TargetForArch(a.target, a.num_cu);
  return absl::InvalidArgumentError("--target ARCH (the device's: sm_90, gfx90a, cpu-avx2) is needed to plan");
}

void SaveTables(const std::vector<Table>& tables, const Args& a) {
  if (a.tables_out.empty()) return;
  std::ofstream out(a.tables_out + ".tmp");
  out << JsonText(TablesJson(tables, {{"backend", a.backend}, {"repetitions", a.repetitions},
                                      {"exhaustive", true}}), true) << "\n";
  out.close();
  std::rename((a.tables_out + ".tmp").c_str(), a.tables_out.c_str());
}

// The measure mode: plan (printed), then the tables, saved after each solver.
absl::StatusOr<std::vector<Table>> Measure(const Args& a) {
  absl::StatusOr<solver::Target> target = PlanningTarget(a);
  if (!target.ok()) return target.status();
  absl::StatusOr<std::vector<TableJob>> jobs = Jobs(a);
  if (!jobs.ok()) return jobs.status();
  EstimateOptions e = a.estimate;
  e.threads = a.threads;
  e.repetitions = a.repetitions;
  const TablePlan plan = PlanTables(*jobs, *target, a.max_points, e, solver::SolverRegistry::Builtin());
  fmt::print("{}", PlanText(plan));
  std::fflush(stdout);
  if (a.estimate_only) return std::vector<Table>{};
  if (a.synthetic) return SyntheticTables(plan, *target, solver::SolverRegistry::Builtin());
  SessionOptions s = Session(a);
  const auto start = std::chrono::steady_clock::now();
  if (a.deadline_s > 0) {
    s.stop = [start, limit = a.deadline_s] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > limit;
    };
  }
  auto tables = MeasureTables(plan, s, solver::SolverRegistry::Builtin(),
                              [&a](const std::vector<Table>& t) { SaveTables(t, a); });
  if (tables.ok()) {
    fmt::print("measured {} of {} tables in {:.0f} s\n\n", tables->size(), plan.tables.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return tables;
}

// The quality mode: --picks files, the rule of quality.h, the check.
int Quality(const Args& a) {
  absl::StatusOr<solver::Target> target = PlanningTarget(a);
  if (!target.ok()) return std::fprintf(stderr, "%s\n", target.status().ToString().c_str()), 2;
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  std::vector<Pick> picks;
  std::vector<std::string> notes;
  for (const std::string& arg : a.picks) {
    const size_t eq = arg.find('=');
    const std::string path = arg.substr(0, eq);
    auto p = ReadPicks(path, eq == std::string::npos ? path : arg.substr(eq + 1), *target, registry, notes);
    if (!p.ok()) return std::fprintf(stderr, "%s\n", p.status().ToString().c_str()), 2;
    picks.insert(picks.end(), p->begin(), p->end());
  }
  const size_t candidates = picks.size();
  picks = ChoosePicks(std::move(picks), a.layers, a.max_points, notes);
  for (const std::string& n : notes) fmt::print("left out: {}\n", n);
  fmt::print("quality: {} layers of {} with a tunable winner (3 largest spaces per file and direction)\n",
             picks.size(), candidates);
  std::vector<TableJob> jobs;
  for (const Pick& p : picks) jobs.push_back({p.solver, p.problem});
  EstimateOptions e = a.estimate;
  e.threads = a.threads;
  e.repetitions = a.repetitions;
  fmt::print("{}", PlanText(PlanTables(jobs, *target, 0, e, registry)));
  std::fflush(stdout);
  if (a.estimate_only || picks.empty()) return picks.empty() ? 1 : 0;
  QualityOptions o;
  o.within = a.within;
  absl::StatusOr<Json> out = RunQuality(picks, Session(a), o, registry);
  if (!out.ok()) return std::fprintf(stderr, "%s\n", out.status().ToString().c_str()), 1;
  if (!a.json.empty()) std::ofstream(a.json) << JsonText(*out, true) << "\n";
  return (*out)["measured"].get<int>() == static_cast<int>(picks.size()) ? 0 : 1;
}

void AddOptions(CLI::App& app, Args& a) {
  app.add_option("--backend", a.backend, "cpu | cuda | hip (measure, quality)");
  app.add_option("--device", a.device, "device index (measure, quality)");
  app.add_option("--target", a.target, "the device's arch, to plan (measure, quality): sm_90, cpu-avx2");
  app.add_option("--num-cu", a.num_cu, "its SMs / CUs (0: the arch's usual)");
  app.add_option("--pairs", a.pairs, "file of 'SOLVER DRIVER LINE' lines to measure");
  app.add_option("--solver", a.solvers, "tunable solvers to measure with -f / --driver (repeatable)");
  app.add_option("-f,--file", a.file, "file of MIOpenDriver lines (measure)");
  app.add_option("--driver", a.drivers, "MIOpenDriver line (repeatable; measure)");
  app.add_option("--repetitions", a.repetitions, "timed runs per candidate (tune's default: 10)");
  app.add_option("--max-points", a.max_points, "leave out spaces with more valid points, saying so (0: no cap)");
  app.add_option("--deadline-s", a.deadline_s, "start no problem after this many seconds of measuring");
  app.add_flag("--estimate-only", a.estimate_only, "print the plan and its time estimate; no device");
  app.add_flag("--synthetic", a.synthetic, "fill the plan with synthetic times (tables.h), no device: "
               "the replay's host cost");
  app.add_option("--threads", a.threads, "compile threads of the host (estimate; the default's batch)");
  app.add_option("--build-cpu-s", a.estimate.build_cpu_s, "estimate: CPU seconds per kernel build");
  app.add_option("--save-tables", a.tables_out, "write the measured tables here");
  app.add_option("--tables", a.tables_in, "replay these tables instead of measuring");
  app.add_option("--picks", a.picks, "quality: `tuna report --json` file[=label] (repeatable)");
  app.add_option("--layers", a.layers, "quality: how many layers");
  app.add_option("--seeds", a.seeds, "seeds per strategy (replay)");
  app.add_option("--batch", a.batch, "proposals per batch of the unbounded strategies (replay)");
  app.add_option("--within", a.within, "target: within this fraction of the exhaustive best");
  app.add_option("--json", a.json, "write the replay (or quality) results as JSON here");
}

int Main(int argc, char** argv) {
  CLI::App app("search-efficiency benchmark of the tuner's strategies, and the quality check");
  Args a;
  AddOptions(app, a);
  CLI11_PARSE(app, argc, argv);
  if (!a.picks.empty()) return Quality(a);
  absl::StatusOr<std::vector<Table>> tables = a.tables_in.empty() ? Measure(a) : ReadTables(a.tables_in, solver::SolverRegistry::Builtin());
  if (!tables.ok()) return std::fprintf(stderr, "%s\n", tables.status().ToString().c_str()), 2;
  if (a.estimate_only) return 0;
  return Replay(*tables, a);
}

}  // namespace
}  // namespace tuna::search

int main(int argc, char** argv) { return tuna::search::Main(argc, argv); }
