#include "tuner_core/runtime/db_files.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/db/db_basename.h"

namespace tuna::runtime {

std::string_view BackendDbSuffix(backend::BackendKind kind) {
  switch (kind) {
    case backend::BackendKind::kHip: return "HIP";
    case backend::BackendKind::kCuda: return "CUDA";
    case backend::BackendKind::kCpu: return "CPU";
  }
  return "CPU";
}

std::string BareArch(std::string_view arch) {
  const size_t colon = arch.find(':');
  return std::string(colon == std::string_view::npos ? arch : arch.substr(0, colon));
}

DbFiles MakeDbFiles(backend::BackendKind kind, std::string_view arch, int num_cu,
                    const std::string& system_dir, const std::string& user_dir) {
  DbFiles f;
  const std::string bare = BareArch(arch);
  f.basename = db::DbBasename(bare, static_cast<uint32_t>(num_cu < 0 ? 0 : num_cu));
  const std::string suffix(BackendDbSuffix(kind));
  if (!system_dir.empty()) {
    const std::string base = absl::StrCat(system_dir, "/", f.basename);
    f.system_find_db = absl::StrCat(base, ".", suffix, ".fdb.txt");
    f.system_perf_db_txt = absl::StrCat(base, ".db.txt");
    f.system_perf_db_sqlite = absl::StrCat(base, ".db");
    f.system_kdb = absl::StrCat(base, ".kdb");
    f.system_kdb_arch = absl::StrCat(system_dir, "/", bare, ".kdb");
  }
  if (!user_dir.empty()) {
    const std::string base =
        absl::StrCat(user_dir, "/", f.basename, ".", suffix, ".", std::string(kUserDbVersion));
    f.user_find_db = absl::StrCat(base, ".ufdb.txt");
    f.user_perf_db = absl::StrCat(base, ".udb.txt");
  }
  return f;
}

}  // namespace tuna::runtime
