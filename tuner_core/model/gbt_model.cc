#include "tuner_core/model/gbt_model.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace tuna::model {
namespace {

absl::Status XgbError(const char* call) {
  return absl::InternalError(absl::StrCat("xgboost ", call, ": ", XGBGetLastError()));
}

// Frees a DMatrix at scope exit.
struct MatrixGuard {
  DMatrixHandle h = nullptr;
  ~MatrixGuard() {
    if (h != nullptr) XGDMatrixFree(h);
  }
};

struct BoosterGuard {
  BoosterHandle h = nullptr;
  ~BoosterGuard() {
    if (h != nullptr) XGBoosterFree(h);
  }
  BoosterHandle Release() { return std::exchange(h, nullptr); }
};

absl::Status CheckTrainData(const TrainData& d, const TrainParams& p) {
  const DenseMatrix& m = d.features;
  if (m.rows == 0 || m.cols == 0) return absl::InvalidArgumentError("training data: no rows or no features");
  if (m.values.size() != m.rows * m.cols) {
    return absl::InvalidArgumentError(
        absl::StrCat("training data: ", m.values.size(), " values for ", m.rows, " x ", m.cols));
  }
  if (d.labels.size() != m.rows) {
    return absl::InvalidArgumentError(absl::StrCat("training data: ", d.labels.size(), " labels for ", m.rows, " rows"));
  }
  for (size_t i = 0; i < d.labels.size(); ++i) {
    if (!std::isfinite(d.labels[i])) {
      return absl::InvalidArgumentError(absl::StrCat("training data: label of row ", i, " is not finite"));
    }
  }
  if (p.objective == Objective::kPairwiseRank) {
    uint64_t sum = 0;
    for (uint32_t g : d.group_sizes) sum += g;
    if (d.group_sizes.empty() || sum != m.rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("training data: group sizes sum to ", sum, ", rows are ", m.rows));
    }
  } else if (!d.group_sizes.empty()) {
    return absl::InvalidArgumentError("training data: group sizes given for a regression");
  }
  if (p.rounds < 1 || p.max_depth < 1 || !(p.eta > 0 && p.eta <= 1) || !(p.subsample > 0 && p.subsample <= 1)) {
    return absl::InvalidArgumentError(absl::StrCat("train params: rounds ", p.rounds, ", max_depth ", p.max_depth,
                                                   ", eta ", p.eta, ", subsample ", p.subsample, " out of range"));
  }
  return absl::OkStatus();
}

absl::Status SetParams(BoosterHandle b, const TrainParams& p) {
  const std::pair<const char*, std::string> params[] = {
      {"objective", std::string(ObjectiveName(p.objective))},
      {"max_depth", std::to_string(p.max_depth)},
      {"eta", absl::StrCat(p.eta)},
      {"min_child_weight", absl::StrCat(p.min_child_weight)},
      {"subsample", absl::StrCat(p.subsample)},
      {"seed", std::to_string(p.seed)},
      {"tree_method", "hist"},
      {"verbosity", "0"},
      {"nthread", std::to_string(p.threads)},
  };
  for (const auto& [k, v] : params) {
    if (XGBoosterSetParam(b, k, v.c_str()) != 0) return XgbError("XGBoosterSetParam");
  }
  return absl::OkStatus();
}

// Serialisation of the "TGBT" format: little-endian (x86 and every supported host).
constexpr char kMagic[4] = {'T', 'G', 'B', 'T'};
constexpr uint32_t kFormatVersion = 1;

template <typename T>
void Put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <typename T>
void PutArray(std::string& out, const std::vector<T>& v) {
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Reads from a byte buffer, failing (once, sticky) past its end.
struct Reader {
  const std::string& bytes;
  size_t at = 0;
  bool ok = true;
  template <typename T>
  T Get() {
    T v{};
    if (!ok || bytes.size() - at < sizeof(T)) {
      ok = false;
      return v;
    }
    std::memcpy(&v, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
  }
  template <typename T>
  void GetArray(std::vector<T>& v, size_t n) {
    if (!ok || (bytes.size() - at) / sizeof(T) < n) {
      ok = false;
      return;
    }
    v.resize(n);
    std::memcpy(v.data(), bytes.data() + at, n * sizeof(T));
    at += n * sizeof(T);
  }
};

}  // namespace

std::string_view ObjectiveName(Objective o) {
  return o == Objective::kPairwiseRank ? "rank:pairwise" : "reg:squarederror";
}

absl::Status DenseMatrix::AddRow(const std::vector<float>& row) {
  if (rows == 0 && cols == 0) cols = row.size();
  if (row.size() != cols || cols == 0) {
    return absl::InvalidArgumentError(absl::StrCat("row ", rows, " has ", row.size(), " features, expected ", cols));
  }
  values.insert(values.end(), row.begin(), row.end());
  ++rows;
  return absl::OkStatus();
}

absl::StatusOr<GbtModel> GbtModel::FromXgboostJson(const std::string& text) {
  using nlohmann::json;
  GbtModel m;
  try {
    const json j = json::parse(text);
    const json& learner = j.at("learner");
    m.base_score_ = std::stof(learner.at("learner_model_param").at("base_score").get<std::string>());
    m.num_features_ = std::stoul(learner.at("learner_model_param").at("num_feature").get<std::string>());
    for (const json& t : learner.at("gradient_booster").at("model").at("trees")) {
      Tree tree;
      tree.left = t.at("left_children").get<std::vector<int32_t>>();
      tree.right = t.at("right_children").get<std::vector<int32_t>>();
      tree.split = t.at("split_indices").get<std::vector<int32_t>>();
      tree.value = t.at("split_conditions").get<std::vector<float>>();
      tree.default_left = t.at("default_left").get<std::vector<uint8_t>>();
      m.trees_.push_back(std::move(tree));
    }
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("xgboost model JSON: ", e.what()));
  }
  m.rounds_ = static_cast<int>(m.trees_.size());
  if (absl::Status st = m.CheckTrees(); !st.ok()) return absl::InternalError(st.message());
  m.Pack();
  return m;
}

