#include "bench/search/quality.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "bench/search/space_count.h"
#include "bench/search/tables.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/keys.h"

namespace tuna::search {
namespace {

// One layer's outcome.
struct Row {
  const Pick* pick = nullptr;
  std::string error;  // the layer could not be measured
  double chosen_ms = 0, best_ms = 0;          // from the exhaustive table
  double chosen_again = 0, best_again = 0;    // from the interleaved re-timing
  std::string best_params;
};

// The table's `n` fastest passing points, fastest first.
std::vector<std::vector<int64_t>> Fastest(const Table& t, int n) {
  std::vector<std::pair<double, std::vector<int64_t>>> ok;
  for (const auto& [values, p] : t.points) {
    if (p.ok) ok.emplace_back(p.ms, values);
  }
  std::sort(ok.begin(), ok.end());
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < ok.size() && static_cast<int>(i) < n; ++i) out.push_back(ok[i].second);
  return out;
}

// Step 2: the chosen params and the table's fastest, timed again together.
void Retime(const Pick& pick, const Table& t, const SessionOptions& session, const QualityOptions& o,
            const solver::SolverRegistry& registry, Row& row) {
  SessionOptions s = ExhaustiveSession(session, pick.solver);
  s.tune.warm_params = {pick.chosen.ToString()};
  for (const auto& v : Fastest(t, o.top)) s.tune.warm_params.push_back(solver::PerfConfig{v}.ToString());
  s.tune.budget = 1 + s.tune.warm_params.size();  // the default comes first
  s.tune.retime_top = static_cast<int>(s.tune.budget);
  s.tune.retime_repetitions = o.retime_repetitions;
  auto results = TuneProblems({pick.problem}, s, registry);
  if (!results.ok() || results->front().solvers.empty()) {
    row.error = results.ok() ? results->front().error : results.status().ToString();
    return;
  }
  for (const auto& [config, ms] : results->front().solvers[0].retimed) {
    if (config == pick.chosen) row.chosen_again = ms;
    if (ms > 0 && (row.best_again == 0 || ms < row.best_again)) row.best_again = ms;
  }
  if (row.chosen_again == 0) row.error = "the chosen params did not pass the re-timing";
}

double Ratio(double a, double b) { return a > 0 && b > 0 ? a / b : 0; }

void PrintRow(const Row& r, double within) {
  const Pick& p = *r.pick;
  const double again = Ratio(r.chosen_again, r.best_again);
  fmt::print("{:<26} {:<1} {:<18} {:>5} {:>9.4f} {:>9.4f} {:>9.4f} {:>6.3f} {:>9.4f} {:>9.4f} {:>6.3f} {}\n",
             p.label.substr(0, 26), DirectionName(p.problem.direction), p.solver.substr(0, 18), p.valid, p.tune_ms,
             r.chosen_ms, r.best_ms, Ratio(r.chosen_ms, r.best_ms), r.chosen_again, r.best_again, again,
             !r.error.empty() ? "error: " + r.error : again > 0 && again <= 1 + within ? "within" : "NOT within");
  fmt::print("    {}  chosen [{}]{}  table best [{}]\n", p.problem.Canonical(), p.params,
             p.specialized ? fmt::format(" (shipped with sizes compiled in; searched as [{}])", p.chosen.ToString()) : "",
             r.best_params);
  std::fflush(stdout);
}

Json RowJson(const Row& r) {
  const Pick& p = *r.pick;
  return {{"file", p.label}, {"driver", ToDriverLine(p.problem)}, {"solver", p.solver}, {"valid", p.valid},
          {"chosen_params", p.params}, {"searched_params", p.chosen.ToString()}, {"specialized", p.specialized},
          {"tune_ms", JsonMeasure(p.tune_ms)},
          {"table_chosen_ms", JsonMeasure(r.chosen_ms)}, {"table_best_ms", JsonMeasure(r.best_ms)},
          {"table_best_params", r.best_params}, {"retimed_chosen_ms", JsonMeasure(r.chosen_again)},
          {"retimed_best_ms", JsonMeasure(r.best_again)},
          {"ratio", JsonRounded(Ratio(r.chosen_again, r.best_again), 4)}, {"error", r.error}};
}

// Step 1 for every solver of `picks`: their exhaustive tables, by pick index.
std::map<size_t, Table> MeasureAll(const std::vector<Pick>& picks, const SessionOptions& session,
                                   const solver::SolverRegistry& registry, std::vector<Row>& rows) {
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> by_solver;
  for (size_t i = 0; i < picks.size(); ++i) {
    if (by_solver[picks[i].solver].empty()) order.push_back(picks[i].solver);
    by_solver[picks[i].solver].push_back(i);
  }
  std::map<size_t, Table> tables;
  for (const std::string& name : order) {
    std::vector<Problem> problems;
    for (size_t i : by_solver[name]) problems.push_back(picks[i].problem);
    std::fprintf(stderr, "quality: exhaustive pass of %s over %zu layer(s)\n", name.c_str(), problems.size());
    auto results = TuneProblems(problems, ExhaustiveSession(session, name), registry);
    for (size_t k = 0; k < by_solver[name].size(); ++k) {
      const size_t i = by_solver[name][k];
      const TuneResult* r = results.ok() ? &(*results)[k] : nullptr;
      const SolverTuneResult* sr = r && !r->solvers.empty() ? &r->solvers[0] : nullptr;
      if (sr == nullptr || sr->tried != picks[i].valid) {
        rows[i].error = !results.ok() ? results.status().ToString()
                        : !r->error.empty() ? r->error
                                            : absl::StrCat("timed ", sr ? sr->tried : 0, " of ", picks[i].valid);
        continue;
      }
      tables[i] = TableOf(r->arch, r->problem, *sr);
    }
  }
  return tables;
}

}  // namespace

