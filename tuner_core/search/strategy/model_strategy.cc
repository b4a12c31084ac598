// Model-guided search: a cost model fitted on log(time) of the observed configs (strategy.h).
// Tile-size effects are roughly multiplicative in log2(axis values): the ridge model fits a
// quadratic bowl there (pairwise products capture TB_M*TB_N-style interactions); the trees of
// the GBT model split on the same log2 values and also catch cliffs (a tile that stops fitting
// in shared memory). Failed configs are fed back as slow (twice the slowest success) so the
// model steers away from regions that do not build. With a score (a learned predictor), the
// score is one more feature of both models: where it ranks this problem's configs well the fit
// leans on it from the first observations, and where it does not the fit learns that too.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_set>

#include "tuner_core/model/gbt_model.h"
#include "tuner_core/search/strategy/strategy_base.h"

namespace tuna::search {
namespace {

// The ridge model's features of a config, and the score's (`extra`, NaN = none) last.
std::vector<double> Features(const solver::PerfConfig& config, double extra) {
  const size_t d = config.values.size();
  std::vector<double> f;
  f.reserve(2 * d + d * (d - 1) / 2 + 1);
  std::vector<double> base(d);
  for (size_t i = 0; i < d; ++i) base[i] = AxisFeature(config.values[i]);
  for (size_t i = 0; i < d; ++i) f.push_back(base[i]);
  for (size_t i = 0; i < d; ++i) f.push_back(base[i] * base[i]);
  for (size_t i = 0; i < d; ++i)
    for (size_t j = i + 1; j < d; ++j) f.push_back(base[i] * base[j]);
  if (!std::isnan(extra)) f.push_back(extra);
  return f;
}

double ExtraOf(const std::vector<double>& extra, size_t i) {
  return extra.empty() ? std::numeric_limits<double>::quiet_NaN() : extra[i];
}

// Solves A x = b (A symmetric positive definite after the ridge term) by Gaussian elimination
// with partial pivoting; returns false when singular.
bool Solve(std::vector<std::vector<double>> a, std::vector<double> b, std::vector<double>& x) {
  const size_t n = b.size();
  for (size_t col = 0; col < n; ++col) {
    size_t pivot = col;
    for (size_t r = col + 1; r < n; ++r)
      if (std::fabs(a[r][col]) > std::fabs(a[pivot][col])) pivot = r;
    if (std::fabs(a[pivot][col]) < 1e-12) return false;
    std::swap(a[pivot], a[col]);
    std::swap(b[pivot], b[col]);
    for (size_t r = col + 1; r < n; ++r) {
      const double m = a[r][col] / a[col][col];
      if (m == 0) continue;
      for (size_t c = col; c < n; ++c) a[r][c] -= m * a[col][c];
      b[r] -= m * b[col];
    }
  }
  x.assign(n, 0);
  for (size_t i = n; i-- > 0;) {
    double s = b[i];
    for (size_t c = i + 1; c < n; ++c) s -= a[i][c] * x[c];
    x[i] = s / a[i][i];
  }
  return true;
}

class RidgeModel {
 public:
  // rows: feature vectors; y: targets. Features are standardised; the intercept is the mean.
  bool Fit(const std::vector<std::vector<double>>& rows, const std::vector<double>& y, double lambda) {
    if (rows.empty()) return false;
    const size_t p = rows[0].size();
    const double n = static_cast<double>(rows.size());
    mean_.assign(p, 0);
    scale_.assign(p, 0);
    for (const auto& r : rows)
      for (size_t j = 0; j < p; ++j) mean_[j] += r[j] / n;
    for (const auto& r : rows)
      for (size_t j = 0; j < p; ++j) scale_[j] += (r[j] - mean_[j]) * (r[j] - mean_[j]) / n;
    for (double& s : scale_) s = s > 1e-18 ? 1.0 / std::sqrt(s) : 0.0;  // constant feature: off
    y_mean_ = 0;
    for (double v : y) y_mean_ += v / n;
    std::vector<std::vector<double>> a(p, std::vector<double>(p, 0));
    std::vector<double> b(p, 0);
    std::vector<double> z(p);
    for (size_t i = 0; i < rows.size(); ++i) {
      for (size_t j = 0; j < p; ++j) z[j] = (rows[i][j] - mean_[j]) * scale_[j];
      for (size_t j = 0; j < p; ++j) {
        b[j] += z[j] * (y[i] - y_mean_);
        for (size_t k = j; k < p; ++k) a[j][k] += z[j] * z[k];
      }
    }
    for (size_t j = 0; j < p; ++j) {
      for (size_t k = 0; k < j; ++k) a[j][k] = a[k][j];
      a[j][j] += lambda * n + 1e-9;
    }
    return Solve(std::move(a), std::move(b), beta_);
  }
  double Predict(const std::vector<double>& f) const {
    double s = y_mean_;
    for (size_t j = 0; j < beta_.size(); ++j) s += beta_[j] * (f[j] - mean_[j]) * scale_[j];
    return s;
  }

