// The HIP backend: hiprtc compiles (no GPU needed), the HIP module API runs. libamdhip64 (and
// libhiprtc, where ROCm ships it separately; Debian's ROCm 5.2 keeps hiprtc inside
// libamdhip64) are dlopen'ed at run time.
//
// hiprtc aborts the process when asked for a target its LLVM does not know (Debian's 5.2 knows
// gfx908/gfx90a/gfx1030 but not gfx94x/gfx11xx), so each target is first probed once in a
// forked child; an unknown target is Unimplemented ("not supported"), never a crash.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tuner_core/backend/backend.h"

namespace tuna::backend {

struct HipBackendOptions {
  std::string hip_path;     // libamdhip64 override ($TUNA_HIP_PATH)
  std::string hiprtc_path;  // libhiprtc override ($TUNA_HIPRTC_PATH)

  static HipBackendOptions FromEnv();
};

// Never fails: CompilerStatus() / DriverStatus() say what is missing. Thread-safe; hiprtc
// compiles run one at a time per process (ROCm 5.2's compiler is not reentrant), so compile
// parallelism for AMD targets comes from processes, not threads.
std::unique_ptr<Backend> NewHipBackend(const HipBackendOptions& options);

// The targets CompileTargets() probes.
const std::vector<std::string>& HipCandidateTargets();

}  // namespace tuna::backend
