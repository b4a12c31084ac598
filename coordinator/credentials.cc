#include "coordinator/credentials.h"

#include <openssl/crypto.h>

#include "coordinator/server.h"

namespace tuna::coordinator {
namespace {

bool Matches(std::string_view authorization, const std::string& token) {
  if (token.empty()) return false;
  const std::string want = "Bearer " + token;
  return authorization.size() == want.size() &&
         CRYPTO_memcmp(authorization.data(), want.data(), want.size()) == 0;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kNone: return "none";
    case Role::kCompile: return "compile";
    case Role::kEval: return "eval";
  }
  return "none";
}

absl::StatusOr<std::unique_ptr<Credentials>> Credentials::Fixed(std::string compile_token,
                                                                std::string eval_token) {
  if (!compile_token.empty() && compile_token == eval_token) {
    return absl::InvalidArgumentError("the compile and eval tokens must differ");
  }
  std::unique_ptr<Credentials> c(new Credentials());
  absl::MutexLock l(&c->mu_);
  c->compile_token_ = std::move(compile_token);
  c->eval_token_ = std::move(eval_token);
  return c;
}

absl::StatusOr<std::unique_ptr<Credentials>> Credentials::FromFiles(std::string compile_file,
                                                                    std::string eval_file) {
  std::unique_ptr<Credentials> c(new Credentials());
  c->compile_file_ = std::move(compile_file);
  c->eval_file_ = std::move(eval_file);
  auto loaded = c->Reload();
  if (!loaded.ok()) return loaded.status();
  return c;
}

bool Credentials::Required() const {
  absl::MutexLock l(&mu_);
  return !compile_token_.empty() || !eval_token_.empty();
}

Role Credentials::RoleOf(std::string_view authorization) const {
  absl::MutexLock l(&mu_);
  if (compile_token_.empty() && eval_token_.empty()) return Role::kCompile;
  if (Matches(authorization, compile_token_)) return Role::kCompile;
  if (Matches(authorization, eval_token_)) return Role::kEval;
  return Role::kNone;
}

absl::StatusOr<bool> Credentials::Reload() {
  std::string compile, eval;
  if (!compile_file_.empty()) {
    auto t = ReadTokenFile(compile_file_);
    if (!t.ok()) return t.status();
    compile = *t;
  }
  if (!eval_file_.empty()) {
    auto t = ReadTokenFile(eval_file_);
    if (!t.ok()) return t.status();
    eval = *t;
  }
  if (!compile.empty() && compile == eval) {
    return absl::InvalidArgumentError("the compile and eval token files hold the same token");
  }
  absl::MutexLock l(&mu_);
  const bool changed = compile != compile_token_ || eval != eval_token_;
  compile_token_ = std::move(compile);
  eval_token_ = std::move(eval);
  return changed;
}

}  // namespace tuna::coordinator
