#include "bench/search/tables.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "bench/search/space_count.h"
#include "fmt/format.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::search {
namespace {

Json TableJson(const Table& t) {
  Json points = Json::array();
  for (const auto& [values, r] : t.points) {
    points.push_back({{"p", values}, {"ok", r.ok}, {"ms", r.ok ? JsonMeasure(r.ms) : Json()}});
  }
  return {{"solver", t.solver}, {"driver", t.driver}, {"arch", t.arch}, {"valid", t.points.size()},
          {"default", t.default_values}, {"points", points}};
}

void AddPoint(Table& t, std::vector<int64_t> values, bool ok, double ms) {
  t.measured_axes = std::max(t.measured_axes, values.size());
  t.points[std::move(values)] = {ok, ok ? ms : 0};
  if (ok && (t.best == 0 || ms < t.best)) t.best = ms;
}

// Seconds of device work for one point of `p` (EstimateOptions).
double PointDeviceSeconds(const Problem& p, const EstimateOptions& e) {
  const double tflops = p.data_type == DataType::kFp32 ? e.tflops_fp32 : e.tflops_lowp;
  const double launch_ms = p.Flops() / (tflops * 1e9) + e.launch_ms;
  return ((e.repetitions + 1) * launch_ms + e.point_ms) / 1000;
}

// The space of table `t`'s solver on its problem and arch.
absl::StatusOr<solver::SearchSpace> TableSpace(const Table& t, const solver::SolverRegistry& registry) {
  const solver::RegisteredSolver* r = registry.ByName(t.solver);
  absl::StatusOr<solver::Target> target = solver::TargetForArch(t.arch);
  absl::StatusOr<std::vector<Problem>> problems = ParseDriverLine(t.driver);
  if (r == nullptr || !target.ok() || !problems.ok() || problems->size() != 1) {
    return absl::DataLossError(absl::StrCat("table ", t.solver, " ", t.driver, " (", t.arch, "): unknown solver, arch or problem"));
  }
  return r->solver->Space(*target, problems->front());
}

// `values` as written by an older space, read as params by `space` (appended axes: absent).
absl::StatusOr<std::vector<int64_t>> ReadValues(const solver::SearchSpace& space, const Json& values) {
  if (!values.is_array()) return absl::DataLossError("a point that is not a list of values");
  absl::StatusOr<solver::PerfConfig> c = space.Parse(solver::PerfConfig{values.get<std::vector<int64_t>>()}.ToString());
  if (!c.ok()) return c.status();
  return c->values;
}

}  // namespace

absl::StatusOr<std::vector<Table>> ReadTables(const std::string& path, const solver::SolverRegistry& registry) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError("cannot read " + path);
  Json doc = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.contains("tables") || !doc["tables"].is_array()) {
    return absl::DataLossError(path + ": not a tables file");
  }
  std::vector<Table> out;
  for (const Json& j : doc["tables"]) {
    if (!j.is_object() || !j.contains("points") || !j["points"].is_array()) {
      return absl::DataLossError(path + ": a table without points");
    }
    Table t{j.value("solver", ""), j.value("driver", ""), j.value("arch", ""), {}, {}, 0};
    absl::StatusOr<solver::SearchSpace> space = TableSpace(t, registry);
    if (!space.ok()) return absl::DataLossError(absl::StrCat(path, ": ", space.status().message()));
    auto read = [&](const Json& values) -> absl::StatusOr<std::vector<int64_t>> {
      absl::StatusOr<std::vector<int64_t>> v = ReadValues(*space, values);
      if (!v.ok()) return absl::DataLossError(absl::StrCat(path, ": ", t.solver, " ", t.driver, ": ", v.status().message()));
      return v;
    };
    absl::StatusOr<std::vector<int64_t>> def = read(j.value("default", Json::array()));
    if (!def.ok()) return def.status();
    t.default_values = *std::move(def);
    size_t stored = 0;  // values per point as written (AddPoint sees them as read, appended axes filled)
    for (const Json& p : j["points"]) {
      if (p.contains("p") && p["p"].is_array()) stored = std::max(stored, p["p"].size());
      const bool ok = p.value("ok", false) && p.contains("ms") && p["ms"].is_number();
      absl::StatusOr<std::vector<int64_t>> values = read(p.contains("p") ? p["p"] : Json());
      if (!values.ok()) return values.status();
      AddPoint(t, *std::move(values), ok, ok ? p["ms"].get<double>() : 0);
    }
    t.measured_axes = stored;
    if (t.best > 0) out.push_back(std::move(t));
  }
  return out;
}

