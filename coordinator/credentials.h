// Who may call the coordinator (docs/OPERATIONS.md "Trust model"): one token per role.
//   compile role  the token of compile-capable workers (`--token-file`): every call, including
//                 compile leases and PutKernels (the code objects other hosts load);
//   eval role     the token of eval-only workers (`--eval-token-file`): every call except
//                 compile leases and PutKernels (PERMISSION_DENIED), so a host that only
//                 evaluates can never hand code to the others.
// With no token at all (loopback only) every caller has the compile role.
// Tokens are read from files (first line, mode 600) and re-read by Reload: rewriting a file
// rotates its token, and workers holding the old one are refused (UNAUTHENTICATED) from then on.
// Comparisons are constant-time; tokens are never logged.
//
// Threads: every method is thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace tuna::coordinator {

enum class Role { kNone, kCompile, kEval };
const char* RoleName(Role role);  // "none", "compile", "eval"

class Credentials {
 public:
  // Fixed tokens (empty: that role has none). InvalidArgument when both are equal and set.
  static absl::StatusOr<std::unique_ptr<Credentials>> Fixed(std::string compile_token,
                                                            std::string eval_token);
  // Tokens from files (empty path: that role has none); Reload re-reads them.
  static absl::StatusOr<std::unique_ptr<Credentials>> FromFiles(std::string compile_file,
                                                                std::string eval_file);

  bool Required() const;  // any token configured
  // The role of an `authorization` metadata value ("Bearer <token>"); kNone when it matches no
  // token. Without any token configured: kCompile.
  Role RoleOf(std::string_view authorization) const;
  // Re-reads the files: true when a token changed. A file that cannot be read keeps the old
  // token (and the error is returned).
  absl::StatusOr<bool> Reload();

 private:
  Credentials() = default;
  std::string compile_file_, eval_file_;
  mutable absl::Mutex mu_;
  std::string compile_token_ ABSL_GUARDED_BY(mu_);
  std::string eval_token_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tuna::coordinator
