#include "tuner_core/runtime/runtime_db.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"
#include "tuner_core/db/perf_db_text.h"
#include "tuner_core/problem/keys.h"

namespace tuna::runtime {
namespace {

bool Exists(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}

// MIOpen's `<file>.time`: steady_clock ticks of the last write (its cache invalidation stamp).
void TouchTimeFile(const std::string& path) {
  std::ofstream(path + ".time")
      << std::chrono::steady_clock::now().time_since_epoch().count();
}

absl::Status EnsureParent(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create the directory of ", path, ": ", ec.message()));
  return absl::OkStatus();
}

db::FindDb ReadFindOrEmpty(const std::string& path) {
  if (!Exists(path)) return {};
  absl::StatusOr<db::FindDbReadResult> r = db::ReadFindDbFile(path);
  if (!r.ok()) {
    spdlog::warn("find db {}: {}", path, r.status().ToString());
    return {};
  }
  for (const auto& w : r->warnings) spdlog::debug("find db {}: line {}: {}", path, w.line, w.message);
  return std::move(r->records);
}

db::PerfDbText ReadPerfTextOrEmpty(const std::string& path) {
  if (!Exists(path)) return {};
  absl::StatusOr<db::PerfDbTextReadResult> r = db::ReadPerfDbTextFile(path);
  if (!r.ok()) {
    spdlog::warn("perf db {}: {}", path, r.status().ToString());
    return {};
  }
  return std::move(r->records);
}

}  // namespace

std::string_view DbSourceName(DbSource s) {
  switch (s) {
    case DbSource::kNone: return "none";
    case DbSource::kUser: return "user db";
    case DbSource::kSystem: return "system db";
  }
  return "none";
}

RuntimeDb::RuntimeDb(DbFiles files, bool disable_find_db)
    : files_(std::move(files)), disable_find_db_(disable_find_db) {}

void RuntimeDb::LoadSystem() {
  if (system_loaded_) return;
  system_loaded_ = true;
  if (!disable_find_db_) system_find_ = ReadFindOrEmpty(files_.system_find_db);
  if (Exists(files_.system_perf_db_txt)) {
    system_perf_text_ = ReadPerfTextOrEmpty(files_.system_perf_db_txt);
  } else if (Exists(files_.system_perf_db_sqlite)) {
    absl::StatusOr<db::PerfDbReader> r = db::PerfDbReader::Open(files_.system_perf_db_sqlite);
    if (r.ok()) {
      system_perf_sqlite_.emplace(*std::move(r));
    } else {
      spdlog::warn("perf db {}: {}", files_.system_perf_db_sqlite, r.status().ToString());
    }
  }
}

FindRecordLookup RuntimeDb::LookupUserFind(const Problem& problem) {
  FindRecordLookup out;
  if (disable_find_db_ || files_.user_find_db.empty()) return out;
  db::FindDb user = ReadFindOrEmpty(files_.user_find_db);
  auto it = user.find(FindDbKey(problem));
  if (it != user.end() && !it->second.empty()) {
    out.source = DbSource::kUser;
    out.entries = it->second;
    ++stats_.user_find_hits;
  }
  return out;
}

FindRecordLookup RuntimeDb::LookupFind(const Problem& problem) {
  FindRecordLookup out = LookupUserFind(problem);
  if (out.source != DbSource::kNone || disable_find_db_) {
    if (out.source == DbSource::kNone) ++stats_.find_misses;
    return out;
  }
  LoadSystem();
  auto it = system_find_.find(FindDbKey(problem));
  if (it != system_find_.end() && !it->second.empty()) {
    out.source = DbSource::kSystem;
    out.entries = it->second;
    ++stats_.system_find_hits;
  } else {
    ++stats_.find_misses;
  }
  return out;
}

absl::Status RuntimeDb::StoreUserFind(const Problem& problem, std::vector<db::FindDbEntry> entries) {
  if (files_.user_find_db.empty()) return absl::FailedPreconditionError("user dbs are disabled");
  if (disable_find_db_) return absl::OkStatus();
  if (absl::Status st = EnsureParent(files_.user_find_db); !st.ok()) return st;
  db::FindDb user = ReadFindOrEmpty(files_.user_find_db);
  db::SortFindDbEntries(entries);
  user[FindDbKey(problem)] = std::move(entries);
  if (absl::Status st = db::WriteFindDbFile(files_.user_find_db, user); !st.ok()) return st;
  TouchTimeFile(files_.user_find_db);
  ++stats_.user_find_writes;
  return absl::OkStatus();
}

PerfLookup RuntimeDb::LookupPerf(const Problem& problem, std::string_view solver) {
  PerfLookup out;
  const std::string key = PerfDbTextKey(problem);
  const std::string name(solver);
  if (!files_.user_perf_db.empty()) {
    db::PerfDbText user = ReadPerfTextOrEmpty(files_.user_perf_db);
    auto it = user.find(key);
    if (it != user.end()) {
      auto s = it->second.find(name);
      if (s != it->second.end()) {
        out.source = DbSource::kUser;
        out.params = s->second;
        ++stats_.user_perf_hits;
        return out;
      }
    }
  }
  LoadSystem();
  if (auto it = system_perf_text_.find(key); it != system_perf_text_.end()) {
    if (auto s = it->second.find(name); s != it->second.end()) {
      out.source = DbSource::kSystem;
      out.params = s->second;
    }
  } else if (system_perf_sqlite_.has_value()) {
    absl::StatusOr<std::vector<db::SolverParams>> rows = system_perf_sqlite_->Lookup(ToPerfDbConfig(problem));
    if (rows.ok()) {
      for (const db::SolverParams& r : *rows) {
        if (r.solver == name) {
          out.source = DbSource::kSystem;
          out.params = r.params;
          break;
        }
      }
    } else {
      spdlog::warn("perf db {}: {}", files_.system_perf_db_sqlite, rows.status().ToString());
    }
  }
  if (out.source == DbSource::kSystem) {
    ++stats_.system_perf_hits;
  } else {
    ++stats_.perf_misses;
  }
  return out;
}

absl::Status RuntimeDb::UpdateUserPerf(const Problem& problem, std::string_view solver,
                                       const std::string& params) {
  if (files_.user_perf_db.empty()) return absl::FailedPreconditionError("user dbs are disabled");
  if (absl::Status st = EnsureParent(files_.user_perf_db); !st.ok()) return st;
  db::PerfDbText user = ReadPerfTextOrEmpty(files_.user_perf_db);
  user[PerfDbTextKey(problem)][std::string(solver)] = params;
  if (absl::Status st = db::WritePerfDbTextFile(files_.user_perf_db, user); !st.ok()) return st;
  TouchTimeFile(files_.user_perf_db);
  ++stats_.user_perf_writes;
  return absl::OkStatus();
}

absl::Status RuntimeDb::RemoveUserPerf(const Problem& problem, std::string_view solver) {
  ++stats_.user_perf_removes;
  if (files_.user_perf_db.empty() || !Exists(files_.user_perf_db)) return absl::OkStatus();
  db::PerfDbText user = ReadPerfTextOrEmpty(files_.user_perf_db);
  auto it = user.find(PerfDbTextKey(problem));
  if (it == user.end() || it->second.erase(std::string(solver)) == 0) return absl::OkStatus();
  if (it->second.empty()) user.erase(it);
  if (absl::Status st = db::WritePerfDbTextFile(files_.user_perf_db, user); !st.ok()) return st;
  TouchTimeFile(files_.user_perf_db);
  return absl::OkStatus();
}

}  // namespace tuna::runtime
