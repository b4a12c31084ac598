#include "tuner_core/heuristics/models.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "tuner_core/heuristics/features.h"
#include "tuner_core/json/json_text.h"

namespace tuna::heuristics {
namespace {

using json = ::tuna::Json;

json ToJson(const ModelMetadata& m) {
  json stats = json::array();
  for (size_t i = 0; i < m.feature_stats.size(); ++i) {
    json s = {{"name", m.problem_features[i]}, {"min", m.feature_stats[i].min}, {"max", m.feature_stats[i].max}};
    if (IsCategoricalFeature(m.problem_features[i])) s["seen"] = m.feature_stats[i].seen;
    stats.push_back(std::move(s));
  }
  json j = {{"format", m.format},           {"feature_layout", m.feature_layout}, {"basename", m.basename},
            {"arch", m.arch},               {"num_cu", m.num_cu},                 {"backend", m.backend},
            {"library", m.library},         {"tuna_version", m.tuna_version},     {"sessions", m.sessions},
            {"problem_features", stats},    {"holdout", m.holdout},               {"train_configs", m.train_configs}};
  if (m.picker) {
    json solvers = json::array();
    for (const auto& [id, name] : m.picker->solvers) solvers.push_back({{"id", id}, {"name", name}});
    j["picker"] = {{"file", m.picker->file}, {"objective", "reg:squarederror"}, {"target", "log2(time / fastest solver time of the problem)"}, {"solvers", solvers},
                   {"problems", m.picker->problems}};
  }
  j["predictors"] = json::array();
  for (const PredictorMeta& p : m.predictors) {
    j["predictors"].push_back({{"solver", p.solver}, {"file", p.file}, {"objective", "reg:squarederror"},
                               {"target", "log2(time / best time of the problem)"}, {"axes", p.axes},
                               {"problems", p.problems}, {"rows", p.rows}});
  }
  return j;
}

absl::StatusOr<ModelMetadata> FromJson(const json& j, const std::string& path) {
  ModelMetadata m;
  try {
    m.format = j.at("format").get<int>();
    if (m.format != kModelFormatVersion) {
      return absl::FailedPreconditionError(absl::StrCat(path, ": format ", m.format, ", expected ", kModelFormatVersion));
    }
    m.feature_layout = j.at("feature_layout").get<int>();
    m.basename = j.at("basename").get<std::string>();
    m.arch = j.at("arch").get<std::string>();
    m.num_cu = j.at("num_cu").get<int>();
    m.backend = j.at("backend").get<std::string>();
    m.library = j.at("library").get<std::string>();
    m.tuna_version = j.at("tuna_version").get<std::string>();
    m.sessions = j.at("sessions").get<std::vector<int64_t>>();
    for (const json& s : j.at("problem_features")) {
      m.problem_features.push_back(s.at("name").get<std::string>());
      FeatureStats st{s.at("min").get<float>(), s.at("max").get<float>(), {}};
      if (s.contains("seen")) st.seen = s.at("seen").get<std::vector<float>>();
      m.feature_stats.push_back(std::move(st));
    }
    m.holdout = j.at("holdout").get<double>();
    m.train_configs = j.at("train_configs").get<std::vector<std::string>>();
    if (j.contains("picker")) {
      const json& p = j.at("picker");
      PickerMeta pm{p.at("file").get<std::string>(), {}, p.at("problems").get<int64_t>()};
      for (const json& s : p.at("solvers")) pm.solvers.emplace_back(s.at("id").get<uint64_t>(), s.at("name").get<std::string>());
      m.picker = std::move(pm);
    }
    for (const json& p : j.at("predictors")) {
      m.predictors.push_back({p.at("solver").get<std::string>(), p.at("file").get<std::string>(),
                              p.at("axes").get<std::vector<std::string>>(), p.at("problems").get<int64_t>(),
                              p.at("rows").get<int64_t>()});
    }
  } catch (const json::exception& e) {
    return absl::DataLossError(absl::StrCat(path, ": ", e.what()));
  }
  if (m.feature_layout != kFeatureLayoutVersion || m.problem_features != ProblemFeatureNames()) {
    return absl::FailedPreconditionError(absl::StrCat(path, ": feature layout ", m.feature_layout,
                                                      " is not this tuna's (", kFeatureLayoutVersion, ")"));
  }
  return m;
}

// Files are plain names inside the model directory (never paths).
absl::Status CheckFileName(const std::string& name, const std::string& path) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
    return absl::DataLossError(absl::StrCat(path, ": bad model file name '", name, "'"));
  }
  return absl::OkStatus();
}

