#include "tuner_core/db/kernel_db.h"

#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"
#include "tuner_core/db/codec.h"
#include "tuner_core/db/miopen_sql.h"

namespace tuna::db {
namespace {

using internal::BindText;
using internal::ColumnText;
using internal::Prepare;
using internal::SqlError;

std::string ColumnBlob(sqlite3_stmt* s, int i) {
  const void* p = sqlite3_column_blob(s, i);
  return p != nullptr ? std::string(static_cast<const char*>(p), sqlite3_column_bytes(s, i))
                      : std::string();
}

// Decodes one row (blob, hash, uncompressed_size at columns first..first+2).
absl::StatusOr<std::string> DecodeRow(sqlite3_stmt* s, int first, std::string_view name,
                                      std::string_view args) {
  std::string stored = ColumnBlob(s, first);
  std::string hash = ColumnText(s, first + 1);
  int64_t size = sqlite3_column_int64(s, first + 2);
  if (size < 0) {
    return absl::DataLossError(internal::Cat("possible database corruption: negative size for ",
                                            name, " [", args, "]"));
  }
  absl::StatusOr<std::string> blob = Bz2DecompressLikeMiopen(stored, static_cast<uint64_t>(size));
  if (!blob.ok()) {
    return absl::DataLossError(internal::Cat("possible database corruption: ", name, " [", args,
                                            "]: ", blob.status().message()));
  }
  if (Md5Hex(*blob) != hash) {
    return absl::DataLossError(internal::Cat("possible database corruption: md5 of ", name, " [",
                                            args, "] does not match kernel_hash ", hash));
  }
  return blob;
}

}  // namespace

KernelDbEntry MakeKernelDbEntry(std::string_view file_name, std::string_view options,
                                std::string_view arch, std::string blob) {
  KernelDbEntry e;
  e.kernel_name = std::string(file_name);
  if (!e.kernel_name.ends_with(".o")) e.kernel_name += ".o";
  e.kernel_args = std::string(options);
  if (!(e.kernel_args.find("-mcpu") != std::string::npos) && !e.kernel_name.ends_with(".mlir.o")) {
    internal::Append(&e.kernel_args, " -mcpu=", arch);
  }
  e.blob = std::move(blob);
  return e;
}

KernelDbEntry MakeTunaKernelDbEntry(std::string_view source_path,
                                    const std::vector<std::string>& options,
                                    std::string_view arch, std::string blob) {
  std::string args;
  for (const std::string& o : options) internal::Append(&args, " ", o);
  return MakeKernelDbEntry(source_path, args, arch, std::move(blob));
}

void KernelDbWriter::Add(KernelDbEntry entry) {
  entries_[{std::move(entry.kernel_name), std::move(entry.kernel_args)}] = std::move(entry.blob);
}

absl::Status KernelDbWriter::Write(const std::string& path) const {
  for (const auto& [key, blob] : entries_) {
    if (key.first.empty()) return absl::InvalidArgumentError("empty kernel_name");
  }
  return internal::CreateDbFile(path, [this](sqlite3* db) -> absl::Status {
    if (absl::Status s = internal::Exec(db, kCreateKernDbSql); !s.ok()) return s;
    auto st = Prepare(db, sql::kInsertKernDb);
    if (!st.ok()) return st.status();
    int64_t id = 0;
    for (const auto& [key, blob] : entries_) {
      absl::StatusOr<CompressedBlob> c = Bz2CompressLikeMiopen(blob);
      if (!c.ok()) return c.status();
      sqlite3_stmt* s = st->get();
      sqlite3_reset(s);
      sqlite3_bind_int64(s, 1, ++id);
      BindText(s, 2, key.first);
      BindText(s, 3, key.second);
      // A zero-length blob must still be a BLOB, not NULL (NOT NULL column).
      sqlite3_bind_blob64(s, 4, c->bytes.empty() ? "" : c->bytes.data(), c->bytes.size(),
                          SQLITE_TRANSIENT);
      BindText(s, 5, Md5Hex(blob));
      sqlite3_bind_int64(s, 6, static_cast<int64_t>(c->uncompressed_size));
      if (sqlite3_step(s) != SQLITE_DONE) {
        return SqlError(db, internal::Cat("insert kernel ", key.first, " [", key.second, "]"));
      }
    }
    return absl::OkStatus();
  });
}

absl::StatusOr<KernelDbReader> KernelDbReader::Open(const std::string& path) {
  absl::StatusOr<internal::SqliteHandle> db = internal::OpenReadOnly(path);
  if (!db.ok()) return db.status();
  static constexpr const char* kAll[] = {"kernel_name", "kernel_args", "kernel_blob",
                                         "kernel_hash", "uncompressed_size"};
  if (absl::Status s = internal::CheckColumns(db->get(), "kern_db", kAll); !s.ok()) return s;
  return KernelDbReader(*std::move(db));
}

absl::StatusOr<std::vector<KernelDbEntry>> KernelDbReader::ReadAll() const {
  auto st = Prepare(db_.get(), sql::kKernDbRows);
  if (!st.ok()) return st.status();
  std::vector<KernelDbEntry> out;
  int rc;
  while ((rc = sqlite3_step(st->get())) == SQLITE_ROW) {
    KernelDbEntry e;
    e.kernel_name = ColumnText(st->get(), 0);
    e.kernel_args = ColumnText(st->get(), 1);
    absl::StatusOr<std::string> blob = DecodeRow(st->get(), 2, e.kernel_name, e.kernel_args);
    if (!blob.ok()) return blob.status();
    e.blob = *std::move(blob);
    out.push_back(std::move(e));
  }
  if (rc != SQLITE_DONE) return SqlError(db_.get(), "read kern_db");
  return out;
}

absl::StatusOr<std::string> KernelDbReader::Find(std::string_view kernel_name,
                                                 std::string_view kernel_args) const {
  auto st = Prepare(db_.get(), sql::kKernDbFind);
  if (!st.ok()) return st.status();
  BindText(st->get(), 1, kernel_name);
  BindText(st->get(), 2, kernel_args);
  int rc = sqlite3_step(st->get());
  if (rc == SQLITE_DONE) {
    return absl::NotFoundError(
        internal::Cat("no kernel ", kernel_name, " [", kernel_args, "] in kernel db"));
  }
  if (rc != SQLITE_ROW) return SqlError(db_.get(), "kernel db lookup");
  return DecodeRow(st->get(), 0, kernel_name, kernel_args);
}

}  // namespace tuna::db