 private:
  std::vector<double> mean_, scale_, beta_;
  double y_mean_ = 0;
};

// A cost model over configs: fitted on (config, log ms), predicting log ms (lower = faster).
// `extra` is one more feature per config (the score), or empty; Predict takes it as Fit did.
class CostModel {
 public:
  virtual ~CostModel() = default;
  // False when the data cannot be fitted (then the search proposes at random).
  virtual bool Fit(const std::vector<solver::PerfConfig>& configs, const std::vector<double>& extra,
                   const std::vector<double>& y) = 0;
  virtual std::vector<double> Predict(const std::vector<solver::PerfConfig>& configs,
                                      const std::vector<double>& extra) const = 0;
};

class RidgeCost final : public CostModel {
 public:
  explicit RidgeCost(double lambda) : lambda_(lambda) {}
  bool Fit(const std::vector<solver::PerfConfig>& configs, const std::vector<double>& extra,
           const std::vector<double>& y) override {
    std::vector<std::vector<double>> rows;
    for (size_t i = 0; i < configs.size(); ++i) rows.push_back(Features(configs[i], ExtraOf(extra, i)));
    return model_.Fit(rows, y, lambda_);
  }
  std::vector<double> Predict(const std::vector<solver::PerfConfig>& configs,
                              const std::vector<double>& extra) const override {
    std::vector<double> out;
    out.reserve(configs.size());
    for (size_t i = 0; i < configs.size(); ++i) out.push_back(model_.Predict(Features(configs[i], ExtraOf(extra, i))));
    return out;
  }

 private:
  double lambda_;
  RidgeModel model_;
};

class GbtCost final : public CostModel {
 public:
  explicit GbtCost(const ModelStrategyOptions& o) {
    params_.objective = model::Objective::kRegression;
    params_.rounds = std::max(1, o.gbt_rounds);
    params_.max_depth = std::max(1, o.gbt_depth);
    params_.eta = 0.3;
    params_.seed = 0;
    params_.threads = 1;  // deterministic and off the cores that compile candidates
  }
  bool Fit(const std::vector<solver::PerfConfig>& configs, const std::vector<double>& extra,
           const std::vector<double>& y) override {
    model::TrainData data;
    data.features = Matrix(configs, extra);
    for (double v : y) data.labels.push_back(static_cast<float>(v));
    absl::StatusOr<model::GbtModel> m = model::GbtModel::Train(data, params_);
    if (!m.ok()) return false;
    model_.emplace(*std::move(m));
    return true;
  }
  std::vector<double> Predict(const std::vector<solver::PerfConfig>& configs,
                              const std::vector<double>& extra) const override {
    absl::StatusOr<std::vector<float>> p = model_->Predict(Matrix(configs, extra));
    if (!p.ok()) return std::vector<double>(configs.size(), 0.0);  // ties: index order
    return std::vector<double>(p->begin(), p->end());
  }

