#include "tuner_core/backend/kernel_identity.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/hash/sha256.h"

namespace tuna::backend {

std::string KernelIdentity(BackendKind kind, std::string_view compiler_version,
                           const CompileRequest& r) {
  // \x1f / \x1e separators: no name, option, entry or version contains a unit separator.
  std::string text = absl::StrCat(BackendKindName(kind), "\x1f", std::string(compiler_version),
                                  "\x1f", r.arch, "\x1f", r.source_name, "\x1f", r.source, "\x1f",
                                  absl::StrJoin(r.options, "\x1e"), "\x1f",
                                  absl::StrJoin(r.entries, "\x1e"));
  for (const SourceHeader& h : r.headers) absl::StrAppend(&text, "\x1f", h.name, "\x1e", h.content);
  return hash::Sha256Hex(text);
}

std::string KernelIdentity(const Backend& backend, const CompileRequest& request) {
  return KernelIdentity(backend.Kind(), backend.CompilerVersion(), request);
}

}  // namespace tuna::backend
