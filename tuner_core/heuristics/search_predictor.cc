#include "tuner_core/heuristics/search_predictor.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "tuner_core/heuristics/config_scorer.h"
#include "tuner_core/heuristics/models.h"
#include "tuner_core/runtime/db_files.h"

namespace tuna::heuristics {
namespace {

static_assert(std::is_same_v<ConfigScoreFn, search::ScoreFn>, "a config scorer is the search's score");

using ModelSets = std::map<std::string, std::shared_ptr<const Models>>;  // by basename

std::string Describe(const Models& m) {
  std::vector<std::string> solvers;
  for (const PredictorMeta& p : m.metadata().predictors) solvers.push_back(p.solver);
  return absl::StrCat(m.metadata().basename, ": ",
                      solvers.empty() ? "no perf-config predictors" : "predictors for " + absl::StrJoin(solvers, ", "),
                      " (sessions ", absl::StrJoin(m.metadata().sessions, ", "), ")");
}

// The set serving `target`: its basename's, else the first (by basename) of the same arch and
// backend; null when none.
const Models* SetFor(const ModelSets& sets, const solver::Target& target, std::string& basename) {
  basename = runtime::MakeDbFiles(target.backend, target.arch, target.num_cu, "", "").basename;
  if (auto it = sets.find(basename); it != sets.end()) return it->second.get();
  const std::string arch = runtime::BareArch(target.arch);
  const std::string backend = backend::BackendKindName(target.backend);
  for (const auto& [base, m] : sets) {
    if (m->metadata().arch == arch && absl::EqualsIgnoreCase(m->metadata().backend, backend)) return m.get();
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<SearchPredictor> LoadSearchPredictor(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return absl::NotFoundError(absl::StrCat("heuristics model directory ", dir, " does not exist"));
  }
  const std::string suffix = MetadataFileName("");  // "_metadata.tn.json"
  std::vector<std::string> basenames;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.ends_with(suffix)) {
      basenames.push_back(name.substr(0, name.size() - suffix.size()));
    }
  }
  if (ec) return absl::UnavailableError(absl::StrCat("cannot list ", dir, ": ", ec.message()));
  if (basenames.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        dir, " holds no heuristics models (<base>", suffix,
        "; `tuna heuristics train -o DIR` or `tuna export --heuristics` writes them)"));
  }
  std::sort(basenames.begin(), basenames.end());
  auto sets = std::make_shared<ModelSets>();
  SearchPredictor out;
  for (const std::string& base : basenames) {
    absl::StatusOr<std::shared_ptr<const Models>> m = Models::Load(dir, base);
    if (!m.ok()) {
      return absl::Status(m.status().code(), absl::StrCat("heuristics models ", base, " in ", dir, ": ", m.status().message()));
    }
    out.sets.push_back(Describe(**m));
    sets->emplace(base, *std::move(m));
  }
  out.predictor = [sets, dir](const Problem& problem, const solver::Target& target,
                              const solver::Solver& solver) -> absl::StatusOr<search::ScoreFn> {
    std::string basename;
    const Models* m = SetFor(*sets, target, basename);
    if (m == nullptr) return absl::NotFoundError(absl::StrCat("no heuristics model for ", basename, " in ", dir));
    // The scorer keeps the set alive: an aliasing pointer into the shared map.
    return MakeConfigScorer(std::shared_ptr<const Models>(sets, m), problem, target, solver);
  };
  return out;
}

}  // namespace tuna::heuristics
