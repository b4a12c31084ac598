// search/transfer.h and transfer_score.h: other problems' timings reduced to points, and the
// score the search learns from them.
#include "tuner_core/search/transfer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "catch2/catch.hpp"
#include "tuner_core/search/transfer_score.h"
#include "tuner_core/search/tuner.h"

namespace tuna::search {
namespace {

std::vector<std::string> Params(const std::vector<TransferPoint>& points) {
  std::vector<std::string> out;
  for (const TransferPoint& p : points) out.push_back(p.params);
  return out;
}

TEST_CASE("transfer points: mean log2 slowdown against each problem's fastest, best first") {
  // Problem 1 is ten times slower than problem 2: raw times would let problem 1 decide alone.
  const std::vector<TransferSample> samples = {
      {1, "a", 10.0}, {1, "b", 11.0}, {1, "c", 20.0},  // a best, b 1.1x, c 2x
      {2, "a", 2.0},  {2, "b", 1.1},  {2, "c", 1.0},   // c best, b 1.1x, a 2x
  };
  // b: 1.1x on both; a and c: the best on one, 2x on the other (mean log2 0.5 > log2 1.1).
  const std::vector<TransferPoint> points = AggregateTransfer(samples, 8);
  CHECK(Params(points) == std::vector<std::string>{"b", "a", "c"});
  CHECK(points[0].slowdown == Approx(std::log2(1.1)));
  CHECK(points[0].problems == 2);
  CHECK(points[1].slowdown == Approx(0.5));
  CHECK(Params(AggregateTransfer(samples, 1)) == std::vector<std::string>{"b"});
  CHECK(AggregateTransfer({}, 8).empty());
}

TEST_CASE("transfer points: each pair's fastest time, no time that is not > 0, any order") {
  std::vector<TransferSample> samples = {
      {1, "a", 1.0}, {1, "b", 3.0}, {1, "b", 1.02},  // b timed twice: its fastest counts
      {1, "z", 0.0}, {1, "y", -1.0}, {1, "x", std::numeric_limits<double>::infinity()},
      {1, "w", std::numeric_limits<double>::quiet_NaN()},
  };
  const std::vector<TransferPoint> points = AggregateTransfer(samples, 8);
  CHECK(Params(points) == std::vector<std::string>{"a", "b"});
  std::reverse(samples.begin(), samples.end());
  CHECK(AggregateTransfer(samples, 8) == points);
}

TEST_CASE("transfer points: ties go to more problems, then to the params' byte order") {
  const std::vector<TransferSample> samples = {
      {1, "q", 1.0}, {2, "q", 1.0},  // the fastest on two problems
      {3, "p", 1.0},                 // on one
      {4, "n", 1.0},                 // on one too: byte order puts n before p
  };
  CHECK(Params(AggregateTransfer(samples, 8)) == std::vector<std::string>{"q", "n", "p"});
}

// A two-axis space whose slowdown grows with the distance of TB_M from 64 and of TB_N from 32.
solver::SearchSpace Space() {
  return solver::SearchSpace({{"TB_M", {16, 32, 64, 128, 256}}, {"TB_N", {16, 32, 64, 128}}});
}
double Slowdown(int64_t m, int64_t n) { return std::abs(std::log2(m / 64.0)) + 0.5 * std::abs(std::log2(n / 32.0)); }

TEST_CASE("transfer score: learned from the points, it ranks configs nobody timed") {
  const solver::SearchSpace space = Space();
  std::vector<TransferPoint> points;
  // Every config but the best (64, 32) and its neighbour (64, 64) was timed elsewhere.
  for (int64_t m : {16, 32, 64, 128, 256})
    for (int64_t n : {16, 32, 64, 128})
      if (!(m == 64 && (n == 32 || n == 64))) points.push_back({std::to_string(m) + "," + std::to_string(n), Slowdown(m, n), 1});
  absl::StatusOr<ScoreFn> score = TransferScore(space, points);
  REQUIRE(score.ok());
  const std::vector<solver::PerfConfig> configs = {{{64, 32}}, {{256, 128}}, {{16, 16}}};
  absl::StatusOr<std::vector<float>> s = (*score)(configs);
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  CHECK((*s)[0] < (*s)[1]);
  CHECK((*s)[0] < (*s)[2]);
  // Deterministic: the same points give the same score.
  absl::StatusOr<ScoreFn> again = TransferScore(space, points);
  REQUIRE(again.ok());
  CHECK(*(*again)(configs) == *s);
  CHECK((*score)({})->empty());
}

TEST_CASE("transfer score: too few points that fit the space give none") {
  std::vector<TransferPoint> points = {{"64,32", 0, 1}, {"not,params", 0, 1}, {"64,32,8", 0, 1}, {"48,32", 0, 1}};
  absl::StatusOr<ScoreFn> score = TransferScore(Space(), points);
  CHECK(score.status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("transfer seeds: none for a generic search capped where a specialised solver serves") {
  TuneOptions o;
  o.budget = 48;
  CHECK(TransferSeeds(o, 48) == kTransferSeeds);
  CHECK(TransferSeeds(o, o.generic_budget) == 0);  // SearchBudget capped it
  o.transfer_seeds = 4;
  CHECK(TransferSeeds(o, 48) == 4);
}

}  // namespace
}  // namespace tuna::search