// Every node array of one length, children inside the tree and after their parent (so a walk
// ends), split features inside the row.
absl::Status GbtModel::CheckTrees() const {
  if (num_features_ == 0 || trees_.empty()) return absl::DataLossError("model has no features or no trees");
  for (size_t t = 0; t < trees_.size(); ++t) {
    const Tree& tr = trees_[t];
    const size_t n = tr.left.size();
    if (n == 0 || tr.right.size() != n || tr.split.size() != n || tr.value.size() != n || tr.default_left.size() != n) {
      return absl::DataLossError(absl::StrCat("tree ", t, ": node arrays of different lengths"));
    }
    for (size_t i = 0; i < n; ++i) {
      if (tr.left[i] == -1) continue;
      const bool inside = tr.left[i] > static_cast<int32_t>(i) && tr.right[i] > static_cast<int32_t>(i) &&
                          static_cast<size_t>(tr.left[i]) < n && static_cast<size_t>(tr.right[i]) < n;
      if (!inside || tr.split[i] < 0 || static_cast<size_t>(tr.split[i]) >= num_features_) {
        return absl::DataLossError(absl::StrCat("tree ", t, " node ", i, ": child or feature out of range"));
      }
    }
  }
  return absl::OkStatus();
}

void GbtModel::Pack() {
  nodes_.clear();
  roots_.clear();
  for (const Tree& t : trees_) {
    const int32_t base = static_cast<int32_t>(nodes_.size());
    roots_.push_back(base);
    for (size_t i = 0; i < t.left.size(); ++i) {
      const bool leaf = t.left[i] == -1;
      nodes_.push_back({leaf ? -1 : base + t.left[i], leaf ? -1 : base + t.right[i], t.split[i], t.value[i], t.default_left[i]});
    }
  }
}

float GbtModel::PredictRow(const float* row) const {
  float sum = base_score_;
  for (int32_t root : roots_) {
    const Node* n = &nodes_[root];
    while (n->left != -1) {
      const float x = row[n->split];
      n = &nodes_[std::isnan(x) ? (n->default_left ? n->left : n->right) : (x < n->value ? n->left : n->right)];
    }
    sum += n->value;
  }
  return sum;
}

absl::StatusOr<GbtModel> GbtModel::Train(const TrainData& d, const TrainParams& p) {
  if (absl::Status st = CheckTrainData(d, p); !st.ok()) return st;
  MatrixGuard m;
  if (XGDMatrixCreateFromMat(d.features.values.data(), d.features.rows, d.features.cols, std::nanf(""), &m.h) != 0) {
    return XgbError("XGDMatrixCreateFromMat");
  }
  if (XGDMatrixSetFloatInfo(m.h, "label", d.labels.data(), d.labels.size()) != 0) {
    return XgbError("XGDMatrixSetFloatInfo(label)");
  }
  if (!d.group_sizes.empty() &&
      XGDMatrixSetUIntInfo(m.h, "group", d.group_sizes.data(), d.group_sizes.size()) != 0) {
    return XgbError("XGDMatrixSetUIntInfo(group)");
  }
  BoosterGuard b;
  if (XGBoosterCreate(&m.h, 1, &b.h) != 0) return XgbError("XGBoosterCreate");
  if (absl::Status st = SetParams(b.h, p); !st.ok()) return st;
  for (int i = 0; i < p.rounds; ++i) {
    if (XGBoosterUpdateOneIter(b.h, i, m.h) != 0) return XgbError("XGBoosterUpdateOneIter");
  }
  bst_ulong len = 0;
  const char* json = nullptr;
  if (XGBoosterSaveModelToBuffer(b.h, R"({"format": "json"})", &len, &json) != 0) {
    return XgbError("XGBoosterSaveModelToBuffer");
  }
  absl::StatusOr<GbtModel> model = FromXgboostJson(std::string(json, len));
  if (!model.ok()) return model.status();
  // Self-check: this evaluator and XGBoost's own prediction agree on the training rows.
  bst_ulong n = 0;
  const float* expected = nullptr;
  if (XGBoosterPredict(b.h, m.h, 0, 0, 0, &n, &expected) != 0) return XgbError("XGBoosterPredict");
  for (size_t r = 0; r < d.features.rows && r < n; ++r) {
    const float got = model->PredictRow(d.features.values.data() + r * d.features.cols);
    if (std::fabs(got - expected[r]) > 1e-4f * std::max(1.f, std::fabs(expected[r]))) {
      return absl::InternalError(absl::StrCat("tree evaluation differs from xgboost on row ", r, ": ", got, " vs ", expected[r]));
    }
  }
  return model;
}