absl::StatusOr<std::vector<Pick>> ReadPicks(const std::string& path, const std::string& label,
                                            const solver::Target& target, const solver::SolverRegistry& registry,
                                            std::vector<std::string>& notes) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  Json rows = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (rows.is_discarded() || !rows.is_array()) return absl::DataLossError(path + ": not a `tuna report --json` array");
  std::vector<Pick> out;
  for (const Json& row : rows) {
    const std::string name = row.value("best_solver", "");
    const solver::RegisteredSolver* r = registry.ByName(name);
    if (r == nullptr || !r->solver->IsTunable()) continue;
    const std::string key = absl::StrCat(row.value("problem", ""), "-", row.value("direction", ""));
    absl::StatusOr<Problem> p = ParseFindDbKey(key);
    if (!p.ok()) {
      notes.push_back(absl::StrCat(label, " ", key, ": ", p.status().message()));
      continue;
    }
    Pick pick{label, *p, name, row.value("best_params", ""), {}, 0, 0};
    if (row.contains("best_ms") && row["best_ms"].is_number()) pick.tune_ms = row["best_ms"].get<double>();
    const solver::SearchSpace space = r->solver->Space(target, *p);
    absl::StatusOr<solver::PerfConfig> chosen = space.empty() ? absl::NotFoundError("empty space") : space.Parse(pick.params);
    if (!chosen.ok()) {
      notes.push_back(absl::StrCat(label, " ", key, " ", name, ": params '", pick.params, "' not in its space on ", target.arch));
      continue;
    }
    pick.chosen = space.Searched(*chosen);
    pick.specialized = !(pick.chosen == *chosen);
    pick.valid = ValidConfigs(*r->solver, target, *p).size();
    out.push_back(std::move(pick));
  }
  return out;
}

std::vector<Pick> ChoosePicks(std::vector<Pick> picks, size_t layers, uint64_t max_points,
                              std::vector<std::string>& notes) {
  const auto group_of = [](const Pick& p) { return p.label + "/" + std::string(DirectionName(p.problem.direction)); };
  // Groups (file, direction) in order of first appearance in the input, each largest space first.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const Pick*>> groups;
  for (const Pick& p : picks) {
    if (groups.try_emplace(group_of(p)).second) order.push_back(group_of(p));
  }
  std::stable_sort(picks.begin(), picks.end(), [](const Pick& a, const Pick& b) { return a.valid > b.valid; });
  for (const Pick& p : picks) {
    if (max_points > 0 && p.valid > max_points) {
      notes.push_back(absl::StrCat(p.label, " ", p.problem.Canonical(), " ", p.solver, ": ", p.valid,
                                   " valid points > --max-points ", max_points));
      continue;
    }
    groups[group_of(p)].push_back(&p);
  }
  std::vector<Pick> out;
  for (size_t round = 0, left = 1; out.size() < layers && left > 0; ++round) {
    left = 0;
    for (const std::string& g : order) {
      if (round >= groups[g].size() || out.size() >= layers) continue;
      out.push_back(*groups[g][round]);
      ++left;
    }
  }
  return out;
}

absl::StatusOr<Json> RunQuality(const std::vector<Pick>& picks, const SessionOptions& session,
                                const QualityOptions& o, const solver::SolverRegistry& registry) {
  std::vector<Row> rows(picks.size());
  for (size_t i = 0; i < picks.size(); ++i) rows[i].pick = &picks[i];
  std::map<size_t, Table> tables = MeasureAll(picks, session, registry, rows);
  fmt::print("{:<26} {:<1} {:<18} {:>5} {:>9} {:>9} {:>9} {:>6} {:>9} {:>9} {:>6}\n", "file", "d", "solver", "valid",
             "tune ms", "chosen", "best", "ratio", "chosen*", "best*", "ratio*");
  int within = 0, within_table = 0, measured = 0;
  Json out = Json::array();
  for (size_t i = 0; i < picks.size(); ++i) {
    Row& row = rows[i];
    if (auto it = tables.find(i); it != tables.end()) {
      const Table& t = it->second;
      const auto point = t.points.find(picks[i].chosen.values);
      row.best_ms = t.best;
      if (t.best > 0) row.best_params = solver::PerfConfig{Fastest(t, 1).front()}.ToString();
      if (point == t.points.end() || !point->second.ok) {
        row.error = "the chosen params did not pass in the exhaustive pass";
      } else {
        row.chosen_ms = point->second.ms;
        Retime(picks[i], t, session, o, registry, row);
      }
    }
    PrintRow(row, o.within);
    out.push_back(RowJson(row));
    if (!row.error.empty()) continue;
    ++measured;
    within += Ratio(row.chosen_again, row.best_again) <= 1 + o.within;
    within_table += Ratio(row.chosen_ms, row.best_ms) <= 1 + o.within;
  }
  fmt::print("quality: {} of {} layers within {:.0f} % of the exhaustive best of their solver (re-timed, *); "
             "{} of {} by the exhaustive table's times alone; {} not measured\n",
             within, picks.size(), o.within * 100, within_table, picks.size(), picks.size() - measured);
  return Json{{"within", o.within}, {"layers", picks.size()}, {"within_retimed", within},
              {"within_table", within_table}, {"measured", measured}, {"rows", out}};
}

}  // namespace tuna::search
