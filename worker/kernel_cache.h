// A Backend decorator that turns kernel builds into the kernel rows that travel between a job's
// compile step and its eval step (DESIGN §1.6-1.7).
//
// Compile requests are keyed by their backend::KernelIdentity for the wrapped backend (SHA-256
// of backend kind, compiler version, arch, source, headers, options and entries; the
// kernel's build key on the wire and in the database). A request whose key is known (Prefetch: kernels fetched from the coordinator, or an
// earlier build through this object) is answered from memory without compiling; else, with a
// DiskKernelCache, from this host's disk cache (tuner_core/backend/disk_kernel_cache.h: the
// builds of earlier processes and runs); anything else goes to the wrapped backend, and the result is remembered,
// stored in the disk cache and recorded (TakeBuilt). Disk hits are recorded too, the first time
// this object sees them, so that a compile worker puts every kernel of its job (the eval step
// of a new session fetches them from the coordinator). Devices are passed straight through.
//
// Trust: only this host's builds go to the disk cache; prefetched kernels never do.
//
// Ownership: the wrapped Backend and the DiskKernelCache (optional) must outlive this object.
// Threads: safe for concurrent use (Compile is called from the compile pool).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "coordinator/api.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/backend/disk_kernel_cache.h"

namespace tuna::worker {

coordinator::KernelBlob ToKernelBlob(const std::string& build_key,
                                    const backend::CompileRequest& request,
                                    const backend::CodeObject& code);
backend::CodeObject ToCodeObject(backend::BackendKind kind, const coordinator::KernelBlob& k);

// The fetched kernels this host may load (docs/OPERATIONS.md, "Trust model"). On the CPU backend
// a code object is a shared object whose constructors run at dlopen: only those the coordinator
// recorded a builder for are kept (it takes PutKernels only from the compile role's token, so a
// builder is a compile-role worker, this one included); the others are built here instead (what
// this host builds itself never travels through here). GPU code objects run on the device only
// and are all kept. `dropped`, when given, is set to how many were left out.
std::vector<coordinator::KernelBlob> TrustedKernels(backend::BackendKind kind,
                                                    std::vector<coordinator::KernelBlob> kernels,
                                                    size_t* dropped = nullptr);

class KernelCacheBackend : public backend::Backend {
 public:
  explicit KernelCacheBackend(const backend::Backend& inner, const backend::DiskKernelCache* disk = nullptr)
      : inner_(inner), disk_(disk) {}

  // Makes these kernels answer later Compile calls (kernels of another backend kind are fine:
  // the device's Load rejects them and the candidate fails like any bad code object).
  void Prefetch(const std::vector<coordinator::KernelBlob>& kernels);
  // The kernels compiled or read from the disk cache (not prefetched) since the last call, in
  // order, unique by key.
  std::vector<coordinator::KernelBlob> TakeBuilt();
  // Forgets the prefetched kernels and those read from disk (bounds memory between jobs).
  // Kernels built here are kept: they are few (the evaluator's reference and comparison
  // kernels, misses of the compile step) and the next job often needs them again.
  void Clear();
  size_t hits() const;       // Compile calls answered without compiling (memory or disk)
  size_t disk_hits() const;  // of those, answered from the disk cache
  size_t builds() const;     // Compile calls that ran the compiler successfully

  backend::BackendKind Kind() const override { return inner_.Kind(); }
  std::string Name() const override { return inner_.Name(); }
  absl::Status CompilerStatus() const override { return inner_.CompilerStatus(); }
  absl::Status DriverStatus() const override { return inner_.DriverStatus(); }
  std::string CompilerVersion() const override { return inner_.CompilerVersion(); }
  std::string DriverVersion() const override { return inner_.DriverVersion(); }
  std::vector<std::string> CompileTargets() const override { return inner_.CompileTargets(); }
  absl::StatusOr<backend::CodeObject> Compile(const backend::CompileRequest& request) const override;
  // Memory, then disk; counted and recorded as Compile counts and records them.
  std::optional<backend::CodeObject> Lookup(const backend::CompileRequest& request) const override;
  absl::StatusOr<std::vector<backend::DeviceInfo>> ListDevices() const override {
    return inner_.ListDevices();
  }
  absl::StatusOr<std::unique_ptr<backend::Device>> OpenDevice(int index) const override {
    return inner_.OpenDevice(index);
  }

 private:
  // The code of `key` from memory or disk (counted as a hit), or nullopt.
  std::optional<backend::CodeObject> Known(const std::string& key, const backend::CompileRequest& request) const;

  const backend::Backend& inner_;
  const backend::DiskKernelCache* disk_;  // null: none
  mutable std::mutex mu_;
  mutable std::map<std::string, backend::CodeObject> known_;  // guarded by mu_
  mutable std::set<std::string> built_here_;  // keys of known_ compiled here; guarded by mu_
  mutable std::vector<coordinator::KernelBlob> built_;           // guarded by mu_
  mutable size_t hits_ = 0, disk_hits_ = 0, builds_ = 0;       // guarded by mu_
};

}  // namespace tuna::worker