absl::StatusOr<GbtModel> GbtModel::LoadFromBuffer(const std::string& bytes) {
  Reader in{bytes};
  char magic[4];
  for (char& c : magic) c = in.Get<char>();
  const uint32_t version = in.Get<uint32_t>();
  if (!in.ok || std::memcmp(magic, kMagic, 4) != 0 || version != kFormatVersion) {
    return absl::DataLossError(absl::StrCat("not a TGBT v", kFormatVersion, " model (", bytes.size(), " bytes)"));
  }
  GbtModel m;
  m.num_features_ = in.Get<uint32_t>();
  m.base_score_ = in.Get<float>();
  const uint32_t trees = in.Get<uint32_t>();
  for (uint32_t t = 0; t < trees && in.ok; ++t) {
    Tree tr;
    const uint32_t nodes = in.Get<uint32_t>();
    in.GetArray(tr.left, nodes);
    in.GetArray(tr.right, nodes);
    in.GetArray(tr.split, nodes);
    in.GetArray(tr.value, nodes);
    in.GetArray(tr.default_left, nodes);
    m.trees_.push_back(std::move(tr));
  }
  if (!in.ok || in.at != bytes.size()) return absl::DataLossError("TGBT model truncated or with trailing bytes");
  m.rounds_ = static_cast<int>(m.trees_.size());
  if (absl::Status st = m.CheckTrees(); !st.ok()) return st;
  m.Pack();
  return m;
}

absl::StatusOr<GbtModel> GbtModel::LoadFromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("model file ", path, ": cannot open"));
  std::ostringstream s;
  s << in.rdbuf();
  absl::StatusOr<GbtModel> m = LoadFromBuffer(s.str());
  if (!m.ok()) return absl::Status(m.status().code(), absl::StrCat(path, ": ", m.status().message()));
  return m;
}

absl::StatusOr<std::vector<float>> GbtModel::Predict(const DenseMatrix& rows) const {
  if (rows.rows == 0) return std::vector<float>{};
  if (rows.cols != num_features_ || rows.values.size() != rows.rows * rows.cols) {
    return absl::InvalidArgumentError(
        absl::StrCat("predict: rows have ", rows.cols, " features, the model ", num_features_));
  }
  std::vector<float> out(rows.rows);
  for (size_t r = 0; r < rows.rows; ++r) out[r] = PredictRow(rows.values.data() + r * rows.cols);
  return out;
}

absl::StatusOr<std::string> GbtModel::SaveToBuffer() const {
  std::string out(kMagic, 4);
  Put(out, kFormatVersion);
  Put(out, static_cast<uint32_t>(num_features_));
  Put(out, base_score_);
  Put(out, static_cast<uint32_t>(trees_.size()));
  for (const Tree& t : trees_) {
    Put(out, static_cast<uint32_t>(t.left.size()));
    PutArray(out, t.left);
    PutArray(out, t.right);
    PutArray(out, t.split);
    PutArray(out, t.value);
    PutArray(out, t.default_left);
  }
  return out;
}

absl::Status GbtModel::SaveToFile(const std::string& path) const {
  absl::StatusOr<std::string> bytes = SaveToBuffer();
  if (!bytes.ok()) return bytes.status();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(bytes->data(), static_cast<std::streamsize>(bytes->size()));
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      return absl::InternalError(absl::StrCat("cannot write ", tmp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return absl::InternalError(absl::StrCat("cannot rename ", tmp, " to ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

std::string LibraryVersion() {
  int major = 0, minor = 0, patch = 0;
  XGBoostVersion(&major, &minor, &patch);
  return absl::StrCat(major, ".", minor, ".", patch);
}

}  // namespace tuna::model