bool InMeasuredSpace(const solver::SearchSpace& space, const Table& t, const solver::PerfConfig& config) {
  const std::vector<solver::ParamAxis>& axes = space.axes();
  for (size_t i = t.measured_axes; i < axes.size() && i < config.values.size(); ++i) {
    if (!axes[i].absent.has_value() || config.values[i] != *axes[i].absent) return false;
  }
  return true;
}

Json TablesJson(const std::vector<Table>& tables, const Json& meta) {
  Json doc = meta;
  doc["tables"] = JsonList(tables, TableJson);
  return doc;
}

TablePlan PlanTables(const std::vector<TableJob>& jobs, const solver::Target& target, uint64_t max_points,
                     const EstimateOptions& estimate, const solver::SolverRegistry& registry) {
  TablePlan plan;
  std::map<std::string, std::set<std::string>> builds;  // per solver, over its earlier tables
  for (const TableJob& job : jobs) {
    const std::string what = absl::StrCat(job.solver, " ", ToDriverLine(job.problem));
    const solver::RegisteredSolver* r = registry.ByName(job.solver);
    if (r == nullptr || !r->solver->IsTunable()) {
      plan.skipped.push_back(absl::StrCat(what, ": not a tunable solver"));
      continue;
    }
    const solver::Solver& s = *r->solver;
    if (!s.IsApplicable(target, job.problem).ok() || s.Space(target, job.problem).empty()) {
      plan.skipped.push_back(absl::StrCat(what, ": not applicable on ", target.arch));
      continue;
    }
    const std::vector<solver::PerfConfig> valid = ValidConfigs(s, target, job.problem);
    if (max_points > 0 && valid.size() > max_points) {
      plan.skipped.push_back(absl::StrCat(what, ": ", valid.size(), " valid points > --max-points ", max_points));
      continue;
    }
    PlannedTable t{job, valid.size(), 0, 0, 0};
    for (const std::string& key : BuildKeys(s, target, job.problem, valid)) t.new_builds += builds[job.solver].insert(key).second;
    t.compile_s = t.new_builds * estimate.build_cpu_s / std::max(1, estimate.threads);
    t.device_s = estimate.problem_s + t.valid * PointDeviceSeconds(job.problem, estimate);
    plan.compile_s += t.compile_s;
    plan.device_s += t.device_s;
    plan.tables.push_back(std::move(t));
  }
  return plan;
}

std::string PlanText(const TablePlan& plan) {
  std::string out = fmt::format("{:<20} {:<64} {:>6} {:>7} {:>8} {:>8}\n", "solver", "problem", "valid",
                                "builds", "build s", "device s");
  uint64_t points = 0, builds = 0;
  for (const PlannedTable& t : plan.tables) {
    out += fmt::format("{:<20} {:<64} {:>6} {:>7} {:>8.1f} {:>8.1f}\n", t.job.solver.substr(0, 20),
                       t.job.problem.Canonical().substr(0, 64), t.valid, t.new_builds, t.compile_s, t.device_s);
    points += t.valid;
    builds += t.new_builds;
  }
  for (const std::string& s : plan.skipped) out += "skipped: " + s + "\n";
  out += fmt::format("estimate: {} tables, {} points, {} distinct builds: compile {:.0f} s + device {:.0f} s "
                     "= {:.0f} s at most (compiles overlap timing on a GPU)\n",
                     plan.tables.size(), points, builds, plan.compile_s, plan.device_s, plan.compile_s + plan.device_s);
  return out;
}

