// The one identity of a kernel build, used wherever a compiled kernel is reused instead of
// compiled again: the tuner's compiler (search/measure/compiler.h, within a process), the
// worker's kernel cache (worker/kernel_cache.h: the build key a compile worker stores and an
// eval worker looks up) and the on-disk cache of the workers and the runtime
// (disk_kernel_cache.h, file names).
//
// SHA-256 hex (64 characters) of the backend kind, the compiler version (without a trailing
// " (/library/path)": the same compiler at another path on another host is the same), the target arch, the
// source name and text, every header offered to the compile (names and contents), the options
// and the entry points. Equal identities give interchangeable code objects; a compiler upgrade
// or an edit of the kernel or of any header it may include gives a new identity.
#pragma once

#include <string>
#include <string_view>

#include "tuner_core/backend/backend.h"

namespace tuna::backend {

std::string KernelIdentity(BackendKind kind, std::string_view compiler_version,
                           const CompileRequest& request);

// The identity of `request` built by `backend` (its kind and CompilerVersion()).
std::string KernelIdentity(const Backend& backend, const CompileRequest& request);

}  // namespace tuna::backend