absl::Status WriteTemp(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace

std::string MetadataFileName(const std::string& basename) { return basename + "_metadata.tn.json"; }
std::string PickerFileName(const std::string& basename) { return basename + ".tn.model"; }
std::string PredictorFileName(const std::string& basename, const std::string& solver) {
  return absl::StrCat(basename, "_", solver, ".ktn.model");
}

Models::Models(ModelMetadata meta, std::optional<model::GbtModel> picker,
               std::map<std::string, model::GbtModel> predictors)
    : meta_(std::move(meta)), picker_(std::move(picker)), predictors_(std::move(predictors)) {}

absl::StatusOr<std::shared_ptr<const Models>> Models::Load(const std::string& dir, const std::string& basename) {
  const std::string path = (std::filesystem::path(dir) / MetadataFileName(basename)).string();
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("no heuristics metadata ", path));
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::DataLossError(absl::StrCat(path, ": not JSON"));
  absl::StatusOr<ModelMetadata> meta = FromJson(j, path);
  if (!meta.ok()) return meta.status();
  std::optional<model::GbtModel> picker;
  const size_t nf = meta->problem_features.size();
  if (meta->picker) {
    if (absl::Status st = CheckFileName(meta->picker->file, path); !st.ok()) return st;
    absl::StatusOr<model::GbtModel> m = model::GbtModel::LoadFromFile((std::filesystem::path(dir) / meta->picker->file).string());
    if (!m.ok()) return m.status();
    if (m->num_features() != nf + meta->picker->solvers.size()) {
      return absl::DataLossError(absl::StrCat(meta->picker->file, ": ", m->num_features(), " features, metadata says ",
                                              nf + meta->picker->solvers.size()));
    }
    picker = *std::move(m);
  }
  std::map<std::string, model::GbtModel> predictors;
  for (const PredictorMeta& p : meta->predictors) {
    if (absl::Status st = CheckFileName(p.file, path); !st.ok()) return st;
    absl::StatusOr<model::GbtModel> m = model::GbtModel::LoadFromFile((std::filesystem::path(dir) / p.file).string());
    if (!m.ok()) return m.status();
    if (m->num_features() != nf + p.axes.size()) {
      return absl::DataLossError(absl::StrCat(p.file, ": ", m->num_features(), " features, metadata says ", nf + p.axes.size()));
    }
    predictors.emplace(p.solver, *std::move(m));
  }
  return std::make_shared<const Models>(*std::move(meta), std::move(picker), std::move(predictors));
}

absl::StatusOr<std::vector<std::string>> Models::Write(const std::string& dir) const {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::vector<std::pair<std::string, std::string>> files;  // name, bytes; metadata last
  if (picker_) {
    absl::StatusOr<std::string> b = picker_->SaveToBuffer();
    if (!b.ok()) return b.status();
    files.emplace_back(meta_.picker->file, *std::move(b));
  }
  for (const PredictorMeta& p : meta_.predictors) {
    absl::StatusOr<std::string> b = predictors_.at(p.solver).SaveToBuffer();
    if (!b.ok()) return b.status();
    files.emplace_back(p.file, *std::move(b));
  }
  files.emplace_back(MetadataFileName(meta_.basename), JsonText(ToJson(meta_), /*items_on_lines=*/true) + "\n");
  std::vector<std::string> paths;
  for (const auto& [name, bytes] : files) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (absl::Status st = WriteTemp(path + ".tmp", bytes); !st.ok()) {
      for (const auto& f : files) std::remove((std::filesystem::path(dir) / f.first).string().append(".tmp").c_str());
      return st;
    }
    paths.push_back(path);
  }
  for (const std::string& p : paths) {
    std::filesystem::rename(p + ".tmp", p, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot rename ", p, ".tmp: ", ec.message()));
  }
  return paths;
}