std::vector<Table> SyntheticTables(const TablePlan& plan, const solver::Target& target,
                                   const solver::SolverRegistry& registry) {
  std::vector<Table> out;
  for (const PlannedTable& pt : plan.tables) {
    const solver::Solver& s = *registry.ByName(pt.job.solver)->solver;
    Table t{pt.job.solver, ToDriverLine(pt.job.problem), target.arch,
            s.DefaultConfig(target, pt.job.problem).values, {}, 0};
    for (const solver::PerfConfig& c : ValidConfigs(s, target, pt.job.problem)) {
      double ms = 1, hash = 0.5;
      for (size_t i = 0; i < c.values.size(); ++i) {
        const double x = std::log2(1.0 + std::abs(static_cast<double>(c.values[i]))) - 2.0 - 0.3 * i;
        ms *= 1 + 0.05 * x * x;
        hash = std::fmod(hash * 7.31 + 0.618 * static_cast<double>(c.values[i] + 3 * i), 1.0);
      }
      AddPoint(t, c.values, true, ms * (1 + 0.3 * hash));
    }
    out.push_back(std::move(t));
  }
  return out;
}

SessionOptions ExhaustiveSession(SessionOptions s, const std::string& solver) {
  s.tune.strategy = StrategyKind::kExhaustive;
  s.tune.budget = 0;
  s.tune.patience = 0;
  s.tune.solvers = {solver};
  s.tune.retime_top = 0;                     // one timing procedure for every point of the table
  s.tune.evaluator.early_drop_ratio = 1e9;  // full timing of every point: the table is the truth
  if (s.backend != "cpu") s.tune.evaluator.cpu_reference_max_flops = kGpuCpuReferenceMaxFlops;
  return s;
}

Table TableOf(const std::string& arch, const Problem& problem, const SolverTuneResult& result) {
  Table t{result.name, ToDriverLine(problem), arch, {}, {}, 0};
  if (!result.history.empty()) t.default_values = result.history.front().first.values;
  for (const auto& [config, m] : result.history) {
    AddPoint(t, config.values, m.disposition == Disposition::kPassed, m.time_ms);
  }
  return t;
}

absl::StatusOr<std::vector<Table>> MeasureTables(const TablePlan& plan, SessionOptions session,
                                                 const solver::SolverRegistry& registry,
                                                 const std::function<void(const std::vector<Table>&)>& done) {
  std::vector<std::string> order;  // solvers in plan order, each measured once over its problems
  std::map<std::string, std::vector<const PlannedTable*>> by_solver;
  for (const PlannedTable& t : plan.tables) {
    if (by_solver[t.job.solver].empty()) order.push_back(t.job.solver);
    by_solver[t.job.solver].push_back(&t);
  }
  std::vector<Table> out;
  for (const std::string& name : order) {
    std::vector<Problem> problems;
    for (const PlannedTable* t : by_solver[name]) problems.push_back(t->job.problem);
    std::fprintf(stderr, "exhaustive pass: %s, %zu problem(s)\n", name.c_str(), problems.size());
    auto results = TuneProblems(problems, ExhaustiveSession(session, name), registry);
    if (!results.ok()) return results.status();
    for (size_t i = 0; i < results->size(); ++i) {
      const TuneResult& r = (*results)[i];
      const uint64_t valid = by_solver[name][i]->valid;
      const SolverTuneResult* sr = r.solvers.empty() ? nullptr : &r.solvers[0];
      if (sr == nullptr || sr->tried != valid) {
        std::fprintf(stderr, "left out: %s %s: %s\n", name.c_str(), ToDriverLine(r.problem).c_str(),
                     !r.error.empty() ? r.error.c_str()
                                      : absl::StrCat("timed ", sr ? sr->tried : 0, " of ", valid, " valid points").c_str());
        continue;
      }
      out.push_back(TableOf(r.arch, r.problem, *sr));
    }
    if (done) done(out);
  }
  return out;
}

}  // namespace tuna::search
