// MIOpen's kernel db (`<basename>.kdb` / `<DbId>.kdb` system, `<basename>.ukdb` user): SQLite
// table `kern_db(kernel_name, kernel_args, kernel_blob, kernel_hash, uncompressed_size)`, unique
// on (kernel_name, kernel_args). Blobs are bzip2-compressed like MIOpen src/bz2.cpp (raw with
// uncompressed_size = 0 when that does not shrink them); kernel_hash is the lowercase hex md5 of
// the uncompressed code object, checked on every read.
//
// Files are byte-reproducible for the same entries and SQLite library (see perf_db.h).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/db/sqlite_util.h"

namespace tuna::db {

struct KernelDbEntry {
  std::string kernel_name;  // source file name + ".o", e.g. "naive_conv.cpp.o"
  std::string kernel_args;  // compile options + " -mcpu=<arch>", e.g. " -DFOO=1 -mcpu=gfx942"
  std::string blob;         // uncompressed code object bytes (binary-safe std::string)
  bool operator==(const KernelDbEntry&) const = default;
};

// MITuna's export rules for the key (MIOpen appends the same at lookup time): ".o" is appended to
// the name if missing; " -mcpu=<arch>" is appended to the options unless they already contain
// "-mcpu" or the name ends in ".mlir.o". `arch` is the bare name without target features
// (gfx90a, not gfx90a:sramecc+:xnack-).
KernelDbEntry MakeKernelDbEntry(std::string_view file_name, std::string_view options,
                                std::string_view arch, std::string blob);

// The key of a kernel built from tuna's embedded kernel tree, the one rule the exporter writes and
// the runtime looks up: kernel_name is the source's path in the tree plus ".o" (unique across the
// tree, e.g. "cpu_conv/gemm_conv.cc.o"); kernel_args is MIOpen's form, a space before every
// option (" -DTB_M=64 -DTB_N=32") followed by " -mcpu=<arch>".
KernelDbEntry MakeTunaKernelDbEntry(std::string_view source_path,
                                    const std::vector<std::string>& options,
                                    std::string_view arch, std::string blob);

// Collects entries, then writes a fresh file. Not thread-safe.
class KernelDbWriter {
 public:
  // INSERT OR REPLACE semantics: the last Add for a (kernel_name, kernel_args) wins.
  void Add(KernelDbEntry entry);
  size_t size() const { return entries_.size(); }
  // Rows in (kernel_name, kernel_args) byte order with ids 1..n. InvalidArgument for an empty
  // name; Internal for compression/SQLite/I/O errors. Replaces `path` atomically.
  absl::Status Write(const std::string& path) const;

 private:
  std::map<std::pair<std::string, std::string>, std::string> entries_;  // key -> blob
};

// A read-only open kernel db. Move-only; one thread at a time.
class KernelDbReader {
 public:
  // NotFound / InvalidArgument (not SQLite) / FailedPrecondition (columns MIOpen checks:
  // kernel_name, kernel_args, kernel_blob) — hash and size columns are required too.
  static absl::StatusOr<KernelDbReader> Open(const std::string& path);

  // All entries in id order, decompressed. DataLoss ("possible database corruption") on a bad
  // bzip2 stream or an md5 mismatch.
  absl::StatusOr<std::vector<KernelDbEntry>> ReadAll() const;
  // MIOpen's lookup by (name, args). NotFound when absent; DataLoss as above.
  absl::StatusOr<std::string> Find(std::string_view kernel_name,
                                   std::string_view kernel_args) const;

 private:
  explicit KernelDbReader(internal::SqliteHandle db) : db_(std::move(db)) {}
  internal::SqliteHandle db_;
};

}  // namespace tuna::db
