// Build identity of this binary: version, git revision and compiler, stamped at build time.
#pragma once

#include <string>

namespace tuna {

std::string TunaVersion();      // "0.1.0"
std::string GitRevision();      // short hash, "-dirty" when built from a modified tree
std::string CompilerVersion();  // e.g. "g++ 12.2.0"
std::string VersionLine();      // all three on one line

}  // namespace tuna
