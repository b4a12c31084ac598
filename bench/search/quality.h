// The quality check of issue #19 ("on 12 layers of that run, the chosen kernel is within 3 % of
// the exhaustive best of the same solver, measured in the same call"), run right after `tuna
// tune -f` on the same host (bench/gpu/search_acceptance.sh STEPS=...,quality).
//
// Input: the tune run's picks, from `tuna report --session_id S --json` (one file per tuned
// driver file): per config the winning solver and the params its perf job chose. Rule (stated,
// not chosen by outcome): the configs whose winning solver is tunable are grouped by (file,
// direction) (ResNet-50: FP32 F, B, W and FP16 F); `layers` of them are taken round-robin over
// the groups, in each group the configs whose winning solver has the most valid points first
// (ties: the report's order), since a larger space leaves the default search (budget 48,
// patience 16) more to miss. 12 layers over 4 groups: the 3 largest spaces of each. Spaces
// above `max_points` are left out, each with a line. Then per layer, on the device, in this process:
//   1. the exhaustive table of the winning solver (every valid point, the Tuner's procedure:
//      compiled, verified, median of `repetitions` runs with an L2 flush before each, no early
//      drop) — one Tuner per solver, so builds are shared across that solver's layers;
//   2. the chosen params and the table's 3 fastest points (and the solver's default, which the
//      Tuner puts first) timed again together, interleaved, `retime_repetitions` runs each.
// Reported per layer: chosen / best from the table and from the re-timing (the second is the
// verdict: the table's best alone is the minimum of many noisy medians), and how many of the
// layers are within `within`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/json/json_text.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/search/session.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {

struct Pick {
  std::string label;  // which tune run (the driver file's name)
  Problem problem;
  std::string solver;
  std::string params;  // the perf job's choice, as the perf db holds it
  // params parsed against the solver's space, at the point the search timed: a winner the
  // finishing step shipped for its problem alone (Solver::Specialize, kept only when verified
  // and faster than this point, interleaved) is measured as the point its search chose, so the
  // row measures the search against the exhaustive table of the same space.
  solver::PerfConfig chosen;
  bool specialized = false;  // params differ from `chosen`: shipped with sizes compiled in
  double tune_ms = 0;  // the tune run's time of it (its find job)
  uint64_t valid = 0;  // valid points of the solver's space for the problem
};

// The rows of one `tuna report --json` file whose best solver is tunable on `target` (others
// have nothing to choose); `notes` gets a line per row left out for another reason.
absl::StatusOr<std::vector<Pick>> ReadPicks(const std::string& path, const std::string& label,
                                            const solver::Target& target, const solver::SolverRegistry& registry,
                                            std::vector<std::string>& notes);

// The rule above (`max_points` 0 = no cap).
std::vector<Pick> ChoosePicks(std::vector<Pick> picks, size_t layers, uint64_t max_points,
                              std::vector<std::string>& notes);

struct QualityOptions {
  double within = 0.03;
  int top = 3;                 // the table's fastest points re-timed with the chosen one
  int retime_repetitions = 20;
};

// Measures and prints the layers (stdout); returns the JSON of the rows and the summary. Fails
// only when the backend cannot be opened.
absl::StatusOr<Json> RunQuality(const std::vector<Pick>& picks, const SessionOptions& session,
                                const QualityOptions& options, const solver::SolverRegistry& registry);

}  // namespace tuna::search
