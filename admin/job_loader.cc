#include "admin/job_loader.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "admin/applicability.h"
#include "schema/store/applicability_store.h"
#include "schema/store/job_store.h"
#include "schema/store/session_store.h"
#include "spdlog/spdlog.h"
#include "tuner_core/solver/target.h"

namespace tuna::admin {

absl::StatusOr<std::vector<std::string>> KindsForFinSteps(const std::vector<std::string>& steps) {
  bool perf = false, find = false;
  for (const std::string& s : steps) {
    if (s == "miopen_perf_compile" || s == "miopen_perf_eval") {
      perf = true;
    } else if (s == "miopen_find_compile" || s == "miopen_find_eval") {
      find = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown fin step '", s,
          "' (expected miopen_perf_compile, miopen_perf_eval, miopen_find_compile, "
          "miopen_find_eval)"));
    }
  }
  if (!perf && !find) return absl::InvalidArgumentError("no fin steps given (--fin_steps)");
  std::vector<std::string> kinds;
  if (perf) kinds.push_back("perf");
  if (find) kinds.push_back("find");
  return kinds;
}

namespace {

// `items` split per config, in the order configs first appear: each config's items for which
// `pick` holds, then its others, each part in the order given.
template <typename T, typename ConfigOf, typename Pick>
std::vector<std::pair<std::vector<T>, std::vector<T>>> SplitByConfig(const std::vector<T>& items,
                                                                     ConfigOf config_of, Pick pick) {
  std::vector<std::pair<std::vector<T>, std::vector<T>>> groups;
  std::map<int64_t, size_t> index;  // config -> its group
  for (const T& item : items) {
    auto [it, fresh] = index.try_emplace(config_of(item), groups.size());
    if (fresh) groups.emplace_back();
    (pick(item) ? groups[it->second].first : groups[it->second].second).push_back(item);
  }
  return groups;
}

template <typename T>
void Append(const std::vector<T>& from, std::vector<T>& to) {
  to.insert(to.end(), from.begin(), from.end());
}

// `pairs` grouped by config in the order configs first appear, each config's generic solvers
// (Solver::IsGeneric on its problem) after its others, otherwise in the order given.
std::vector<std::pair<int64_t, int64_t>> GenericLast(const std::vector<std::pair<int64_t, int64_t>>& pairs,
                                                     const std::map<int64_t, const solver::Solver*>& solvers,
                                                     const std::map<int64_t, Problem>& problems,
                                                     const solver::Target& target) {
  std::vector<std::pair<int64_t, int64_t>> out;
  out.reserve(pairs.size());
  const auto groups = SplitByConfig(
      pairs, [](const auto& p) { return p.first; },
      [&](const auto& p) { return solvers.at(p.second)->IsGeneric(target, problems.at(p.first)); });
  for (const auto& [generic, others] : groups) {
    Append(others, out);
    Append(generic, out);
  }
  return out;
}

}  // namespace

std::vector<schema::JobSpec> FindOnlyAhead(const std::vector<schema::JobSpec>& jobs,
                                           const std::function<bool(const schema::JobSpec&)>& find_only,
                                           size_t ahead) {
  const auto groups = SplitByConfig(jobs, [](const schema::JobSpec& j) { return j.config_id; }, find_only);
  std::vector<schema::JobSpec> out;
  out.reserve(jobs.size());
  ahead = std::max<size_t>(ahead, 1);
  for (size_t i = 0; i < groups.size(); ++i) {
    // Config i's turn: the find-only jobs of the configs that enter the window now.
    for (size_t k = i == 0 ? 0 : i + ahead - 1; k < std::min(groups.size(), i + ahead); ++k) {
      Append(groups[k].first, out);
    }
    Append(groups[i].second, out);
  }
  return out;
}

