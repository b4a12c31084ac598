#include "tuner_core/backend/module_cache.h"

#include <functional>
#include <utility>

namespace tuna::backend {

ModuleCache::~ModuleCache() = default;

bool ModuleCache::Same(const CodeObject& a, const CodeObject& b) {
  return a.kind == b.kind && a.arch == b.arch && a.entries == b.entries && a.bytes == b.bytes;
}

absl::StatusOr<std::shared_ptr<Module>> ModuleCache::Load(Device& device, const CodeObject& code) {
  const size_t hash = std::hash<std::string>{}(code.bytes);
  {
    std::lock_guard<std::mutex> l(mu_);
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->device != &device || it->hash != hash || !Same(it->code, code)) continue;
      entries_.splice(entries_.begin(), entries_, it);
      ++hits_;
      return entries_.front().module;
    }
  }
  absl::StatusOr<std::unique_ptr<Module>> loaded = device.Load(code);
  if (!loaded.ok()) return loaded.status();
  std::shared_ptr<Module> module(std::move(*loaded));
  CodeObject key;
  key.kind = code.kind;
  key.arch = code.arch;
  key.entries = code.entries;
  key.bytes = code.bytes;
  std::lock_guard<std::mutex> l(mu_);
  ++loads_;
  entries_.push_front(Entry{&device, hash, std::move(key), module});
  while (entries_.size() > capacity_) entries_.pop_back();
  return module;
}

void ModuleCache::Abandon() {
  std::lock_guard<std::mutex> l(mu_);
  for (Entry& e : entries_) new std::shared_ptr<Module>(std::move(e.module));  // never freed
  entries_.clear();
}

int64_t ModuleCache::loads() const {
  std::lock_guard<std::mutex> l(mu_);
  return loads_;
}

int64_t ModuleCache::hits() const {
  std::lock_guard<std::mutex> l(mu_);
  return hits_;
}

size_t ModuleCache::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return entries_.size();
}

}  // namespace tuna::backend
