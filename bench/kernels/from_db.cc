#include "bench/kernels/from_db.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "tuner_core/db/db_basename.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/keys.h"

namespace tuna::bench {

absl::StatusOr<std::string> FindPerfDb(const std::string& dir, const solver::Target& target) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return absl::NotFoundError(absl::StrCat(dir, " is not a directory"));
  const fs::path named = fs::path(dir) / (db::DbBasename(target.arch, static_cast<uint32_t>(target.num_cu)) + ".db");
  if (fs::is_regular_file(named, ec)) return named.string();
  std::vector<std::string> found;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".db") found.push_back(e.path().string());
  }
  if (found.empty()) return absl::NotFoundError(absl::StrCat("no perf db (*.db) in ", dir));
  if (found.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat(found.size(), " perf dbs in ", dir, " and none named ",
                                                   named.filename().string()));
  }
  return found[0];
}

absl::StatusOr<DbJobs> ReadDbJobs(const std::string& path, const solver::SolverRegistry& registry,
                                  const solver::Target& target) {
  absl::StatusOr<db::PerfDbReader> reader = db::PerfDbReader::Open(path);
  if (!reader.ok()) return reader.status();
  absl::StatusOr<std::vector<db::PerfDbRow>> rows = reader->ReadAll();
  if (!rows.ok()) return rows.status();
  DbJobs out;
  out.path = path;
  for (const db::PerfDbRow& row : *rows) {
    auto skip = [&](std::string reason) { out.skipped.push_back({row.solver, row.params, std::move(reason)}); };
    absl::StatusOr<Problem> p = FromPerfDbConfig(row.config);
    if (!p.ok()) {
      skip(absl::StrCat("config: ", p.status().message()));
      continue;
    }
    const solver::RegisteredSolver* rs = registry.ByName(row.solver);
    if (rs == nullptr) {
      skip("unknown solver");
      continue;
    }
    if (absl::Status st = rs->solver->IsApplicable(target, *p); !st.ok()) {
      skip(absl::StrCat("not applicable on ", target.arch, ": ", st.message()));
      continue;
    }
    absl::StatusOr<solver::PerfConfig> config = rs->solver->Space(target, *p).Parse(row.params);
    if (!config.ok()) {
      skip(absl::StrCat("params: ", config.status().message()));
      continue;
    }
    if (absl::Status st = rs->solver->IsValid(target, *p, *config); !st.ok()) {
      skip(absl::StrCat("params not valid: ", st.message()));
      continue;
    }
    out.jobs.push_back(DbJob{*p, rs->solver, *std::move(config), row.params});
  }
  return out;
}

}  // namespace tuna::bench