absl::StatusOr<LoadJobsReport> LoadJobs(schema::Database& db,
                                        const solver::SolverRegistry& registry,
                                        const LoadJobsOptions& options) {
  LoadJobsReport report;
  auto kinds = KindsForFinSteps(options.fin_steps);
  if (!kinds.ok()) return kinds.status();
  report.kinds = *kinds;
  schema::SessionStore sessions(db);
  auto session = sessions.Get(options.session_id);
  if (!session.ok()) return session.status();
  // Within a config, generic solvers' jobs come after the others' (job ids, the claim order):
  // a generic search then more often meets the config's faster results and stops when it is
  // outclassed. An arch this build does not know keeps the solvers' order.
  auto target = solver::TargetForArch(session->arch, static_cast<int>(session->num_cu));

  auto all_solvers = ValidRegistrySolvers(db, registry);
  if (!all_solvers.ok()) return all_solvers.status();
  std::map<int64_t, const solver::Solver*> solvers;
  if (options.solvers.empty()) {
    for (const SolverRef& s : *all_solvers) solvers[s.id] = s.solver;
  } else {
    for (const std::string& name : options.solvers) {
      auto it = std::find_if(all_solvers->begin(), all_solvers->end(),
                             [&](const SolverRef& s) { return s.solver->Name() == name; });
      if (it == all_solvers->end()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "solver '", name, "' is not a valid solver of this registry (see `tuna solvers list`)"));
      }
      solvers[it->id] = it->solver;
    }
  }
  report.solvers = static_cast<int64_t>(solvers.size());

  schema::ConfigStore config_store(db);
  auto configs = config_store.List(options.tag);
  if (!configs.ok()) return configs.status();
  if (configs->empty()) {
    return absl::NotFoundError(absl::StrCat("no config is tagged '", options.tag, "'"));
  }
  report.configs = static_cast<int64_t>(configs->size());

  // (config, solver) candidates.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (options.only_applicable) {
    schema::ApplicabilityStore store(db);
    auto applicable = store.Applicable(options.session_id);
    if (!applicable.ok()) return applicable.status();
    auto counts = store.Count(options.session_id);
    if (!counts.ok()) return counts.status();
    if (counts->applicable + counts->not_applicable == 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "session ", options.session_id,
          " has no applicability yet: run `tuna applicability update --session_id ",
          options.session_id, "` first (or load without -o)"));
    }
    std::set<int64_t> tagged;
    for (const auto& c : *configs) tagged.insert(c.id);
    for (const auto& a : *applicable) {
      if (tagged.count(a.config_id) && solvers.count(a.solver_id)) {
        pairs.emplace_back(a.config_id, a.solver_id);
      }
    }
  } else {
    for (const auto& c : *configs) {
      for (const auto& [id, s] : solvers) {
        const auto dirs = s->Directions();
        if (std::find(dirs.begin(), dirs.end(), c.problem.direction) != dirs.end()) {
          pairs.emplace_back(c.id, id);
        }
      }
    }
  }

  if (target.ok()) {
    std::map<int64_t, Problem> problems;
    for (const auto& c : *configs) problems.emplace(c.id, c.problem);
    pairs = GenericLast(pairs, solvers, problems, *target);
  }
  std::vector<schema::JobSpec> jobs;
  for (const auto& [config_id, solver_id] : pairs) {
    for (const std::string& kind : report.kinds) {
      if (kind == "perf" && !solvers.at(solver_id)->IsTunable()) {
        ++report.skipped_not_tunable;
        continue;
      }
      jobs.push_back({config_id, solver_id, kind});
    }
  }
  // On a GPU the find-only jobs fill the device while the first builds compile: compiled first,
  // and evaluated where no other job is ready (fillers); on the CPU backend the device is the
  // compiler's cores, so the order stays (the quickstart's tune step gained nothing with them
  // ahead: docs/BENCHMARKS.md, CI rows of 2026-12-02).
  if (target.ok() && target->IsGpu()) {
    for (schema::JobSpec& j : jobs) j.filler = j.kind == "find" && !solvers.at(j.solver_id)->IsTunable();
    jobs = FindOnlyAhead(jobs, [](const schema::JobSpec& j) { return j.filler; }, kFindOnlyAhead);
  }
  schema::JobStore job_store(db);
  if (options.progress) options.progress("jobs stored", 0, static_cast<int64_t>(jobs.size()));
  auto counts = job_store.Load(options.session_id, jobs, options.label,
                               ForStage(options.progress, "jobs stored"));
  if (!counts.ok()) return counts.status();
  report.added = counts->added;
  report.existing = counts->existing;
  spdlog::info("jobs load session {} tag {} kinds {}: {} new, {} existing", options.session_id,
               options.tag, absl::StrJoin(report.kinds, ","), report.added, report.existing);
  return report;
}

}  // namespace tuna::admin
