#include "admin/applicability.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::admin {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::vector<schema::ApplicabilityRecord> ComputeApplicability(
    const solver::Target& target, const std::vector<schema::StoredConfig>& configs,
    const std::vector<SolverRef>& solvers, int threads, const schema::ProgressFn& progress) {
  const size_t per_config = solvers.size();
  std::vector<schema::ApplicabilityRecord> out(configs.size() * per_config);
  if (out.empty()) return out;
  std::vector<std::vector<Direction>> directions;
  for (const SolverRef& s : solvers) directions.push_back(s.solver->Directions());

  std::atomic<size_t> next{0};
  std::atomic<size_t> checked{0};  // configs finished, for `progress`
  const auto total = static_cast<int64_t>(configs.size());
  if (progress) progress(0, total);
  auto work = [&](bool report) {
    // Small blocks of configs per grab: cheap solvers make per-config atomics visible.
    constexpr size_t kBlock = 16;
    for (;;) {
      const size_t begin = next.fetch_add(kBlock);
      if (begin >= configs.size()) return;
      const size_t end = std::min(configs.size(), begin + kBlock);
      for (size_t ci = begin; ci < end; ++ci) {
        const schema::StoredConfig& cfg = configs[ci];
        for (size_t si = 0; si < per_config; ++si) {
          schema::ApplicabilityRecord& r = out[ci * per_config + si];
          r.config_id = cfg.id;
          r.solver_id = solvers[si].id;
          const auto& dirs = directions[si];
          if (std::find(dirs.begin(), dirs.end(), cfg.problem.direction) == dirs.end()) {
            r.applicable = false;
            r.reason = absl::StrCat("direction ", std::string(DirectionName(cfg.problem.direction)),
                                    " not supported");
            continue;
          }
          absl::Status st = solvers[si].solver->IsApplicable(target, cfg.problem);
          r.applicable = st.ok();
          if (!st.ok()) r.reason = std::string(st.message());
        }
      }
      const size_t now_checked = checked.fetch_add(end - begin) + (end - begin);
      if (report && progress) progress(static_cast<int64_t>(now_checked), total);
    }
  };
  int n = threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(1, std::min<int>(n, static_cast<int>((configs.size() + 15) / 16)));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(work, false);
  work(true);  // the calling thread reports: progress is documented to run on it
  for (std::thread& t : pool) t.join();
  if (progress) progress(total, total);
  return out;
}

std::vector<std::string> UnsolvedConfigs(const std::vector<schema::StoredConfig>& configs,
                                         const std::vector<schema::ApplicabilityRecord>& records,
                                         size_t per_config) {
  std::vector<std::string> out;
  for (size_t ci = 0; ci < configs.size(); ++ci) {
    const auto first = records.begin() + static_cast<std::ptrdiff_t>(ci * per_config);
    const auto last = first + static_cast<std::ptrdiff_t>(per_config);
    if (std::any_of(first, last, [](const schema::ApplicabilityRecord& r) { return r.applicable; })) continue;
    std::string why = "no solver handles its direction";
    for (auto r = first; r != last; ++r) {
      if (r->reason.rfind("direction ", 0) != 0) {
        why = r->reason;
        break;
      }
    }
    out.push_back(absl::StrCat(ToDriverLine(configs[ci].problem), ": ", why));
  }
  return out;
}

absl::StatusOr<std::vector<SolverRef>> ValidRegistrySolvers(
    schema::Database& db, const solver::SolverRegistry& registry) {
  schema::SolverStore store(db);
  auto rows = store.List();
  if (!rows.ok()) return rows.status();
  std::vector<SolverRef> out;
  for (const schema::SolverRecord& row : *rows) {
    if (!row.valid) continue;
    const solver::RegisteredSolver* r = registry.ById(static_cast<uint64_t>(row.id));
    if (r == nullptr || r->solver->Name() != row.name) {
      spdlog::warn("solver {} ({}) is valid in the database but not in this binary's registry; "
                   "skipped (run `tuna solvers update`)",
                   row.id, row.name);
      continue;
    }
    out.push_back({row.id, r->solver});
  }
  if (out.empty()) {
    return absl::FailedPreconditionError(
        "the solver table has no solver of this registry: run `tuna solvers update` first");
  }
  return out;
}

absl::StatusOr<ApplicabilityReport> UpdateApplicability(schema::Database& db,
                                                        const solver::SolverRegistry& registry,
                                                        const ApplicabilityOptions& options) {
  schema::SessionStore sessions(db);
  auto session = sessions.Get(options.session_id);
  if (!session.ok()) return session.status();
  auto target = solver::TargetForArch(session->arch, static_cast<int>(session->num_cu));
  if (!target.ok()) return target.status();
  auto solvers = ValidRegistrySolvers(db, registry);
  if (!solvers.ok()) return solvers.status();
  schema::ConfigStore config_store(db);
  auto configs = config_store.List(options.tag);
  if (!configs.ok()) return configs.status();

  ApplicabilityReport report;
  report.configs = static_cast<int64_t>(configs->size());
  report.solvers = static_cast<int64_t>(solvers->size());
  auto t0 = std::chrono::steady_clock::now();
  std::vector<schema::ApplicabilityRecord> records =
      ComputeApplicability(*target, *configs, *solvers, options.threads,
                           ForStage(options.progress, "configs checked"));
  report.compute_seconds = SecondsSince(t0);
  for (const auto& r : records) (r.applicable ? report.applicable : report.not_applicable)++;
  report.unsolved = UnsolvedConfigs(*configs, records, solvers->size());

  auto t1 = std::chrono::steady_clock::now();
  schema::ApplicabilityStore store(db);
  if (options.progress) options.progress("rows stored", 0, static_cast<int64_t>(records.size()));
  auto stored = store.Upsert(options.session_id, records, ForStage(options.progress, "rows stored"));
  if (!stored.ok()) return stored;
  report.store_seconds = SecondsSince(t1);
  spdlog::info("applicability session {}: {} configs x {} solvers, {} applicable ({:.2f} s "
               "compute, {:.2f} s store)",
               options.session_id, report.configs, report.solvers, report.applicable,
               report.compute_seconds, report.store_seconds);
  for (const std::string& u : report.unsolved) spdlog::info("no solver applies to {}", u);
  return report;
}

}  // namespace tuna::admin
