// Exhaustive search tables of bench/search: for one problem and one tunable solver, every valid
// point of the solver's space, measured by the real Tuner (compile, verify, time with an L2 flush
// before every launch; no early drop, no re-timing, so every time comes from one procedure), and
// how long measuring a set of them should take (planned before the device is touched).
//
// A tables file is {"backend", "device", "repetitions", "tables": [{"solver", "driver", "arch",
// "valid", "default", "points": [{"p": [values], "ok": bool, "ms": number|null}]}]}; files made
// by tables_from_samples.py hold restricted spaces (no "valid"), read the same way.
// Threads: none of their own but TuneProblems'; call from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/replay.h"
#include "tuner_core/search/session.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {

struct Table {
  std::string solver;
  std::string driver;  // MIOpenDriver line (without ./bin/MIOpenDriver) of one problem
  std::string arch;
  std::vector<int64_t> default_values;
  std::map<std::vector<int64_t>, ReplayPoint> points;  // values -> outcome
  double best = 0;  // fastest passing point, ms
  // Values per point as stored: the axes the table was measured over. Axes appended to the
  // solver's space since then read as their `absent` value in every point.
  size_t measured_axes = 0;
};

// Whether `config` lies in the space table `t` was measured over: every axis appended since then
// (index >= t.measured_axes) at its `absent` value. A table covers exactly these configs.
bool InMeasuredSpace(const solver::SearchSpace& space, const Table& t, const solver::PerfConfig& config);

// Tables without a passing point are left out (they cannot be replayed); DataLoss for a file
// that is not a tables file or a table whose solver, arch, driver line or points `registry`'s
// spaces cannot read, NotFound when it cannot be read. Points and defaults are read as params
// by the solver's space, so tables written before an axis was appended read as they would now.
absl::StatusOr<std::vector<Table>> ReadTables(const std::string& path, const solver::SolverRegistry& registry);
Json TablesJson(const std::vector<Table>& tables, const Json& meta);

// One table to measure.
struct TableJob {
  std::string solver;
  Problem problem;
};

// The cost model of PlanTables' estimate (printed before measuring, so that a device call's
// length is known in advance). Builds: distinct kernel builds not needed by an earlier table
// of the same solver (the Tuner's compile cache is shared across one solver's problems), at
// `build_cpu_s` CPU seconds each on `threads` threads. Device: per point, `repetitions` timed
// launches plus the verification launch, each of flops / rate (the mean rate over a whole space,
// slow corners included, well below the best config's) plus `launch_ms` (L2 flush, launch), and
// `point_ms` (module load, comparison); `problem_s` per table (reference, buffers). The rates:
// the H200's default `tune -f` of both ResNet-50 files (8524e92) spent 4-18 ms of device time
// per SIMT candidate and ~1 ms per wgmma one with the early drop on; without it every point runs
// all repetitions, so the rates are set to about half of what those times imply.
struct EstimateOptions {
  int threads = 16;
  double build_cpu_s = 0.65;
  double tflops_fp32 = 3;
  double tflops_lowp = 20;  // FP16 / BF16
  double launch_ms = 0.05;
  double point_ms = 1.5;
  double problem_s = 0.5;
  int repetitions = 10;
};

struct PlannedTable {
  TableJob job;
  uint64_t valid = 0;       // valid points (all measured)
  uint64_t new_builds = 0;  // builds no earlier table of the solver needs
  double compile_s = 0;
  double device_s = 0;
};

struct TablePlan {
  std::vector<PlannedTable> tables;
  std::vector<std::string> skipped;  // one line per job left out, with why
  double compile_s = 0;
  double device_s = 0;
};

// Jobs whose solver is unknown, not tunable, not applicable, or whose valid space holds more
// than `max_points` points (0 = no cap) are skipped, each with a line saying so; the rest keep
// their order.
TablePlan PlanTables(const std::vector<TableJob>& jobs, const solver::Target& target, uint64_t max_points,
                     const EstimateOptions& estimate, const solver::SolverRegistry& registry);
// The plan as text: one line per table (valid points, new builds, seconds) and the totals.
std::string PlanText(const TablePlan& plan);

// Measures the plan's tables on `session`'s backend (its tune options are overridden: exhaustive,
// one solver at a time, no early drop, no re-timing). A table whose search did not time every
// valid point (the device failed, `session.stop` said stop) is left out with a line on stderr.
// `done(tables so far)` after each solver, e.g. to save them. Fails only when the backend cannot
// be opened.
absl::StatusOr<std::vector<Table>> MeasureTables(const TablePlan& plan, SessionOptions session,
                                                 const solver::SolverRegistry& registry,
                                                 const std::function<void(const std::vector<Table>&)>& done);

// The plan's tables filled with a synthetic landscape instead of measured times (no device): a
// smooth bowl in log2 of the values plus a deterministic per-point ripple of up to 30 %. For
// checking the replay's host cost and the steps end to end on spaces of GPU solvers.
std::vector<Table> SyntheticTables(const TablePlan& plan, const solver::Target& target,
                                   const solver::SolverRegistry& registry);

// The exhaustive pass's options for one solver (MeasureTables; the quality check's too).
SessionOptions ExhaustiveSession(SessionOptions session, const std::string& solver);

// The table of a solver's exhaustive result (history: every point it tried).
Table TableOf(const std::string& arch, const Problem& problem, const SolverTuneResult& result);

}  // namespace tuna::search
