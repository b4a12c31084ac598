#include "worker/kernel_cache.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "spdlog/spdlog.h"
#include "tuner_core/backend/kernel_identity.h"

namespace tuna::worker {

coordinator::KernelBlob ToKernelBlob(const std::string& build_key,
                                     const backend::CompileRequest& r,
                                    const backend::CodeObject& code) {
  coordinator::KernelBlob k;
  k.build_key = build_key;
  k.arch = code.arch.empty() ? r.arch : code.arch;
  k.compiler = code.compiler_version;
  k.kernel_name = r.source_name;
  k.options = absl::StrJoin(r.options, " ");
  k.entries = absl::StrJoin(code.entries.empty() ? r.entries : code.entries, ",");
  k.code_object = code.bytes;
  return k;
}

backend::CodeObject ToCodeObject(backend::BackendKind kind, const coordinator::KernelBlob& k) {
  backend::CodeObject c;
  c.kind = kind;
  c.arch = k.arch;
  c.compiler_version = k.compiler;
  if (!k.entries.empty()) c.entries = absl::StrSplit(k.entries, ',');
  c.bytes = k.code_object;
  return c;
}

void KernelCacheBackend::Prefetch(const std::vector<coordinator::KernelBlob>& kernels) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const coordinator::KernelBlob& k : kernels) {
    known_[k.build_key] = ToCodeObject(inner_.Kind(), k);
  }
}

std::vector<coordinator::KernelBlob> KernelCacheBackend::TakeBuilt() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<coordinator::KernelBlob> out;
  out.swap(built_);
  return out;
}

void KernelCacheBackend::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  std::erase_if(known_, [&](const auto& entry) { return !built_here_.count(entry.first); });
  built_.clear();
}

size_t KernelCacheBackend::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

size_t KernelCacheBackend::disk_hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return disk_hits_;
}

size_t KernelCacheBackend::builds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return builds_;
}

std::optional<backend::CodeObject> KernelCacheBackend::Lookup(const backend::CompileRequest& request) const {
  return Known(backend::KernelIdentity(inner_, request), request);
}

std::optional<backend::CodeObject> KernelCacheBackend::Known(const std::string& key,
                                                             const backend::CompileRequest& request) const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = known_.find(key);
    if (it != known_.end()) {
      ++hits_;
      return it->second;
    }
  }
  if (disk_ != nullptr) {
    if (std::optional<backend::CodeObject> stored = disk_->Get(key); stored.has_value()) {
      std::lock_guard<std::mutex> lock(mu_);
      ++hits_;
      ++disk_hits_;
      if (known_.emplace(key, *stored).second) built_.push_back(ToKernelBlob(key, request, *stored));
      return stored;
    }
  }
  return std::nullopt;
}

absl::StatusOr<backend::CodeObject> KernelCacheBackend::Compile(
    const backend::CompileRequest& request) const {
  const std::string key = backend::KernelIdentity(inner_, request);
  if (std::optional<backend::CodeObject> known = Known(key, request)) return *std::move(known);
  absl::StatusOr<backend::CodeObject> code = inner_.Compile(request);
  if (!code.ok()) return code;
  if (disk_ != nullptr) {
    if (absl::Status st = disk_->Put(key, *code); !st.ok()) spdlog::warn("{}", std::string(st.message()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  ++builds_;
  built_here_.insert(key);
  if (known_.emplace(key, *code).second) built_.push_back(ToKernelBlob(key, request, *code));
  return code;
}

std::vector<coordinator::KernelBlob> TrustedKernels(backend::BackendKind kind,
                                                    std::vector<coordinator::KernelBlob> kernels,
                                                    size_t* dropped) {
  const size_t before = kernels.size();
  if (kind == backend::BackendKind::kCpu) {
    kernels.erase(std::remove_if(kernels.begin(), kernels.end(),
                                 [&](const coordinator::KernelBlob& k) {
                                   return k.built_by.empty();
                                 }),
                  kernels.end());
  }
  if (dropped != nullptr) *dropped = before - kernels.size();
  return kernels;
}

}  // namespace tuna::worker
