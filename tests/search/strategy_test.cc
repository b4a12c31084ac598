// Search strategies against synthetic spaces (no compiler, no device).
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "catch2/catch.hpp"
#include "tuner_core/search/strategy/strategy.h"

namespace tuna::search {
namespace {

using solver::PerfConfig;
using solver::SearchSpace;

SearchSpace Space3() {
  return SearchSpace({{"tb_m", solver::Pow2Range(8, 128)},   // 5 values
                      {"tb_n", solver::Pow2Range(8, 64)},    // 4 values
                      {"split_k", {1, 2, 3}}});              // 3 values -> 60 points
}

// Points with tb_m * tb_n > 4096 are "invalid" (e.g. too much shared memory).
bool Valid3(const PerfConfig& c) { return c.values[0] * c.values[1] <= 4096; }

std::vector<PerfConfig> Drain(SearchStrategy& s, size_t batch, size_t limit = 100000) {
  std::vector<PerfConfig> all;
  for (;;) {
    auto b = s.Next(batch);
    if (b.empty()) break;
    REQUIRE(b.size() <= batch);
    all.insert(all.end(), b.begin(), b.end());
    REQUIRE(all.size() <= limit);
  }
  return all;
}

TEST_CASE("exhaustive proposes every valid point once, in odometer order") {
  const SearchSpace space = Space3();
  uint64_t valid_count = 0;
  std::vector<PerfConfig> expected;
  for (uint64_t i = 0; i < space.Size(); ++i)
    if (Valid3(space.At(i))) expected.push_back(space.At(i)), ++valid_count;
  REQUIRE(valid_count < space.Size());  // the predicate removes something

  auto s = NewExhaustiveStrategy();
  REQUIRE(s->Start({space, Valid3, 0, 7, {}}).ok());
  REQUIRE(s->PlannedTotal().value() == valid_count);
  const auto all = Drain(*s, 7);
  CHECK(all == expected);
  CHECK(s->Next(3).empty());  // stays done
}

TEST_CASE("exhaustive puts valid prior first, skips invalid and duplicate prior") {
  const SearchSpace space = Space3();
  const PerfConfig prior{{64, 32, 2}};
  const PerfConfig invalid_prior{{128, 64, 1}};    // 8192 > 4096
  const PerfConfig outside{{7, 8, 1}};             // not in the space
  auto s = NewExhaustiveStrategy();
  REQUIRE(s->Start({space, Valid3, 0, 1, {prior, invalid_prior, outside, prior}}).ok());
  const auto all = Drain(*s, 4);
  REQUIRE(!all.empty());
  CHECK(all.front() == prior);
  std::set<std::string> distinct;
  for (const auto& c : all) {
    CHECK(Valid3(c));
    distinct.insert(c.ToString());
  }
  CHECK(distinct.size() == all.size());
  CHECK(all.size() == *s->PlannedTotal());
}

TEST_CASE("random respects the budget, never repeats and is seed-deterministic") {
  const SearchSpace space = Space3();
  auto run = [&](uint64_t seed, uint64_t budget) {
    auto s = NewRandomStrategy();
    REQUIRE(s->Start({space, Valid3, budget, seed, {}}).ok());
    return Drain(*s, 3);
  };
  const auto a = run(42, 10);
  CHECK(a.size() == 10);
  std::set<std::string> distinct;
  for (const auto& c : a) {
    CHECK(Valid3(c));
    CHECK(space.Contains(c));
    distinct.insert(c.ToString());
  }
  CHECK(distinct.size() == a.size());
  CHECK(run(42, 10) == a);     // same seed, same sequence
  CHECK(run(43, 10) != a);     // another seed, another sequence
  // Without a budget: a permutation of all valid points.
  const auto full = run(5, 0);
  auto ex = NewExhaustiveStrategy();
  REQUIRE(ex->Start({space, Valid3, 0, 1, {}}).ok());
  auto sorted_full = full;
  auto exhaustive = Drain(*ex, 100);
  auto key = [](const PerfConfig& x, const PerfConfig& y) { return x.values < y.values; };
  std::sort(sorted_full.begin(), sorted_full.end(), key);
  std::sort(exhaustive.begin(), exhaustive.end(), key);
  CHECK(sorted_full == exhaustive);
  CHECK(full != Drain(*[&] { auto e = NewExhaustiveStrategy(); (void)e->Start({space, Valid3, 0, 1, {}}); return e; }(), 100));
}

TEST_CASE("prior counts against the budget") {
  auto s = NewRandomStrategy();
  REQUIRE(s->Start({Space3(), Valid3, 2, 3, {PerfConfig{{8, 8, 1}}}}).ok());
  const auto all = Drain(*s, 10);
  REQUIRE(all.size() == 2);
  CHECK(all[0] == PerfConfig{{8, 8, 1}});
}

TEST_CASE("an empty space is rejected") {
  for (StrategyKind k : {StrategyKind::kExhaustive, StrategyKind::kRandom, StrategyKind::kModel}) {
    auto s = MakeStrategy(k);
    CHECK_FALSE(s->Start({SearchSpace(), nullptr, 0, 1, {}}).ok());
  }
  CHECK(ParseStrategyKind("model").value() == StrategyKind::kModel);
  CHECK_FALSE(ParseStrategyKind("annealing").ok());
}

// A synthetic tuning landscape over 4 pow2 axes (2401 points): log time is a bowl in log2
// space with an interaction term, plus deterministic pseudo-noise; one unique optimum.
struct Landscape {
  SearchSpace space{{{"tb_m", solver::Pow2Range(1, 64)},
                     {"tb_n", solver::Pow2Range(1, 64)},
                     {"tb_k", solver::Pow2Range(1, 64)},
                     {"warp", solver::Pow2Range(1, 64)}}};
  double Time(const PerfConfig& c) const {
    const double a = std::log2(c.values[0]), b = std::log2(c.values[1]);
    const double k = std::log2(c.values[2]), w = std::log2(c.values[3]);
    const uint64_t h = (c.values[0] * 73856093ULL) ^ (c.values[1] * 19349663ULL) ^
                       (c.values[2] * 83492791ULL) ^ (c.values[3] * 2654435761ULL);
    const double noise = 0.02 * static_cast<double>(h % 1000) / 1000.0;
    return std::exp(0.3 * (a - 4) * (a - 4) + 0.2 * (b - 3) * (b - 3) + 0.15 * (k - 2) * (k - 2) +
                    0.1 * (w - a + 1) * (w - a + 1) + noise);
  }
};

// Evaluations until the true optimum is proposed (batch of 4, results observed after each),
// with a predictor's score and its seeds when given.
uint64_t EvalsToOptimum(std::unique_ptr<SearchStrategy> s, uint64_t seed, const Landscape& l,
                        const PerfConfig& best, ScoreFn score = nullptr, uint64_t seeds = 0) {
  REQUIRE(s->Start({l.space, nullptr, 0, seed, {}, score, seeds}).ok());
  uint64_t evals = 0;
  for (;;) {
    auto batch = s->Next(4);
    REQUIRE(!batch.empty());
    std::vector<Observation> obs;
    for (const auto& c : batch) {
      ++evals;
      if (c == best) return evals;
      obs.push_back({c, true, l.Time(c)});
    }
    s->Observe(obs);
  }
}

TEST_CASE("model-guided search finds the optimum in far fewer evaluations than random") {
  Landscape l;
  PerfConfig best;
  double best_t = 1e300;
  for (uint64_t i = 0; i < l.space.Size(); ++i) {
    const double t = l.Time(l.space.At(i));
    if (t < best_t) best_t = t, best = l.space.At(i);
  }
  double gbt_sum = 0, ridge_sum = 0, random_sum = 0;
  const int seeds = 8;
  ModelStrategyOptions ridge;
  ridge.cost_model = CostModelKind::kRidge;
  for (int seed = 1; seed <= seeds; ++seed) {
    gbt_sum += static_cast<double>(EvalsToOptimum(NewModelStrategy(), seed, l, best));
    ridge_sum += static_cast<double>(EvalsToOptimum(NewModelStrategy(ridge), seed, l, best));
    random_sum += static_cast<double>(EvalsToOptimum(NewRandomStrategy(), seed, l, best));
  }
  WARN("mean evaluations to optimum: model (gbt) " << gbt_sum / seeds << ", model (ridge) "
                                                   << ridge_sum / seeds << ", random " << random_sum / seeds);
  CHECK(gbt_sum < 0.25 * random_sum);
  CHECK(ridge_sum < 0.25 * random_sum);
  CHECK(gbt_sum / seeds < 150);
  CHECK(ridge_sum / seeds < 150);
}

PerfConfig Optimum(const Landscape& l) {
  PerfConfig best;
  double best_t = 1e300;
  for (uint64_t i = 0; i < l.space.Size(); ++i) {
    const double t = l.Time(l.space.At(i));
    if (t < best_t) best_t = t, best = l.space.At(i);
  }
  return best;
}

// A score from a function of one config, counting the configs it was asked about.
ScoreFn ScoreOf(std::function<double(const PerfConfig&)> f, uint64_t* calls = nullptr) {
  return [f, calls](const std::vector<PerfConfig>& configs) -> absl::StatusOr<std::vector<float>> {
    std::vector<float> out;
    for (const PerfConfig& c : configs) out.push_back(static_cast<float>(f(c)));
    if (calls != nullptr) *calls += configs.size();
    return out;
  };
}

// What a trained predictor looks like: the landscape's shape without its noise and interaction,
// its centre one step off on two axes (so its best guess is near the optimum, not at it).
double Approximate(const PerfConfig& c) {
  const double a = std::log2(c.values[0]), b = std::log2(c.values[1]);
  const double k = std::log2(c.values[2]), w = std::log2(c.values[3]);
  return 0.3 * (a - 5) * (a - 5) + 0.2 * (b - 3) * (b - 3) + 0.15 * (k - 1) * (k - 1) + 0.1 * (w - 3) * (w - 3);
}

TEST_CASE("a score that knows the optimum makes the model-guided search reach it in fewer evaluations") {
  Landscape l;
  const PerfConfig best = Optimum(l);
  const ScoreFn exact = ScoreOf([&l](const PerfConfig& c) { return std::log(l.Time(c)); });
  const ScoreFn approximate = ScoreOf(Approximate);
  const ScoreFn misleading = ScoreOf([](const PerfConfig& c) { return -Approximate(c); });  // upside down
  ModelStrategyOptions ridge;
  ridge.cost_model = CostModelKind::kRidge;
  for (const ModelStrategyOptions& o : {ModelStrategyOptions(), ridge}) {
    const int seeds = 8;
    double plain = 0, near = 0, wrong = 0;
    for (int seed = 1; seed <= seeds; ++seed) {
      plain += static_cast<double>(EvalsToOptimum(NewModelStrategy(o), seed, l, best));
      // The exact landscape: the optimum is its first seed.
      CHECK(EvalsToOptimum(NewModelStrategy(o), seed, l, best, exact, 8) == 1);
      near += static_cast<double>(EvalsToOptimum(NewModelStrategy(o), seed, l, best, approximate, 8));
      // The seeds are then among the worst configs: the online fit must recover.
      wrong += static_cast<double>(EvalsToOptimum(NewModelStrategy(o), seed, l, best, misleading, 8));
    }
    WARN("mean evaluations to optimum, model (" << (o.cost_model == CostModelKind::kGbt ? "gbt" : "ridge")
                                                << "): no score " << plain / seeds << ", approximate score "
                                                << near / seeds << ", misleading score " << wrong / seeds);
    CHECK(near < 0.8 * plain);
    CHECK(wrong < 1.5 * plain + 8 * seeds);
  }
}

TEST_CASE("a score's seeds follow the prior, skip invalid and prior points and count against the budget") {
  const SearchSpace space = Space3();
  // Prefers large tb_m * tb_n (most of those are invalid), then small split_k.
  auto score = ScoreOf([](const PerfConfig& c) { return -static_cast<double>(c.values[0] * c.values[1]) + 0.1 * c.values[2]; });
  const PerfConfig prior{{128, 32, 1}};  // valid (4096) and the score's best valid point
  for (StrategyKind k : {StrategyKind::kExhaustive, StrategyKind::kRandom, StrategyKind::kModel}) {
    auto s = MakeStrategy(k);
    REQUIRE(s->Start({space, Valid3, 6, 3, {prior}, score, 4}).ok());
    CHECK(s->score_use().seeded == 4);
    CHECK(s->score_use().error.empty());
    const std::vector<PerfConfig> all = Drain(*s, 2);
    REQUIRE(all.size() == 6);
    CHECK(all[0] == prior);
    // Then the best valid by the score (ties by odometer index, tb_m first): 64x64 split_k 1,
    // 64x64 split_k 2 and 128x32 split_k 2 (128x32 split_k 1 is the prior), 64x64 split_k 3.
    CHECK(all[1] == PerfConfig{{64, 64, 1}});
    CHECK(all[2] == PerfConfig{{64, 64, 2}});
    CHECK(all[3] == PerfConfig{{128, 32, 2}});
    CHECK(all[4] == PerfConfig{{64, 64, 3}});
    for (const PerfConfig& c : all) CHECK(Valid3(c));
  }
  // A budget that leaves room for two after the prior: two seeds, not four.
  auto s = NewModelStrategy();
  REQUIRE(s->Start({space, Valid3, 3, 3, {prior}, score, 4}).ok());
  CHECK(s->score_use().seeded == 2);
  CHECK(Drain(*s, 4) == std::vector<PerfConfig>{prior, PerfConfig{{64, 64, 1}}, PerfConfig{{64, 64, 2}}});
}

TEST_CASE("a failing score leaves the search as it was without one, and says why") {
  Landscape l;
  ScoreFn failing = [](const std::vector<PerfConfig>&) -> absl::StatusOr<std::vector<float>> {
    return absl::OutOfRangeError("direction = 2 was not in the training data");
  };
  ScoreFn short_answer = [](const std::vector<PerfConfig>&) -> absl::StatusOr<std::vector<float>> {
    return std::vector<float>{1.0f};
  };
  for (const ScoreFn& bad : {failing, short_answer}) {
    auto plain = NewModelStrategy();
    auto with_bad = NewModelStrategy();
    REQUIRE(plain->Start({l.space, nullptr, 40, 7, {}}).ok());
    REQUIRE(with_bad->Start({l.space, nullptr, 40, 7, {}, bad, 8}).ok());
    CHECK(with_bad->score_use().seeded == 0);
    CHECK_FALSE(with_bad->score_use().error.empty());
    for (;;) {
      auto a = plain->Next(4);
      auto b = with_bad->Next(4);
      REQUIRE(a == b);
      if (a.empty()) break;
      std::vector<Observation> obs;
      for (const auto& c : a) obs.push_back({c, true, l.Time(c)});
      plain->Observe(obs);
      with_bad->Observe(obs);
    }
  }
}

TEST_CASE("model-guided first sample is the same whatever the batch sizes (compile dry run = eval)") {
  Landscape l;
  auto big = NewModelStrategy();
  auto small = NewModelStrategy();
  REQUIRE(big->Start({l.space, nullptr, 0, 5, {}}).ok());
  REQUIRE(small->Start({l.space, nullptr, 0, 5, {}}).ok());
  std::vector<PerfConfig> a = big->Next(32);
  std::vector<PerfConfig> b;
  for (int i = 0; i < 16; ++i) {
    auto batch = small->Next(2);
    b.insert(b.end(), batch.begin(), batch.end());
  }
  REQUIRE(a.size() == 32);
  CHECK(a == b);
}

TEST_CASE("model-guided first samples of two problems draw the configs they share in one order") {
  // One solver's space on two problems: the second has a smaller valid set and an axis value
  // the first lacks (so the odometer positions of shared configs differ). The configs valid for
  // both come in the same relative order, so the two searches reuse each other's builds.
  const SearchSpace wide = Space3();
  const SearchSpace other({{"tb_m", solver::Pow2Range(8, 128)}, {"tb_n", {4, 8, 16, 32, 64}}, {"split_k", {1, 2, 3}}});
  auto narrow_valid = [](const PerfConfig& c) { return Valid3(c) && c.values[2] != 2; };
  auto a = NewModelStrategy();
  auto b = NewModelStrategy();
  REQUIRE(a->Start({wide, Valid3, 0, 9, {}}).ok());
  REQUIRE(b->Start({other, narrow_valid, 0, 9, {}}).ok());
  const std::vector<PerfConfig> first_a = a->Next(ModelInitialRandom(3));
  const std::vector<PerfConfig> first_b = b->Next(ModelInitialRandom(3));
  auto in = [](const std::vector<PerfConfig>& v, const PerfConfig& c) {
    return std::find_if(v.begin(), v.end(), [&](const PerfConfig& x) { return x.values == c.values; }) != v.end();
  };
  std::vector<std::vector<int64_t>> shared_a, shared_b;
  for (const PerfConfig& c : first_a)
    if (narrow_valid(c) && in(first_b, c)) shared_a.push_back(c.values);
  for (const PerfConfig& c : first_b)
    if (in(first_a, c)) shared_b.push_back(c.values);
  CHECK(shared_a == shared_b);
  // Most of the smaller sample is shared (a shuffle by position shares about a third here).
  CHECK(shared_b.size() * 2 >= first_b.size());
  // Still a seeded random order: another seed draws other points first.
  auto c = NewModelStrategy();
  REQUIRE(c->Start({wide, Valid3, 0, 10, {}}).ok());
  CHECK(c->Next(4) != std::vector<PerfConfig>(first_a.begin(), first_a.begin() + 4));
}

TEST_CASE("a compile step's blind proposals are what the eval search tries before its cost model") {
  Landscape l;  // 4 axes: 10 initial observations
  CHECK(ModelInitialRandom(4) == 10);
  CHECK(ModelInitialRandom(2) == 8);
  CHECK(ModelBlindProposals(4, 4, false, 0) == 12);  // 3 batches of 4 before the fit
  CHECK(ModelBlindProposals(4, 4, true, 0) == 16);   // and the one asked for before observing
  CHECK(ModelBlindProposals(7, 16, true, 48) == 32);  // TunaIgemmFwd on an H100 worker
  CHECK(ModelBlindProposals(8, 16, true, 48) == 48);
  CHECK(ModelBlindProposals(4, 4, true, 10) == 10);   // the budget bounds it
  for (bool ahead : {false, true}) {
    INFO("ahead " << ahead);
    const size_t batch = 4;
    const uint64_t blind = ModelBlindProposals(4, batch, ahead, 0);
    // The dry run: no observation at all.
    auto dry = NewModelStrategy();
    REQUIRE(dry->Start({l.space, nullptr, 64, 3, {}}).ok());
    const std::vector<PerfConfig> built = Drain(*dry, batch);
    // The eval search: every batch observed, one batch late when ahead (the Tuner's order).
    auto eval = NewModelStrategy();
    REQUIRE(eval->Start({l.space, nullptr, 64, 3, {}}).ok());
    std::vector<PerfConfig> tried;
    std::vector<std::vector<PerfConfig>> unobserved;
    while (tried.size() < blind + batch) {
      unobserved.push_back(eval->Next(batch));
      tried.insert(tried.end(), unobserved.back().begin(), unobserved.back().end());
      if (unobserved.size() > (ahead ? 1u : 0u)) {
        std::vector<Observation> obs;
        for (const PerfConfig& c : unobserved.front()) obs.push_back({c, true, l.Time(c)});
        eval->Observe(obs);
        unobserved.erase(unobserved.begin());
      }
    }
    REQUIRE(built.size() >= blind + batch);
    CHECK(std::vector<PerfConfig>(tried.begin(), tried.begin() + blind) ==
          std::vector<PerfConfig>(built.begin(), built.begin() + blind));
    // The batch after them follows the model fitted on the timings: not the dry run's.
    CHECK(std::vector<PerfConfig>(tried.begin() + blind, tried.begin() + blind + batch) !=
          std::vector<PerfConfig>(built.begin() + blind, built.begin() + blind + batch));
  }
}

TEST_CASE("model-guided search respects budget, validity and never repeats, even unobserved") {
  const SearchSpace space = Space3();
  auto s = NewModelStrategy();
  REQUIRE(s->Start({space, Valid3, 25, 9, {}}).ok());
  std::set<std::string> seen;
  uint64_t n = 0;
  for (int round = 0;; ++round) {
    auto b = s->Next(5);
    if (b.empty()) break;
    std::vector<Observation> obs;
    for (const auto& c : b) {
      CHECK(Valid3(c));
      CHECK(seen.insert(c.ToString()).second);
      // Failures (ok = false) on odd rounds: the model must cope.
      obs.push_back({c, round % 2 == 0, static_cast<double>(c.values[0] + c.values[2])});
      ++n;
    }
    s->Observe(obs);
  }
  CHECK(n == 25);
}

}  // namespace
}  // namespace tuna::search
