// The runtime's view of the find and perf dbs: user over system, MIOpen's precedence rules
// (research/MIOPEN_DB_FORMATS.md §1.5, §2.3):
//   find db   the user record, when the user file has the key, is used ENTIRELY; otherwise the
//             system record (MultiFileDb<..., merge=false>).
//   perf db   the user record merged over the system record: user solver ids win, system ids
//             missing from the user record are added (MultiFileDb<..., merge=true>).
// Writes go to the user files only (text formats, whole-file rewrite through `<file>.tmp` and a
// rename, plus MIOpen's `<file>.time` stamp); system files are never written.
//
// System files are read once and kept (they are read-only); user files are re-read at each
// access so that another Handle or process writing them is seen. Concurrent writers of the
// same user file from several processes are not serialised (MIOpen uses a lock file): the last
// rename wins.
//
// Every access is counted in DbStats, which is how tests check which records were read and
// written. Threads: one thread at a time (owned by a Handle).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/problem.h"
#include "tuner_core/runtime/db_files.h"

namespace tuna::runtime {

enum class DbSource { kNone, kUser, kSystem };
std::string_view DbSourceName(DbSource s);  // "none", "user db", "system db"

struct DbStats {
  int user_find_hits = 0, system_find_hits = 0, find_misses = 0;
  int user_find_writes = 0;
  int user_perf_hits = 0, system_perf_hits = 0, perf_misses = 0;
  int user_perf_writes = 0, user_perf_removes = 0;
};

struct FindRecordLookup {
  DbSource source = DbSource::kNone;
  std::vector<db::FindDbEntry> entries;  // as stored (not sorted)
};

struct PerfLookup {
  DbSource source = DbSource::kNone;
  std::string params;
};

class RuntimeDb {
 public:
  RuntimeDb(DbFiles files, bool disable_find_db);

  const DbFiles& files() const { return files_; }
  const DbStats& stats() const { return stats_; }

  // User record, else system record (FindDbKey(problem)).
  FindRecordLookup LookupFind(const Problem& problem);
  // The user file only (MIOpen's UserFindDbRecord::TryLoad used by NORMAL Find).
  FindRecordLookup LookupUserFind(const Problem& problem);
  // Replaces the user record of the problem (no merge, as MIOpen's StoreRecord).
  // FailedPrecondition when user dbs are disabled; I/O errors as the writer reports them.
  absl::Status StoreUserFind(const Problem& problem, std::vector<db::FindDbEntry> entries);

  // The solver's params: user record merged over the system record, so the user entry wins.
  PerfLookup LookupPerf(const Problem& problem, std::string_view solver);
  // Adds or replaces one solver's params in the user record (other solvers kept).
  absl::Status UpdateUserPerf(const Problem& problem, std::string_view solver,
                              const std::string& params);
  // Removes one solver's entry from the user record (DB_CLEAN); OK when absent.
  absl::Status RemoveUserPerf(const Problem& problem, std::string_view solver);

 private:
  void LoadSystem();
  DbFiles files_;
  bool disable_find_db_;
  bool system_loaded_ = false;
  db::FindDb system_find_;
  std::map<std::string, std::map<std::string, std::string>> system_perf_text_;
  std::optional<db::PerfDbReader> system_perf_sqlite_;  // when the system perf db is SQLite
  DbStats stats_;
};

}  // namespace tuna::runtime
