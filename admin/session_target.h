// A session's target (arch, CU/SM count, backend, compiler versions): detected from this host's
// devices or given by the user. The one place both `tuna session init` and `tuna tune -f`
// (pipeline/) take it from.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "schema/store/session_store.h"

namespace tuna::admin {

struct DetectTargetOptions {
  std::string backend;  // "cuda" | "hip" | "cpu": only this one; empty: the first usable
  // Also pass over a backend whose compiler does not work here: for runs that compile on this
  // host (`tune -f`). A session init only names the target; its compilers may be elsewhere.
  bool require_compiler = false;
};

// Device 0 of the first backend (in DetectBackends' order: cuda, hip, cpu) that is usable and
// has a device: sets s->arch, num_cu, backend (the session column's "CUDA"/"HIP"/"CPU") and
// compiler_versions. Unavailable listing each backend's reason when none fits.
absl::Status DetectSessionTarget(const DetectTargetOptions& options, schema::SessionRecord* s);

// The target named by the user: `arch` validated (solver::TargetForArch), `num_cu` 0 for the
// arch's usual count, `backend` (any case) empty or matching the arch (InvalidArgument
// otherwise). compiler_versions is this host's compiler for the backend when it has one.
absl::Status SessionTargetForArch(const std::string& arch, int num_cu, const std::string& backend,
                                  schema::SessionRecord* s);

}  // namespace tuna::admin
