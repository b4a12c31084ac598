#include "tuner_core/runtime/kernel_cache.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/kernel_identity.h"
#include "tuner_core/solver/invoker.h"
#include "tuner_core/db/codec.h"
#include "tuner_core/runtime/db_files.h"

namespace tuna::runtime {

KernelCache::KernelCache(const backend::Backend& backend, std::string arch, std::string cache_dir,
                         std::vector<std::string> kdb_paths)
    : backend_(backend), arch_(std::move(arch)), cache_dir_(std::move(cache_dir)),
      kdb_paths_(std::move(kdb_paths)) {}

std::string KernelCache::KdbName(const solver::KernelBuild& build) {
  return db::MakeTunaKernelDbEntry(build.source, build.options, "", "").kernel_name;
}

std::string KernelCache::KdbArgs(const solver::KernelBuild& build, const std::string& arch) {
  return db::MakeTunaKernelDbEntry(build.source, build.options, BareArch(arch), "").kernel_args;
}


absl::StatusOr<backend::CodeObject> KernelCache::Get(const solver::KernelBuild& build) {
  absl::StatusOr<backend::CompileRequest> req = solver::CompileRequestFor(build, arch_);
  if (!req.ok()) return req.status();

  // 1. System kernel db.
  if (!kdb_opened_) {
    kdb_opened_ = true;
    for (const std::string& p : kdb_paths_) {
      std::error_code ec;
      if (p.empty() || !std::filesystem::is_regular_file(p, ec)) continue;
      absl::StatusOr<db::KernelDbReader> r = db::KernelDbReader::Open(p);
      if (r.ok()) {
        kdb_.emplace(*std::move(r));
        spdlog::debug("kernel db {}", p);
        break;
      }
      spdlog::warn("kernel db {}: {}", p, r.status().ToString());
    }
  }
  if (kdb_.has_value()) {
    absl::StatusOr<std::string> blob = kdb_->Find(KdbName(build), KdbArgs(build, arch_));
    if (blob.ok()) {
      ++stats_.kdb_hits;
      backend::CodeObject code;
      code.kind = backend_.Kind();
      code.arch = arch_;
      code.compiler_version = "kdb";
      code.entries = build.entries;
      code.bytes = *std::move(blob);
      return code;
    }
    if (!absl::IsNotFound(blob.status())) spdlog::warn("kernel db entry {}: {}", KdbName(build), blob.status().ToString());
  }

  // 2. Cache directory.
  if (!cache_opened_ && !cache_dir_.empty()) {
    cache_opened_ = true;
    absl::StatusOr<std::unique_ptr<backend::DiskKernelCache>> opened = backend::DiskKernelCache::Open(cache_dir_);
    if (opened.ok()) cache_ = *std::move(opened);
    else spdlog::warn("{}; compiling every kernel", std::string(opened.status().message()));
  }
  const std::string key = cache_ ? backend::KernelIdentity(backend_, *req) : std::string();
  if (cache_) {
    std::optional<backend::CodeObject> code = cache_->Get(key);
    if (code.has_value() && code->kind == backend_.Kind() && code->arch == arch_) {
      ++stats_.cache_hits;
      return *std::move(code);
    }
  }

  // 3. Compile.
  absl::StatusOr<backend::CodeObject> code = backend_.Compile(*req);
  if (!code.ok()) return absl::Status(code.status().code(), absl::StrCat(build.source, ": ", code.status().message()));
  ++stats_.compilations;
  if (cache_) {
    if (absl::Status st = cache_->Put(key, *code); !st.ok()) spdlog::warn("{}", std::string(st.message()));
  }
  return code;
}

absl::StatusOr<std::vector<backend::CodeObject>> KernelCache::Get(const solver::Solution& solution) {
  std::vector<backend::CodeObject> out;
  for (const solver::KernelBuild& k : solution.kernels) {
    absl::StatusOr<backend::CodeObject> c = Get(k);
    if (!c.ok()) return c.status();
    out.push_back(*std::move(c));
  }
  return out;
}

}  // namespace tuna::runtime
