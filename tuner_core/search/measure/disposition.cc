#include "tuner_core/search/measure/disposition.h"

namespace tuna::search {

std::string_view DispositionName(Disposition d) {
  switch (d) {
    case Disposition::kPassed: return "Passed";
    case Disposition::kCompileFailed: return "CompileFailed";
    case Disposition::kLaunchFailed: return "LaunchFailed";
    case Disposition::kIncorrect: return "Incorrect";
    case Disposition::kTimeout: return "Timeout";
    case Disposition::kNotApplicable: return "NotApplicable";
    case Disposition::kSkipped: return "Skipped";
  }
  return "?";
}

}  // namespace tuna::search
