#include "tuner_core/heuristics/training.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "tuner_core/hash/sha256.h"
#include "tuner_core/heuristics/features.h"

namespace tuna::heuristics {
namespace {

// Min / max per feature, seen values of the categorical ones.
std::vector<FeatureStats> Stats(const std::vector<const ProblemRecord*>& train, const solver::Target& target) {
  const std::vector<std::string>& names = ProblemFeatureNames();
  std::vector<FeatureStats> stats(names.size());
  std::vector<std::set<float>> seen(names.size());
  bool first = true;
  for (const ProblemRecord* r : train) {
    const std::vector<float> f = ProblemFeatures(r->problem, target);
    for (size_t i = 0; i < f.size(); ++i) {
      stats[i].min = first ? f[i] : std::min(stats[i].min, f[i]);
      stats[i].max = first ? f[i] : std::max(stats[i].max, f[i]);
      if (IsCategoricalFeature(names[i])) seen[i].insert(f[i]);
    }
    first = false;
  }
  for (size_t i = 0; i < names.size(); ++i) stats[i].seen.assign(seen[i].begin(), seen[i].end());
  return stats;
}

// The picker over every solver timed in the training problems.
absl::StatusOr<std::optional<model::GbtModel>> TrainPicker(const std::vector<const ProblemRecord*>& train,
                                                            const TrainingSet& set, const TrainOptions& o,
                                                            const solver::SolverRegistry& registry,
                                                            ModelMetadata& meta, TrainReport& report) {
  std::set<std::pair<uint64_t, std::string>> solvers;
  for (const ProblemRecord* r : train) {
    for (const auto& [name, ms] : r->solver_ms) {
      if (const solver::RegisteredSolver* s = registry.ByName(name); s != nullptr) solvers.emplace(s->id, name);
    }
  }
  if (solvers.empty()) return std::optional<model::GbtModel>();
  PickerMeta pm{PickerFileName(set.basename), {solvers.begin(), solvers.end()}, 0};
  model::TrainData data;
  for (const ProblemRecord* r : train) {
    const std::vector<float> pf = ProblemFeatures(r->problem, set.target);
    uint32_t group = 0;
    for (size_t j = 0; j < pm.solvers.size(); ++j) {
      auto t = r->solver_ms.find(pm.solvers[j].second);
      if (t == r->solver_ms.end()) continue;
      std::vector<float> row = pf;
      for (size_t k = 0; k < pm.solvers.size(); ++k) row.push_back(k == j ? 1.f : 0.f);
      if (absl::Status st = data.features.AddRow(row); !st.ok()) return st;
      double best = t->second;
      for (const auto& [other, ms] : r->solver_ms) best = std::min(best, ms);
      data.labels.push_back(best > 0 ? static_cast<float>(std::log2(t->second / best)) : 0.f);
      ++group;
    }
    pm.problems += group > 0 ? 1 : 0;
  }
  if (data.features.rows == 0) return std::optional<model::GbtModel>();
  absl::StatusOr<model::GbtModel> m = model::GbtModel::Train(data, o.picker);
  if (!m.ok()) return m.status();
  report.picker_rows = static_cast<int64_t>(data.features.rows);
  meta.picker = std::move(pm);
  return std::optional<model::GbtModel>(*std::move(m));
}

// The predictor of one tunable solver; nullopt when it has no usable sample.
absl::StatusOr<std::optional<model::GbtModel>> TrainPredictor(const std::vector<const ProblemRecord*>& train,
                                                               const TrainingSet& set, const TrainOptions& o,
                                                               const solver::Solver& s, PredictorMeta& pm,
                                                               TrainReport& report) {
  const std::string name(s.Name());
  model::TrainData data;
  std::set<std::string> axes;
  for (const ProblemRecord* r : train) {
    auto it = r->samples.find(name);
    if (it == r->samples.end()) continue;
    const solver::SearchSpace space = s.Space(set.target, r->problem);
    for (const solver::ParamAxis& a : space.axes()) axes.insert(a.name);
  }
  pm.axes.assign(axes.begin(), axes.end());
  for (const ProblemRecord* r : train) {
    auto it = r->samples.find(name);
    if (it == r->samples.end() || it->second.empty()) continue;
    const solver::SearchSpace space = s.Space(set.target, r->problem);
    double best = 0;
    for (const TimedParams& t : it->second) best = best == 0 ? t.ms : std::min(best, t.ms);
    if (!(best > 0)) continue;
    const std::vector<float> pf = ProblemFeatures(r->problem, set.target);
    bool used = false;
    for (const TimedParams& t : it->second) {
      absl::StatusOr<solver::PerfConfig> c = space.Parse(t.params);
      if (!c.ok() || !(t.ms > 0)) {
        ++report.skipped_samples;
        continue;
      }
      std::vector<float> row = pf;
      const std::vector<float> cf = ConfigFeatures(space, *c, pm.axes);
      row.insert(row.end(), cf.begin(), cf.end());
      if (absl::Status st = data.features.AddRow(row); !st.ok()) return st;
      data.labels.push_back(static_cast<float>(std::log2(t.ms / best)));
      used = true;
    }
    pm.problems += used ? 1 : 0;
  }
  if (data.features.rows == 0) return std::optional<model::GbtModel>();
  absl::StatusOr<model::GbtModel> m = model::GbtModel::Train(data, o.predictor);
  if (!m.ok()) return m.status();
  pm.rows = static_cast<int64_t>(data.features.rows);
  report.predictor_rows[name] = pm.rows;
  return std::optional<model::GbtModel>(*std::move(m));
}

}  // namespace

bool HeldOut(const std::string& config_key, double holdout, uint64_t seed) {
  if (holdout <= 0) return false;
  const std::string h = hash::Sha256Hex(absl::StrCat(seed, ":", config_key));
  const double u = static_cast<double>(std::stoull(h.substr(0, 8), nullptr, 16)) / 4294967296.0;
  return u < holdout;
}

absl::StatusOr<std::shared_ptr<const Models>> TrainModels(const TrainingSet& set, const TrainOptions& o,
                                                          TrainReport* report) {
  if (!(o.holdout >= 0 && o.holdout < 1)) {
    return absl::InvalidArgumentError(absl::StrCat("holdout ", o.holdout, " is not in [0, 1)"));
  }
  const solver::SolverRegistry& registry = o.registry != nullptr ? *o.registry : solver::SolverRegistry::Builtin();
  TrainReport local;
  TrainReport& rep = report != nullptr ? *report : local;
  ModelMetadata meta;
  meta.feature_layout = kFeatureLayoutVersion;
  meta.basename = set.basename;
  meta.arch = set.target.arch;
  meta.num_cu = set.target.num_cu;
  meta.backend = set.backend;
  meta.library = "xgboost " + model::LibraryVersion();
  meta.tuna_version = o.tuna_version;
  meta.sessions = set.sessions;
  meta.problem_features = ProblemFeatureNames();
  meta.holdout = o.holdout;
  std::vector<const ProblemRecord*> train;
  for (const ProblemRecord& r : set.problems) {
    if (HeldOut(r.config_key, o.holdout, o.seed)) {
      ++rep.held_out_problems;
    } else if (!r.solver_ms.empty() || !r.samples.empty()) {
      train.push_back(&r);
      meta.train_configs.push_back(r.config_key);
    }
  }
  rep.train_problems = static_cast<int64_t>(train.size());
  if (train.empty()) return absl::InvalidArgumentError("no timed config left to train on");
  std::sort(meta.train_configs.begin(), meta.train_configs.end());
  meta.feature_stats = Stats(train, set.target);
  absl::StatusOr<std::optional<model::GbtModel>> picker = TrainPicker(train, set, o, registry, meta, rep);
  if (!picker.ok()) return picker.status();
  std::map<std::string, model::GbtModel> predictors;
  for (const solver::RegisteredSolver& r : registry.All()) {
    if (!r.solver->IsTunable()) continue;
    PredictorMeta pm{std::string(r.solver->Name()), PredictorFileName(set.basename, std::string(r.solver->Name())), {}, 0, 0};
    absl::StatusOr<std::optional<model::GbtModel>> m = TrainPredictor(train, set, o, *r.solver, pm, rep);
    if (!m.ok()) return m.status();
    if (!m->has_value()) continue;
    predictors.emplace(pm.solver, std::move(**m));
    meta.predictors.push_back(std::move(pm));
  }
  return std::make_shared<const Models>(std::move(meta), *std::move(picker), std::move(predictors));
}

}  // namespace tuna::heuristics
