#include "tuner_core/search/measure/disposition.h"

namespace tuna::search {

namespace {
constexpr Disposition kAll[] = {Disposition::kPassed,     Disposition::kCompileFailed,
                                Disposition::kLaunchFailed, Disposition::kIncorrect,
                                Disposition::kTimeout,    Disposition::kNotApplicable,
                                Disposition::kSkipped};
}  // namespace

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

std::optional<Disposition> ParseDisposition(std::string_view name) {
  for (Disposition d : kAll)
    if (DispositionName(d) == name) return d;
  return std::nullopt;
}

}  // namespace tuna::search
