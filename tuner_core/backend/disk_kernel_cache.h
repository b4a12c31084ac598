// A persistent kernel cache on local disk, shared by every process of this user on this host:
// the worker's compile pool threads and executor children, later `tune -f` runs or worker
// restarts (worker/kernel_cache.h KernelCacheBackend looks here after its memory and before
// the compiler, and stores what it built here), and the runtime's cache directory
// (runtime/kernel_cache.h, MIOPEN_CUSTOM_CACHE_DIR).
//
// Keys are backend::KernelIdentity values (64 lower-case hex characters: SHA-256 of backend kind,
// compiler version, arch, source, headers, options, entries), so a compiler upgrade or a kernel
// edit never finds a stale object. One file per kernel: DIR/<first 2 hex chars of key>/<key>.
//
// File format, version 1 (integers little-endian; `str` = u64 length, then that many bytes):
//   magic     8 bytes "TUNAKC\r\n"
//   version   u32 (kFormatVersion)
//   key       str   (must equal the file name: a file copied under another name is a miss)
//   kind      str   "cpu" | "cuda" | "hip"
//   arch      str
//   compiler  str   CodeObject::compiler_version
//   entries   u32 count, then count str
//   bytes     str   the code object
//   checksum  32 bytes: SHA-256 of everything above
// Nothing may follow. The compiler log is not kept.
//
// Writes are atomic: a Put writes a fresh temporary file in the key's directory (mkstemp) and
// renames it over the final name, so readers in any process see the old file, the new file or
// none, never a torn one. Two Puts of one key both succeed (the last rename wins; both hold the
// same kernel). No fsync: a file torn by a power loss fails its checksum and is a miss.
//
// Errors: Get never fails: a missing file is a miss; a corrupt, truncated or other-version file
// (or another key's) is a miss too, logged once per key by this object, and the next Put of
// that key replaces it. Put returns the I/O error (the caller logs it and goes on: the cache only
// saves time). Open fails (FailedPrecondition, naming the directory) when the directory cannot
// be created or is not private to this user (see below).
//
// Trust (docs/OPERATIONS.md, "Kernel cache"): on the CPU backend a code object is a shared
// object that the executor (or the runtime) dlopens, so whoever can write this directory can run code in every
// tune of this user. Only this host's own builds are Put (never kernels fetched from a
// coordinator or read from a kernel db), and the directory must be private: Open creates it (and its subdirectories)
// with mode 0700 and refuses an existing one owned by another user or writable by group or
// others.
//
// Threads: safe for concurrent use from any number of threads and processes. No size bound:
// remove the directory (or any file in it) to reclaim space, also while tunes run.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/backend/backend.h"

namespace tuna::backend {

class DiskKernelCache {
 public:
  static constexpr uint32_t kFormatVersion = 1;

  // Creates `dir` (and its parents) when missing; checks that it is private (see above).
  static absl::StatusOr<std::unique_ptr<DiskKernelCache>> Open(const std::string& dir);

  // The code object stored under `key`, or nullopt (a miss; see Errors above). A key that is
  // not 64 hex characters is a miss.
  std::optional<CodeObject> Get(const std::string& key) const;
  // Stores `code` under `key` atomically (replacing any file there). InvalidArgument for a key
  // that is not 64 hex characters; the I/O error otherwise.
  absl::Status Put(const std::string& key, const CodeObject& code) const;

  const std::string& dir() const { return dir_; }
  // The file a key is stored in.
  std::string PathOf(const std::string& key) const;

  // The file contents for `key` and `code` and back (exposed for tests). Parse: DataLoss
  // naming what is wrong (magic, version, a truncated field, checksum, trailing bytes, key).
  static std::string Serialize(const std::string& key, const CodeObject& code);
  static absl::StatusOr<CodeObject> Parse(const std::string& key, const std::string& data);

 private:
  explicit DiskKernelCache(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
  mutable std::mutex mu_;
  mutable std::set<std::string> reported_;  // keys whose bad file was logged; guarded by mu_
};

}  // namespace tuna::backend