absl::Status Models::CheckRange(const Problem& problem, const solver::Target& target) const {
  const std::vector<float> f = ProblemFeatures(problem, target);
  for (size_t i = 0; i < f.size() && i < meta_.feature_stats.size(); ++i) {
    const FeatureStats& s = meta_.feature_stats[i];
    const std::string& name = meta_.problem_features[i];
    if (IsCategoricalFeature(name)) {
      if (!std::binary_search(s.seen.begin(), s.seen.end(), f[i])) {
        return absl::OutOfRangeError(absl::StrCat(name, " = ", f[i], " was not in the training data"));
      }
    } else if (f[i] < std::min(s.min / 2, s.min - 1) || f[i] > std::max(s.max * 2, s.max + 1)) {
      return absl::OutOfRangeError(
          absl::StrCat(name, " = ", f[i], " is outside the training range [", s.min, ", ", s.max, "]"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<solver::RegisteredSolver>> Models::RankSolvers(
    const Problem& problem, const solver::Target& target,
    const std::vector<solver::RegisteredSolver>& applicable) const {
  if (!picker_) return absl::NotFoundError("the heuristics have no solver picker");
  if (absl::Status st = CheckRange(problem, target); !st.ok()) return st;
  const std::vector<float> pf = ProblemFeatures(problem, target);
  model::DenseMatrix rows;
  std::vector<solver::RegisteredSolver> known, unknown;
  for (const solver::RegisteredSolver& r : applicable) {
    const auto& names = meta_.picker->solvers;
    auto it = std::find_if(names.begin(), names.end(), [&](const auto& s) { return s.second == r.solver->Name(); });
    if (it == names.end()) {
      unknown.push_back(r);
      continue;
    }
    std::vector<float> row = pf;
    for (size_t j = 0; j < names.size(); ++j) row.push_back(names.begin() + j == it ? 1.f : 0.f);
    if (absl::Status st = rows.AddRow(row); !st.ok()) return st;
    known.push_back(r);
  }
  if (known.empty()) return absl::OutOfRangeError("the picker knows none of the applicable solvers");
  absl::StatusOr<std::vector<float>> scores = picker_->Predict(rows);
  if (!scores.ok()) return scores.status();
  std::vector<size_t> order(known.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*scores)[a] < (*scores)[b]; });
  std::vector<solver::RegisteredSolver> out;
  for (size_t i : order) out.push_back(known[i]);
  out.insert(out.end(), unknown.begin(), unknown.end());
  return out;
}

absl::StatusOr<std::vector<float>> Models::ScoreConfigs(const Problem& problem, const solver::Target& target,
                                                        const std::string& solver, const solver::SearchSpace& space,
                                                        const std::vector<solver::PerfConfig>& configs) const {
  auto it = predictors_.find(solver);
  if (it == predictors_.end()) return absl::NotFoundError(absl::StrCat("no perf-config predictor for ", solver));
  if (absl::Status st = CheckRange(problem, target); !st.ok()) return st;
  const auto meta = std::find_if(meta_.predictors.begin(), meta_.predictors.end(),
                                 [&](const PredictorMeta& p) { return p.solver == solver; });
  const std::vector<float> pf = ProblemFeatures(problem, target);
  model::DenseMatrix rows;
  rows.cols = pf.size() + meta->axes.size();
  rows.values.reserve(rows.cols * configs.size());
  for (const solver::PerfConfig& c : configs) {
    rows.values.insert(rows.values.end(), pf.begin(), pf.end());
    const std::vector<float> cf = ConfigFeatures(space, c, meta->axes);
    rows.values.insert(rows.values.end(), cf.begin(), cf.end());
    ++rows.rows;
  }
  return it->second.Predict(rows);
}

}  // namespace tuna::heuristics
