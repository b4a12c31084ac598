#include "tuner_core/model/gbt_model.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"

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

// Prediction serves one problem at a time: one thread avoids OpenMP start-up per call.
absl::Status SetPredictParams(BoosterHandle b) {
  if (XGBoosterSetParam(b, "nthread", "1") != 0) return XgbError("XGBoosterSetParam");
  if (XGBoosterSetParam(b, "verbosity", "0") != 0) return XgbError("XGBoosterSetParam");
  return absl::OkStatus();
}

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

GbtModel::GbtModel(void* booster, size_t num_features, int rounds)
    : booster_(booster), num_features_(num_features), rounds_(rounds) {}

GbtModel::~GbtModel() {
  if (booster_ != nullptr) XGBoosterFree(booster_);
}

GbtModel::GbtModel(GbtModel&& o) noexcept
    : booster_(std::exchange(o.booster_, nullptr)), num_features_(o.num_features_), rounds_(o.rounds_) {}

GbtModel& GbtModel::operator=(GbtModel&& o) noexcept {
  if (this != &o) {
    if (booster_ != nullptr) XGBoosterFree(booster_);
    booster_ = std::exchange(o.booster_, nullptr);
    num_features_ = o.num_features_;
    rounds_ = o.rounds_;
  }
  return *this;
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
  if (absl::Status st = SetPredictParams(b.h); !st.ok()) return st;
  return GbtModel(b.Release(), d.features.cols, p.rounds);
}

absl::StatusOr<GbtModel> GbtModel::LoadFromBuffer(const std::string& bytes) {
  BoosterGuard b;
  if (XGBoosterCreate(nullptr, 0, &b.h) != 0) return XgbError("XGBoosterCreate");
  if (bytes.empty() || XGBoosterLoadModelFromBuffer(b.h, bytes.data(), bytes.size()) != 0) {
    return absl::DataLossError(absl::StrCat("not an xgboost model (", bytes.size(), " bytes): ",
                                            bytes.empty() ? "empty" : XGBGetLastError()));
  }
  bst_ulong features = 0;
  if (XGBoosterGetNumFeature(b.h, &features) != 0) return XgbError("XGBoosterGetNumFeature");
  int rounds = 0;
  if (XGBoosterBoostedRounds(b.h, &rounds) != 0) return XgbError("XGBoosterBoostedRounds");
  if (features == 0 || rounds == 0) return absl::DataLossError("xgboost model has no features or no trees");
  if (absl::Status st = SetPredictParams(b.h); !st.ok()) return st;
  return GbtModel(b.Release(), features, rounds);
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
  const std::string values = absl::StrCat(
      R"({"data": [)", reinterpret_cast<uintptr_t>(rows.values.data()), R"(, true], "shape": [)", rows.rows, ", ",
      rows.cols, R"(], "typestr": "<f4", "version": 3})");
  static constexpr char kConfig[] =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false, "missing": NaN, "cache_id": 0})";
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  if (XGBoosterPredictFromDense(booster_, values.c_str(), kConfig, nullptr, &shape, &dim, &out) != 0) {
    return XgbError("XGBoosterPredictFromDense");
  }
  return std::vector<float>(out, out + rows.rows);
}

absl::StatusOr<std::string> GbtModel::SaveToBuffer() const {
  bst_ulong len = 0;
  const char* data = nullptr;
  if (XGBoosterSaveModelToBuffer(booster_, R"({"format": "ubj"})", &len, &data) != 0) {
    return XgbError("XGBoosterSaveModelToBuffer");
  }
  return std::string(data, len);
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
