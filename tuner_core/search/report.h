// Reports of tuning results: one human-readable block per problem and a JSON document.
// Pure functions of the results; thread-safe.
//
// JSON shape (stable; consumed by scripts and the bench):
//   {"results": [{"driver": "...", "direction": "F", "arch": "...", "dry_run": false,
//     "reference": "cpu", "seconds": 1.2, "error": "", "flops": 1.2e9,
//     "best": {"solver": "...", "params": "...", "ms": 0.1, "tflops": 12.0} | null,
//     "solvers": [{"id": 85, "name": "...", "tunable": true, "status": "Passed",
//       "best_params": "...", "best_ms": 0.1, "default_ms": 0.2 | null, "planned": 10,
//       "tried": 10, "passed": 9, "failed": 1, "dropped_early": 3, "compiled": 10,
//       "compile_failed": 0, "dispositions": {"Passed": 9, "Incorrect": 1}, "error": ""}]}]}
// In a dry run nothing is measured: a candidate's "Passed" then means "compiled", and each
// solver's status is Skipped (something compiled) or CompileFailed (nothing did).
#pragma once

#include <string>
#include <vector>

#include "tuner_core/search/tuner.h"

namespace tuna::search {

// TFLOPS of a time for a problem (0 when ms <= 0).
double Tflops(const Problem& problem, double ms);

std::string FormatTuneResult(const TuneResult& result);
// {"results": [...]}: per problem its best and every solver's outcome (tuner_core/json).
std::string TuneResultsJson(const std::vector<TuneResult>& results);

}  // namespace tuna::search
