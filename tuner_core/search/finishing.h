// The finishing step (Solver::Specialize): a winner built for its problem alone (its sizes
// compiled in), verified, then timed against the winner's build that serves every problem,
// interleaved; the faster is kept. The search's Tuner runs it after a search; a worker runs it in
// the find job that follows a perf job (worker/job_runner.h), whose compile step built the
// specialisation off the device's path.
//
// Threads: as the Evaluator's (one thread at a time). Errors are data in the result.
#pragma once

#include <string>

#include "tuner_core/search/measure/evaluator.h"
#include "tuner_core/solver/perf_config.h"

namespace tuna::search {

struct Specialized {
  solver::PerfConfig config;    // the winner built for this problem alone
  Disposition disposition = Disposition::kSkipped;  // its build's, then its verification's
  std::string error;
  double runtime_ms = 0;        // the winner and the specialised build, timed
  double fixed_ms = 0;          // interleaved (kPassed only)
  bool kept = false;            // the specialised build is faster: it becomes the best
};

// `won` is the winner's build (kPassed), `built` the build of `config` = Specialize(winner).
// Verifies `built` (Evaluate), then re-times both, interleaved, `repetitions` rounds (>= 1).
// A build, verification or re-timing that does not pass leaves kept false and says why.
Specialized Finish(Evaluator& evaluator, const CompiledCandidate& won, const solver::PerfConfig& config,
                   const CompiledCandidate& built, int repetitions);

}  // namespace tuna::search
