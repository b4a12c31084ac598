// Where the runtime's databases live (research/MIOPEN_DB_FORMATS.md §3, §4).
//
//   system find db   <sysdir>/<base>.<BACKEND>.fdb.txt
//   system perf db   <sysdir>/<base>.db.txt (text, ROCm >= 6.2 default), else <sysdir>/<base>.db (SQLite)
//   system kernels   <sysdir>/<base>.kdb, else <sysdir>/<bare arch>.kdb
//   user find db     <userdir>/<base>.<BACKEND>.<kUserDbVersion>.ufdb.txt
//   user perf db     <userdir>/<base>.<BACKEND>.<kUserDbVersion>.udb.txt
//
// <base> is db::DbBasename(arch, num_cu) ("gfx90a68", "sm_9084", "cpu-avx2_16"); <BACKEND> is
// MIOpen's backend suffix for HIP ("HIP") and tuna's for the others ("CUDA", "CPU").
//
// kUserDbVersion stands where MIOpen puts <MAJOR>_<MINOR>_<PATCH>_<TWEAK> of the library build.
// tuna uses the version of its user db *format* instead ("1_0_0", MIOpen's older tweak-less
// form), bumped only when what the runtime writes changes meaning: MIOpen's per-build suffix
// throws away every user's tuning at each rebuild, which a tuning service should not do.
// Pure functions, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "tuner_core/backend/backend.h"

namespace tuna::runtime {

inline constexpr std::string_view kUserDbVersion = "1_0_0";

// "HIP", "CUDA", "CPU".
std::string_view BackendDbSuffix(backend::BackendKind kind);
// Arch without target features: "gfx90a:sramecc+:xnack-" -> "gfx90a".
std::string BareArch(std::string_view arch);

struct DbFiles {
  std::string basename;
  std::string system_find_db;     // empty when there is no system dir
  std::string system_perf_db_txt;
  std::string system_perf_db_sqlite;
  std::string system_kdb;         // <base>.kdb
  std::string system_kdb_arch;    // <bare arch>.kdb
  std::string user_find_db;       // empty when user dbs are disabled
  std::string user_perf_db;
};

DbFiles MakeDbFiles(backend::BackendKind kind, std::string_view arch, int num_cu,
                    const std::string& system_dir, const std::string& user_dir);

}  // namespace tuna::runtime
