#include "tuner_core/backend/kernel_identity.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tuner_core/hash/sha256.h"

namespace tuna::backend {
namespace {

// The version without the library path some backends append ("nvrtc 13.0 (/opt/.../libnvrtc.so.13)"):
// one compiler installed at two paths on two hosts builds the same code objects.
std::string_view WithoutLibraryPath(std::string_view v) {
  const size_t at = v.rfind(" (/");
  if (at != std::string_view::npos && !v.empty() && v.back() == ')') return v.substr(0, at);
  return v;
}

}  // namespace

std::string KernelIdentity(BackendKind kind, std::string_view compiler_version,
                           const CompileRequest& r) {
  compiler_version = WithoutLibraryPath(compiler_version);
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