 private:
  static model::DenseMatrix Matrix(const std::vector<solver::PerfConfig>& configs, const std::vector<double>& extra) {
    model::DenseMatrix m;
    m.rows = configs.size();
    m.cols = (configs.empty() ? 0 : configs.front().values.size()) + (extra.empty() ? 0 : 1);
    m.values.reserve(m.rows * m.cols);
    for (size_t i = 0; i < configs.size(); ++i) {
      for (int64_t v : configs[i].values) m.values.push_back(static_cast<float>(AxisFeature(v)));
      if (!extra.empty()) m.values.push_back(static_cast<float>(extra[i]));
    }
    return m;
  }
  model::TrainParams params_;
  std::optional<model::GbtModel> model_;
};

std::unique_ptr<CostModel> NewCostModel(const ModelStrategyOptions& o) {
  if (o.cost_model == CostModelKind::kRidge) return std::make_unique<RidgeCost>(o.ridge_lambda);
  return std::make_unique<GbtCost>(o);
}

class ModelStrategy final : public internal::StrategyBase {
 public:
  explicit ModelStrategy(ModelStrategyOptions options) : options_(options) {}
  std::string_view Name() const override { return "model"; }

  void Observe(const std::vector<Observation>& observations) override {
    for (const Observation& o : observations) {
      std::optional<uint64_t> index = input().space.Index(o.config);
      if (!index) continue;
      observed_[*index] = o.ok && o.time_ms > 0 && std::isfinite(o.time_ms)
                              ? std::log(o.time_ms)
                              : std::numeric_limits<double>::quiet_NaN();
    }
  }

 protected:
  void OnStart() override {
    observed_.clear();
    explore_credit_ = 0;
    // The random first sample is one seeded permutation, taken in order: the same points
    // whatever the batch sizes, so a compile worker's dry run (large batches) builds what the
    // eval search (small batches) will try first. It is ordered by a hash of the configs'
    // values, not shuffled by position, so the searches of one solver on different problems
    // draw the configs their spaces share in the same order and reuse each other's builds
    // (kernels take sizes at run time).
    first_sample_.clear();
    first_pos_ = 0;
    if (enumerated()) {
      first_sample_ = valid_points();
      internal::SortBySharedHash(input().space, input().seed, first_sample_);
    }
    initial_ = ModelInitialRandom(input().space.axes().size(), options_);
  }

  std::vector<uint64_t> Propose(size_t n) override {
    size_t ok = 0;
    for (const auto& [index, t] : observed_) ok += std::isfinite(t) ? 1 : 0;
    std::unique_ptr<CostModel> model = NewCostModel(options_);
    bool scored = options_.score_feature && has_score();
    bool fitted = ok >= initial_ && Fit(*model, scored);
    if (!fitted && enumerated()) return FirstSample(n);
    std::vector<uint64_t> pool = Pool();
    if (pool.empty()) return {};
    std::vector<double> pool_scores;
    if (fitted && scored && !Scores(pool, pool_scores)) {  // the score failed: fit without it
      scored = false;
      fitted = Fit(*model, scored);
    }
    if (!fitted) {
      internal::Shuffle(pool, rng());
      if (pool.size() > n) pool.resize(n);
      return pool;
    }
    explore_credit_ += options_.exploration * static_cast<double>(n);
    size_t explore = std::min<size_t>(n, static_cast<size_t>(explore_credit_));
    explore_credit_ -= static_cast<double>(explore);
    const size_t exploit = n - explore;

    std::vector<solver::PerfConfig> candidates;
    candidates.reserve(pool.size());
    for (uint64_t index : pool) candidates.push_back(input().space.At(index));
    const std::vector<double> predicted = model->Predict(candidates, scored ? pool_scores : std::vector<double>());
    std::vector<std::pair<double, uint64_t>> scored_pool;
    scored_pool.reserve(pool.size());
    for (size_t i = 0; i < pool.size(); ++i) scored_pool.push_back({predicted[i], pool[i]});
    // Ties (e.g. constant features) are broken by index, so the result is deterministic.
    std::sort(scored_pool.begin(), scored_pool.end());
    std::vector<uint64_t> out;
    std::unordered_set<uint64_t> taken;
    for (size_t i = 0; i < scored_pool.size() && out.size() < exploit; ++i) {
      out.push_back(scored_pool[i].second);
      taken.insert(scored_pool[i].second);
    }
    std::vector<uint64_t> rest;
    for (const auto& s : scored_pool)
      if (!taken.count(s.second)) rest.push_back(s.second);
    internal::Shuffle(rest, rng());
    for (size_t i = 0; i < rest.size() && out.size() < n; ++i) out.push_back(rest[i]);
    return out;
  }

