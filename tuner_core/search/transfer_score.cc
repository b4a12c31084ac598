#include "tuner_core/search/transfer_score.h"

#include <cmath>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/model/gbt_model.h"

namespace tuna::search {
namespace {

std::vector<float> Row(const solver::PerfConfig& c) {
  std::vector<float> row;
  row.reserve(c.values.size());
  for (int64_t v : c.values) {
    row.push_back(static_cast<float>(v > 0 ? std::log2(static_cast<double>(v)) : -std::log2(1.0 + static_cast<double>(-v))));
  }
  return row;
}

}  // namespace

absl::StatusOr<ScoreFn> TransferScore(const solver::SearchSpace& space, const std::vector<TransferPoint>& points) {
  model::TrainData data;
  for (const TransferPoint& p : points) {
    absl::StatusOr<solver::PerfConfig> c = space.Parse(p.params);
    if (!c.ok() || !std::isfinite(p.slowdown)) continue;
    if (absl::Status st = data.features.AddRow(Row(*c)); !st.ok()) return st;
    data.labels.push_back(static_cast<float>(p.slowdown));
  }
  if (data.labels.size() < kMinTransferPoints) {
    return absl::NotFoundError(absl::StrCat(data.labels.size(), " of ", points.size(),
                                            " transfer points fit this space (", kMinTransferPoints, " needed)"));
  }
  model::TrainParams params;
  params.rounds = 60;
  params.max_depth = 4;
  params.threads = 1;
  absl::StatusOr<model::GbtModel> trained = model::GbtModel::Train(data, params);
  if (!trained.ok()) return trained.status();
  auto gbt = std::make_shared<const model::GbtModel>(*std::move(trained));
  return ScoreFn([gbt](const std::vector<solver::PerfConfig>& configs) -> absl::StatusOr<std::vector<float>> {
    if (configs.empty()) return std::vector<float>{};
    model::DenseMatrix rows;
    for (const solver::PerfConfig& c : configs) {
      if (absl::Status st = rows.AddRow(Row(c)); !st.ok()) return st;
    }
    return gbt->Predict(rows);
  });
}

}  // namespace tuna::search
