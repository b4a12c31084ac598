#include "tuner_core/search/finishing.h"

#include <algorithm>
#include <vector>

namespace tuna::search {

Specialized Finish(Evaluator& evaluator, const CompiledCandidate& won, const solver::PerfConfig& config,
                   const CompiledCandidate& built, int repetitions) {
  Specialized f;
  f.config = config;
  f.disposition = built.disposition;
  f.error = built.error;
  if (won.disposition != Disposition::kPassed || built.disposition != Disposition::kPassed) return f;
  const Measurement m = evaluator.Evaluate(built, 0);  // verified before it is timed again
  f.disposition = m.disposition;
  f.error = m.error;
  if (m.disposition != Disposition::kPassed) return f;
  const std::vector<Measurement> again = evaluator.Retime({&won, &built}, std::max(repetitions, 1));
  if (again.size() != 2 || again[0].disposition != Disposition::kPassed ||
      again[1].disposition != Disposition::kPassed) {
    f.error = "not passed again when re-timed";
    return f;
  }
  f.runtime_ms = again[0].time_ms;
  f.fixed_ms = again[1].time_ms;
  f.kept = f.fixed_ms < f.runtime_ms;
  return f;
}

}  // namespace tuna::search
