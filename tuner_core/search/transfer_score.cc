#include "tuner_core/search/transfer_score.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "tuner_core/model/gbt_model.h"
#include "tuner_core/problem/driver_line.h"

namespace tuna::search {
namespace {

std::vector<float> AxisRow(const solver::PerfConfig& c) {
  std::vector<float> row;
  row.reserve(c.values.size());
  for (int64_t v : c.values) row.push_back(static_cast<float>(AxisFeature(v)));
  return row;
}

// The features of a config on one problem: log2 of each axis value, then what its solution's
// largest launch says about how the problem maps onto the device (problem-aware, so that what
// other problems timed transfers to this one): blocks, blocks per compute unit and how full the
// last wave is, threads, shared memory, launches, work per block. NaN (missing) when the solver
// gives no solution.
std::vector<float> Features(const ScoreContext& ctx, const Problem& problem, const solver::PerfConfig& c) {
  std::vector<float> row = AxisRow(c);
  constexpr int kSolutionFeatures = 7;
  absl::StatusOr<solver::Solution> s =
      ctx.solver == nullptr ? absl::StatusOr<solver::Solution>(absl::UnavailableError("no solver"))
                            : ctx.solver->GetSolution(ctx.target, problem, c);
  if (!s.ok() || s->launches.empty()) {
    row.insert(row.end(), kSolutionFeatures, std::numeric_limits<float>::quiet_NaN());
    return row;
  }
  const solver::Launch* main = &s->launches.front();
  auto blocks_of = [](const solver::Launch& l) {
    return static_cast<double>(l.grid.x) * l.grid.y * l.grid.z;
  };
  for (const solver::Launch& l : s->launches) {
    if (blocks_of(l) * l.block.x * l.block.y * l.block.z >
        blocks_of(*main) * main->block.x * main->block.y * main->block.z) {
      main = &l;
    }
  }
  const double blocks = std::max(1.0, blocks_of(*main));
  const double cu = std::max(1, ctx.target.num_cu);
  const double waves = std::ceil(blocks / cu);
  row.push_back(static_cast<float>(std::log2(blocks)));
  row.push_back(static_cast<float>(std::log2(blocks / cu)));
  row.push_back(static_cast<float>(blocks / (waves * cu)));
  row.push_back(static_cast<float>(std::log2(static_cast<double>(main->block.x) * main->block.y * main->block.z)));
  row.push_back(static_cast<float>(std::log2(1.0 + static_cast<double>(main->shared_bytes) / 1024)));
  row.push_back(static_cast<float>(s->launches.size()));
  row.push_back(static_cast<float>(std::log2(std::max(1.0, problem.Flops() / blocks))));
  return row;
}

absl::StatusOr<std::shared_ptr<const model::GbtModel>> Train(model::TrainData data, size_t offered) {
  if (data.labels.size() < kMinTransferPoints) {
    return absl::NotFoundError(absl::StrCat(data.labels.size(), " of ", offered,
                                            " transfer points fit this space (", kMinTransferPoints, " needed)"));
  }
  model::TrainParams params;
  params.rounds = 60;
  params.max_depth = 6;  // axes x shape interactions (depth 4: 9.5 %, 3: 12.9 % on bench/search's tables)
  params.threads = 1;
  absl::StatusOr<model::GbtModel> trained = model::GbtModel::Train(data, params);
  if (!trained.ok()) return trained.status();
  return std::make_shared<const model::GbtModel>(*std::move(trained));
}

}  // namespace

absl::StatusOr<ScoreFn> TransferScore(const ScoreContext& ctx, const solver::SearchSpace& space,
                                      const std::vector<TransferRun>& runs) {
  model::TrainData data;
  size_t offered = 0;
  for (const TransferRun& run : runs) {
    offered += run.times.size();
    absl::StatusOr<std::vector<Problem>> problem = ParseDriverLine(run.driver);
    if (!problem.ok() || problem->size() != 1) continue;
    double best = std::numeric_limits<double>::infinity();
    for (const TransferTime& s : run.times)
      if (std::isfinite(s.ms) && s.ms > 0) best = std::min(best, s.ms);
    for (const TransferTime& s : run.times) {
      absl::StatusOr<solver::PerfConfig> c = space.Parse(s.params);
      if (!c.ok() || !std::isfinite(s.ms) || s.ms <= 0) continue;
      if (absl::Status st = data.features.AddRow(Features(ctx, problem->front(), space.Searched(*c))); !st.ok()) return st;
      data.labels.push_back(static_cast<float>(std::log2(s.ms / best)));
    }
  }
  absl::StatusOr<std::shared_ptr<const model::GbtModel>> gbt = Train(std::move(data), offered);
  if (!gbt.ok()) return gbt.status();
  return ScoreFn([ctx, gbt = *gbt](const std::vector<solver::PerfConfig>& configs) -> absl::StatusOr<std::vector<float>> {
    if (configs.empty()) return std::vector<float>{};
    model::DenseMatrix rows;
    for (const solver::PerfConfig& c : configs) {
      if (absl::Status st = rows.AddRow(Features(ctx, ctx.problem, c)); !st.ok()) return st;
    }
    return gbt->Predict(rows);
  });
}

}  // namespace tuna::search
