// Loaded modules kept between loads of the same code object on one device, so that the
// candidates of a search that share a kernel build (most do: a build is a tile, candidates differ
// in launch parameters), the re-timing of the best few, the find job that times the tuned params
// after the perf job and the jobs of other configs that use the same build load it once
// (a module load is driver work while the device sits idle: cuModuleLoadData on CUDA, a
// temporary file and dlopen on the CPU backend).
//
// A hit is the same code object byte for byte (kind, arch, entries and bytes compared in full,
// never a hash alone) on the same Device. What a module is used for does not change: the caller
// still verifies and times every candidate; only the load is skipped.
//
// Bound: at most `capacity` modules are held; the least recently used is dropped first. A module
// dropped while a caller still holds it (an Invoker) stays loaded until that caller lets go.
//
// Ownership: each Device must outlive the modules loaded on it through the cache (so the cache
// itself, unless Abandon was called). Threads: thread-safe; a load itself runs on the caller's
// thread (the one that may use the device), outside the cache's lock only for the module load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"

namespace tuna::backend {

class ModuleCache {
 public:
  explicit ModuleCache(size_t capacity = 128) : capacity_(capacity < 1 ? 1 : capacity) {}
  ~ModuleCache();
  ModuleCache(const ModuleCache&) = delete;
  ModuleCache& operator=(const ModuleCache&) = delete;

  // The module of `code` on `device`: one loaded earlier through this cache when it holds it,
  // else device.Load(code) (its error as is; nothing is kept then).
  absl::StatusOr<std::shared_ptr<Module>> Load(Device& device, const CodeObject& code);

  // Gives up every module without unloading it (a device that may still run one of their kernels
  // after a launch timed out must not have them freed under it).
  void Abandon();

  int64_t loads() const;  // device loads done
  int64_t hits() const;   // loads saved
  size_t size() const;

 private:
  struct Entry {
    Device* device;
    size_t hash;
    CodeObject code;  // kind, arch, entries and bytes (compiler log and version not compared)
    std::shared_ptr<Module> module;
  };
  static bool Same(const CodeObject& a, const CodeObject& b);

  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first; guarded by mu_
  int64_t loads_ = 0;         // guarded by mu_
  int64_t hits_ = 0;          // guarded by mu_
};

}  // namespace tuna::backend