 private:
  // The next n unseen points of the seeded permutation.
  std::vector<uint64_t> FirstSample(size_t n) {
    std::vector<uint64_t> out;
    while (out.size() < n && first_pos_ < first_sample_.size()) {
      const uint64_t index = first_sample_[first_pos_++];
      if (!Seen(index)) out.push_back(index);
    }
    return out;
  }

  // Unseen valid points to score: all of them, or a random sample when there are too many.
  std::vector<uint64_t> Pool() {
    std::vector<uint64_t> pool;
    if (enumerated()) {
      for (uint64_t index : valid_points())
        if (!Seen(index)) pool.push_back(index);
      if (pool.size() > options_.max_pool) {
        internal::Shuffle(pool, rng());
        pool.resize(options_.max_pool);
      }
      return pool;
    }
    std::unordered_set<uint64_t> drawn;
    int misses = 0;
    while (pool.size() < options_.max_pool && misses < 10000) {
      uint64_t index = rng().Below(space_size());
      if (Seen(index) || drawn.count(index) || !Valid(index)) {
        ++misses;
        continue;
      }
      misses = 0;
      drawn.insert(index);
      pool.push_back(index);
    }
    return pool;
  }

  // Fits on every observation; `scored`: with the score as a feature (false when it fails).
  bool Fit(CostModel& model, bool& scored) {
    double worst = -std::numeric_limits<double>::infinity();
    for (const auto& [index, t] : observed_)
      if (std::isfinite(t)) worst = std::max(worst, t);
    std::vector<uint64_t> indices;
    std::vector<solver::PerfConfig> configs;
    std::vector<double> y;
    for (const auto& [index, t] : observed_) {
      indices.push_back(index);
      configs.push_back(input().space.At(index));
      y.push_back(std::isfinite(t) ? t : worst + std::log(2.0));
    }
    std::vector<double> extra;
    if (scored && !Scores(indices, extra)) scored = false;
    return model.Fit(configs, extra, y);
  }

  ModelStrategyOptions options_;
  std::map<uint64_t, double> observed_;  // index -> log(ms); NaN for failures
  std::vector<uint64_t> first_sample_;   // enumerated spaces: the seeded permutation
  size_t first_pos_ = 0;
  size_t initial_ = 8;
  double explore_credit_ = 0;
};

}  // namespace

std::unique_ptr<SearchStrategy> NewModelStrategy(const ModelStrategyOptions& options) {
  return std::make_unique<ModelStrategy>(options);
}

size_t ModelInitialRandom(size_t axes, const ModelStrategyOptions& options) {
  return options.initial_random > 0 ? options.initial_random : std::max<size_t>(8, 2 * axes + 2);
}

uint64_t ModelBlindProposals(size_t axes, size_t batch, bool ahead, uint64_t budget,
                             const ModelStrategyOptions& options) {
  batch = std::max<size_t>(1, batch);
  const uint64_t initial = ModelInitialRandom(axes, options);
  const uint64_t batches = (initial + batch - 1) / batch + (ahead ? 1 : 0);
  const uint64_t blind = batches * batch;
  return budget == 0 ? blind : std::min<uint64_t>(budget, blind);
}

}  // namespace tuna::search
