// A gradient-boosted-trees model over a dense float feature matrix (XGBoost, Debian's
// libxgboost 1.7, through its C API). Generic: it knows features as columns of floats and
// nothing of what they mean; the learned heuristics (tuner_core/heuristics) and the search's
// cost model build their feature rows themselves.
//
// Objectives:
//   kRegression   reg:squarederror, one target per row (e.g. log of a time).
//   kPairwiseRank rank:pairwise: rows come in groups (consecutive rows; group sizes given), the
//                 label is a relevance grade (higher = better) compared only inside a group;
//                 predictions are scores whose order inside a group is the ranking.
// Training is deterministic for equal data, params and seed (XGBoost's hist method on the CPU).
//
// Errors: absl::Status, never exceptions. InvalidArgument for bad shapes (feature count, label
// count, group sizes that do not sum to the rows, non-finite labels, a row of another width
// than the model's); Internal with XGBoost's message for a library failure; NotFound / DataLoss
// for a missing / unreadable model file.
//
// Trees are grown by XGBoost; the trained forest is then kept as plain arrays and evaluated by
// this module (XGBoost's in-place prediction costs ~150 us per call whatever the rows, and its
// model load tens of ms). Train checks that both agree on every training row (Internal when
// not). The file / buffer format is tuna's ("TGBT", version 1, little-endian: feature count,
// base score, then per tree its node arrays), loaded in a few microseconds per tree; the
// metadata of whoever uses the model records the XGBoost version it was trained with.
//
// Ownership and threads: a GbtModel owns its forest and is immutable once built (Train and the
// Load functions are factories). Predict and Save* are const and may be called from any number
// of threads at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tuna::model {

enum class Objective { kRegression, kPairwiseRank };
std::string_view ObjectiveName(Objective o);  // "reg:squarederror", "rank:pairwise"

// A dense row-major matrix: rows * cols floats. NaN marks a missing value.
struct DenseMatrix {
  size_t rows = 0;
  size_t cols = 0;
  std::vector<float> values;  // size rows * cols
  // Appends one row; the first row fixes `cols`. InvalidArgument for a row of another width.
  absl::Status AddRow(const std::vector<float>& row);
};

struct TrainParams {
  Objective objective = Objective::kRegression;
  int rounds = 100;      // boosting rounds (trees), >= 1
  int max_depth = 6;     // >= 1
  double eta = 0.3;      // learning rate, (0, 1]
  double min_child_weight = 1;
  double subsample = 1;  // (0, 1]
  uint64_t seed = 0;
  int threads = 0;       // training threads; 0 = XGBoost's default (all cores)
};

struct TrainData {
  DenseMatrix features;
  std::vector<float> labels;         // one per row
  std::vector<uint32_t> group_sizes;  // kPairwiseRank only: consecutive groups, sum = rows
};

class GbtModel {
 public:
  static absl::StatusOr<GbtModel> Train(const TrainData& data, const TrainParams& params);
  // The model saved by SaveToBuffer / SaveToFile. DataLoss when the bytes are not a model.
  static absl::StatusOr<GbtModel> LoadFromBuffer(const std::string& bytes);
  // NotFound when the file does not exist; DataLoss as LoadFromBuffer.
  static absl::StatusOr<GbtModel> LoadFromFile(const std::string& path);

  // One prediction per row (regression: the target; ranking: the score).
  absl::StatusOr<std::vector<float>> Predict(const DenseMatrix& rows) const;

  // The "TGBT" format above.
  absl::StatusOr<std::string> SaveToBuffer() const;
  // Written to `path + ".tmp"` and renamed: a reader never sees a partial file.
  absl::Status SaveToFile(const std::string& path) const;

  size_t num_features() const { return num_features_; }
  int rounds() const { return rounds_; }

 private:
  // One tree as parallel node arrays; node 0 is the root; a leaf has left == -1 and its value in
  // `value` (a split node's threshold otherwise: x[split] < value goes left, NaN follows
  // default_left).
  struct Tree {
    std::vector<int32_t> left, right, split;
    std::vector<float> value;
    std::vector<uint8_t> default_left;
  };
  // The trees' nodes packed one after the other for prediction (one cache line per step);
  // children are absolute indices into `nodes_`, built by Pack() from `trees_`.
  struct Node {
    int32_t left, right, split;
    float value;
    uint8_t default_left;
  };
  GbtModel() = default;
  void Pack();
  float PredictRow(const float* row) const;
  static absl::StatusOr<GbtModel> FromXgboostJson(const std::string& json);
  absl::Status CheckTrees() const;

  size_t num_features_ = 0;
  int rounds_ = 0;
  float base_score_ = 0;
  std::vector<Tree> trees_;
  std::vector<Node> nodes_;
  std::vector<int32_t> roots_;
};

// "1.7.4": the XGBoost library linked in (for model metadata).
std::string LibraryVersion();

}  // namespace tuna::model
