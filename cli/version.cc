#include "cli/version.h"

#include "cli/build_info.h"

namespace tuna {

std::string TunaVersion() { return "0.1.0"; }

std::string GitRevision() { return kBuildGitRevision; }

std::string CompilerVersion() {
#if defined(__clang__)
  return std::string("clang++ ") + __clang_version__;
#elif defined(__GNUC__)
  return "g++ " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
         std::to_string(__GNUC_PATCHLEVEL__);
#else
  return "unknown compiler";
#endif
}

std::string VersionLine() {
  return "tuna " + TunaVersion() + " (git " + GitRevision() + ", " + CompilerVersion() + ")";
}

}  // namespace tuna
