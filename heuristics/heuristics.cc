#include "heuristics/heuristics.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "schema/store/result_store.h"
#include "schema/store/sample_store.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/hash/sha256.h"
#include "tuner_core/runtime/db_files.h"
#include "tuner_core/runtime/fallback.h"
#include "tuner_core/solver/target.h"

namespace tuna::heuristics_cli {
namespace {

using heuristics::ProblemRecord;
using heuristics::TrainingSet;

absl::StatusOr<backend::BackendKind> KindOf(const std::string& backend) {
  std::string lower = backend;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  return backend::ParseBackendKind(lower);
}

// The one target of the sessions; InvalidArgument naming a session that differs.
absl::Status ReadTarget(schema::Database& db, const std::vector<int64_t>& sessions, TrainingSet& set) {
  if (sessions.empty()) return absl::InvalidArgumentError("no session given");
  std::optional<schema::SessionTarget> first;
  for (int64_t id : sessions) {
    absl::StatusOr<schema::SessionTarget> t = schema::ReadSessionTarget(db, id);
    if (!t.ok()) return t.status();
    if (first && (t->arch != first->arch || t->num_cu != first->num_cu || t->backend != first->backend)) {
      return absl::InvalidArgumentError(absl::StrCat("session ", id, " targets ", t->arch, " (", t->num_cu, " CUs, ",
                                                     t->backend, "), session ", first->id, " ", first->arch, " (",
                                                     first->num_cu, " CUs, ", first->backend, "): train one target at a time"));
    }
    if (!first) first = *t;
  }
  absl::StatusOr<solver::Target> target = solver::TargetForArch(runtime::BareArch(first->arch), static_cast<int>(first->num_cu));
  if (!target.ok()) return target.status();
  absl::StatusOr<backend::BackendKind> kind = KindOf(first->backend);
  if (!kind.ok()) return kind.status();
  set.target = *target;
  set.backend = first->backend;
  set.basename = runtime::MakeDbFiles(*kind, first->arch, static_cast<int>(first->num_cu), "", "").basename;
  set.sessions = sessions;
  return absl::OkStatus();
}

// config id -> (solver -> find time) and (solver -> params -> fastest sample) of one session.
struct SessionData {
  std::map<int64_t, std::map<std::string, double>> find;
  std::map<int64_t, std::map<std::string, std::map<std::string, double>>> samples;
};

absl::StatusOr<SessionData> ReadSession(schema::Database& db, int64_t session, int page_size) {
  SessionData d;
  absl::Status st = schema::ScanExportableFindResults(
      db, session, page_size, [&](const std::vector<schema::FindResultRow>& rows) {
        for (const schema::FindResultRow& r : rows) {
          auto [it, fresh] = d.find[r.config_id].emplace(r.solver, r.kernel_time);
          if (!fresh) it->second = std::min(it->second, r.kernel_time);
        }
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  st = schema::ScanPassedSamples(db, session, page_size, [&](const std::vector<schema::CandidateSample>& rows) {
    for (const schema::CandidateSample& r : rows) {
      auto [it, fresh] = d.samples[r.config_id][r.solver].emplace(r.params, r.time_ms);
      if (!fresh) it->second = std::min(it->second, r.time_ms);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return d;
}

// Folds one session's data into the records, keyed by config hash.
absl::Status Merge(schema::Database& db, const SessionData& d, std::map<std::string, ProblemRecord>& records) {
  std::vector<int64_t> ids;
  for (const auto& [id, _] : d.find) ids.push_back(id);
  for (const auto& [id, _] : d.samples) ids.push_back(id);
  absl::StatusOr<schema::SessionConfigs> configs = schema::ReadConfigs(db, ids);
  if (!configs.ok()) return configs.status();
  for (const auto& [id, problem] : configs->problems) {
    const std::string key = hash::Sha256Hex(problem.Canonical());
    ProblemRecord& r = records[key];
    r.config_key = key;
    r.problem = problem;
    if (auto it = d.find.find(id); it != d.find.end()) {
      for (const auto& [solver, ms] : it->second) {
        auto [t, fresh] = r.solver_ms.emplace(solver, ms);
        if (!fresh) t->second = std::min(t->second, ms);
      }
    }
    if (auto it = d.samples.find(id); it != d.samples.end()) {
      for (const auto& [solver, by_params] : it->second) {
        std::vector<heuristics::TimedParams>& v = r.samples[solver];
        for (const auto& [params, ms] : by_params) {
          auto same = std::find_if(v.begin(), v.end(), [&](const auto& t) { return t.params == params; });
          if (same == v.end()) {
            v.push_back({params, ms});
          } else {
            same->ms = std::min(same->ms, ms);
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<TrainingSet> ReadTrainingSet(schema::Database& db, const std::vector<int64_t>& sessions, int page_size) {
  TrainingSet set;
  if (absl::Status st = ReadTarget(db, sessions, set); !st.ok()) return st;
  std::map<std::string, ProblemRecord> records;
  for (int64_t s : std::set<int64_t>(sessions.begin(), sessions.end())) {
    absl::StatusOr<SessionData> d = ReadSession(db, s, page_size);
    if (!d.ok()) return d.status();
    if (absl::Status st = Merge(db, *d, records); !st.ok()) return st;
  }
  for (auto& [_, r] : records) set.problems.push_back(std::move(r));
  return set;
}

absl::StatusOr<TrainOutcome> TrainFromSessions(schema::Database& db, const TrainRequest& req) {
  absl::StatusOr<TrainingSet> set = ReadTrainingSet(db, req.sessions);
  if (!set.ok()) return set.status();
  if (req.basename) set->basename = *req.basename;
  TrainOutcome out;
  absl::StatusOr<std::shared_ptr<const heuristics::Models>> models =
      heuristics::TrainModels(*set, req.options, &out.report);
  if (!models.ok()) return models.status();
  absl::StatusOr<std::vector<std::string>> files = (*models)->Write(req.output_dir);
  if (!files.ok()) return files.status();
  out.basename = set->basename;
  out.files = *std::move(files);
  out.predictors = (*models)->metadata().predictors.size();
  out.picker = (*models)->has_picker();
  return out;
}

absl::StatusOr<EvalOutcome> EvaluateSession(schema::Database& db, int64_t session_id, const std::string& model_dir,
                                            const MeasureFactory& measure) {
  absl::StatusOr<TrainingSet> set = ReadTrainingSet(db, {session_id});
  if (!set.ok()) return set.status();
  absl::StatusOr<std::shared_ptr<const heuristics::Models>> models = heuristics::Models::Load(model_dir, set->basename);
  if (!models.ok()) return models.status();
  const std::vector<std::string>& trained = (*models)->metadata().train_configs;
  EvalOutcome out;
  out.basename = set->basename;
  std::vector<const ProblemRecord*> test;
  for (const ProblemRecord& r : set->problems) {
    ++out.session_configs;
    if (std::binary_search(trained.begin(), trained.end(), r.config_key)) {
      ++out.trained_on;
    } else {
      test.push_back(&r);
    }
  }
  if (test.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("every config of session ", session_id,
                                                   " was trained on: train with --holdout > 0 to evaluate"));
  }
  absl::StatusOr<backend::BackendKind> kind = KindOf(set->backend);
  if (!kind.ok()) return kind.status();
  heuristics::MeasureFn measure_fn;
  if (measure) {
    absl::StatusOr<heuristics::MeasureFn> made = measure(*set);
    if (!made.ok()) return made.status();
    measure_fn = *std::move(made);
  }
  backend::DeviceInfo info;
  info.arch = set->target.arch;
  info.compute_units = set->target.num_cu;
  absl::StatusOr<heuristics::EvalReport> rep = heuristics::Evaluate(
      **models, test, set->target, runtime::ModelForDevice(*kind, info), solver::SolverRegistry::Builtin(), measure_fn);
  if (!rep.ok()) return rep.status();
  out.report = *std::move(rep);
  return out;
}

}  // namespace tuna::heuristics_cli
