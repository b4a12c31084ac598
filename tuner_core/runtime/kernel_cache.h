// Where the runtime gets code objects from, in order:
//   1. the system kernel db (`<sysdir>/<base>.kdb`, else `<sysdir>/<bare arch>.kdb`), MIOpen's
//      precompiled kernels, looked up by MIOpen's key (db::MakeKernelDbEntry):
//        kernel_name = file name of the kernel source + ".o"   ("naive_conv.cc.o")
//        kernel_args = " " + options joined by " " + " -mcpu=<bare arch>"  (MIOpen's leading space)
//   2. the on-disk cache directory (MIOPEN_CUSTOM_CACHE_DIR), a backend::DiskKernelCache
//      (tuner_core/backend/disk_kernel_cache.h, the worker's format and rules): one file per code
//      object named by its backend::KernelIdentity (backend, compiler version, arch, source, the
//      embedded kernel tree it may include, options, entries), so a compiler upgrade or a
//      kernel edit never reuses a stale object;
//   3. the backend's compiler; the result is stored in the cache directory (atomically:
//      concurrent processes at worst compile the same kernel twice).
// compilations() counts step 3 only: a second Handle (or process) over the same cache directory
// running the same problem performs 0 compilations.
//
// A corrupt cache file is ignored (logged) and replaced; a corrupt kdb entry is skipped. A cache
// directory that cannot be used (or that others may write: its files are loaded as code on the
// cpu backend) is logged once and left out: every kernel is then compiled.
// Threads: one thread at a time. The backend must outlive the cache.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"
#include "tuner_core/backend/disk_kernel_cache.h"
#include "tuner_core/db/kernel_db.h"
#include "tuner_core/solver/solution.h"

namespace tuna::runtime {

struct KernelCacheStats {
  int compilations = 0;
  int cache_hits = 0;  // from the cache directory
  int kdb_hits = 0;    // from the system kernel db
};

class KernelCache {
 public:
  // cache_dir empty: no on-disk cache. kdb_paths: candidate system kdbs, first existing used.
  KernelCache(const backend::Backend& backend, std::string arch, std::string cache_dir,
              std::vector<std::string> kdb_paths);

  // One code object per solution kernel.
  absl::StatusOr<std::vector<backend::CodeObject>> Get(const solver::Solution& solution);
  absl::StatusOr<backend::CodeObject> Get(const solver::KernelBuild& build);

  const KernelCacheStats& stats() const { return stats_; }
  int compilations() const { return stats_.compilations; }

  // The key parts of MIOpen's kernel db for a build (used by tests and by exports).
  static std::string KdbName(const solver::KernelBuild& build);
  static std::string KdbArgs(const solver::KernelBuild& build, const std::string& arch);

 private:

  const backend::Backend& backend_;
  std::string arch_;
  std::string cache_dir_;
  bool cache_opened_ = false;
  std::unique_ptr<backend::DiskKernelCache> cache_;  // null: none (or not usable)
  std::vector<std::string> kdb_paths_;
  bool kdb_opened_ = false;
  std::optional<db::KernelDbReader> kdb_;
  KernelCacheStats stats_;
};

}  // namespace tuna::runtime
