// search/transfer.h and transfer_score.h: other problems' runs reduced to points, and the
// problem-aware score the search learns from them.
#include "tuner_core/search/transfer.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "catch2/catch.hpp"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/search/transfer_score.h"
#include "tuner_core/search/tuner.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

std::vector<std::string> Params(const std::vector<TransferPoint>& points) {
  std::vector<std::string> out;
  for (const TransferPoint& p : points) out.push_back(p.params);
  return out;
}

TEST_CASE("transfer points: mean log2 slowdown against each problem's fastest, best first") {
  // Problem 1 is ten times slower than problem 2: raw times would let problem 1 decide alone.
  const std::vector<TransferRun> runs = {
      {"p1", {{"a", 10.0}, {"b", 11.0}, {"c", 20.0}}},  // a best, b 1.1x, c 2x
      {"p2", {{"a", 2.0}, {"b", 1.1}, {"c", 1.0}}},     // c best, b 1.1x, a 2x
  };
  // b: 1.1x on both; a and c: the best on one, 2x on the other (mean log2 0.5 > log2 1.1).
  const std::vector<TransferPoint> points = AggregateTransfer(runs, 8);
  CHECK(Params(points) == std::vector<std::string>{"b", "a", "c"});
  CHECK(points[0].slowdown == Approx(std::log2(1.1)));
  CHECK(points[0].problems == 2);
  CHECK(points[1].slowdown == Approx(0.5));
  CHECK(Params(AggregateTransfer(runs, 1)) == std::vector<std::string>{"b"});
  CHECK(AggregateTransfer({}, 8).empty());
}

TEST_CASE("transfer points: each pair's fastest time, no time that is not > 0, any order") {
  TransferRun run{"p", {{"a", 1.0}, {"b", 3.0}, {"b", 1.02},  // b timed twice: its fastest counts
                        {"z", 0.0}, {"y", -1.0}, {"x", std::numeric_limits<double>::infinity()},
                        {"w", std::numeric_limits<double>::quiet_NaN()}}};
  const std::vector<TransferPoint> points = AggregateTransfer({run}, 8);
  CHECK(Params(points) == std::vector<std::string>{"a", "b"});
  std::reverse(run.times.begin(), run.times.end());
  CHECK(AggregateTransfer({run}, 8) == points);
}

TEST_CASE("transfer points: ties go to more problems, then to the params' byte order") {
  const std::vector<TransferRun> runs = {
      {"1", {{"q", 1.0}}}, {"2", {{"q", 1.0}}},  // the fastest on two problems
      {"3", {{"p", 1.0}}},                       // on one
      {"4", {{"n", 1.0}}},                       // on one too: byte order puts n before p
  };
  CHECK(Params(AggregateTransfer(runs, 8)) == std::vector<std::string>{"q", "n", "p"});
}

// A two-axis space whose slowdown grows with the distance of TB_M from 64 and of TB_N from 32.
solver::SearchSpace Space() {
  return solver::SearchSpace({{"TB_M", {16, 32, 64, 128, 256}}, {"TB_N", {16, 32, 64, 128}}});
}
double Slowdown(int64_t m, int64_t n) { return std::abs(std::log2(m / 64.0)) + 0.5 * std::abs(std::log2(n / 32.0)); }
constexpr char kProblem[] = "conv -n 32 -c 64 -H 28 -W 28 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1";
ScoreContext NoSolver() { return {nullptr, {}, ParseDriverLine(kProblem)->front()}; }

TEST_CASE("transfer score: learned from the runs, it ranks configs nobody timed") {
  const solver::SearchSpace space = Space();
  // Every config but the best (64, 32) and its neighbour (64, 64) was timed elsewhere. Without a
  // solver the score has the axes alone.
  TransferRun run{kProblem, {}};
  for (int64_t m : {16, 32, 64, 128, 256})
    for (int64_t n : {16, 32, 64, 128})
      if (!(m == 64 && (n == 32 || n == 64)))
        run.times.push_back({std::to_string(m) + "," + std::to_string(n), std::exp2(Slowdown(m, n))});
  absl::StatusOr<ScoreFn> score = TransferScore(NoSolver(), space, {run});
  REQUIRE(score.ok());
  const std::vector<solver::PerfConfig> configs = {{{64, 32}}, {{256, 128}}, {{16, 16}}};
  absl::StatusOr<std::vector<float>> s = (*score)(configs);
  REQUIRE(s.ok());
  REQUIRE(s->size() == 3);
  CHECK((*s)[0] < (*s)[1]);
  CHECK((*s)[0] < (*s)[2]);
  // Deterministic: the same runs give the same score.
  absl::StatusOr<ScoreFn> again = TransferScore(NoSolver(), space, {run});
  REQUIRE(again.ok());
  CHECK(*(*again)(configs) == *s);
  CHECK((*score)({})->empty());
}

TEST_CASE("transfer score: too few times that fit the space give none; runs that are not one problem are skipped") {
  const TransferRun bad_params{kProblem, {{"64,32", 1}, {"not,params", 1}, {"64,32,8", 1}, {"48,32", 1}}};
  CHECK(TransferScore(NoSolver(), Space(), {bad_params}).status().code() == absl::StatusCode::kNotFound);
  TransferRun bad_driver{"conv -n 32 -c 64 -H 28 -W nope", {}};
  for (int64_t m : {16, 32, 64, 128, 256})
    for (int64_t n : {16, 32, 64, 128}) bad_driver.times.push_back({std::to_string(m) + "," + std::to_string(n), 1.0});
  CHECK(TransferScore(NoSolver(), Space(), {bad_driver}).status().code() == absl::StatusCode::kNotFound);
}

// Times that follow from how a config's tiles fill the GPU: every block of the largest launch
// costs the same, so a config's time is its number of waves over the SMs times the work per
// block plus a fixed cost (a last wave half full costs a whole wave; fewer, larger blocks pay the
// fixed cost less often).
double WaveTime(const ScoreContext& ctx, const Problem& p, const solver::PerfConfig& c) {
  absl::StatusOr<solver::Solution> s = ctx.solver->GetSolution(ctx.target, p, c);
  if (!s.ok() || s->launches.empty()) return 0;
  double blocks = 0;
  for (const solver::Launch& l : s->launches) blocks = std::max(blocks, 1.0 * l.grid.x * l.grid.y * l.grid.z);
  return std::ceil(blocks / ctx.target.num_cu) * (p.Flops() / blocks + 4e6);  // + a fixed cost per block
}

TEST_CASE("transfer score: the solution's shape carries what other problems timed to a new problem") {
  const solver::SolverRegistry& registry = solver::SolverRegistry::Builtin();
  const solver::RegisteredSolver* rs = registry.ByName("TunaFastSimtFwd");
  REQUIRE(rs != nullptr);
  absl::StatusOr<solver::Target> target = solver::TargetForArch("sm_90");
  REQUIRE(target.ok());
  // Large problems, where big tiles win, and one small one, where only small tiles fill the GPU;
  // the tuned problem is small too.
  const std::vector<std::string> drivers = {
      "conv -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1",
      "conv -n 64 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1",
      "conv -n 16 -c 128 -H 28 -W 28 -k 128 -y 3 -x 3 -p 1 -q 1 -F 1",
      "conv -n 2 -c 512 -H 7 -W 7 -k 512 -y 3 -x 3 -p 1 -q 1 -F 1",
  };
  const Problem tuned = ParseDriverLine("conv -n 1 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1")->front();
  const ScoreContext ctx{rs->solver, *target, tuned};
  const solver::SearchSpace space = rs->solver->Space(*target, tuned);
  std::vector<TransferRun> runs;
  for (const std::string& d : drivers) {
    const Problem p = ParseDriverLine(d)->front();
    TransferRun run{d, {}};
    for (uint64_t i = 0; i < space.Size(); ++i) {
      const solver::PerfConfig c = space.At(i);
      if (rs->solver->IsValid(*target, p, c).ok()) run.times.push_back({c.ToString(), WaveTime(ctx, p, c)});
    }
    runs.push_back(std::move(run));
  }
  std::vector<solver::PerfConfig> valid;
  double best = std::numeric_limits<double>::infinity();
  for (uint64_t i = 0; i < space.Size(); ++i) {
    const solver::PerfConfig c = space.At(i);
    if (!rs->solver->IsValid(*target, tuned, c).ok()) continue;
    valid.push_back(c);
    best = std::min(best, WaveTime(ctx, tuned, c));
  }
  REQUIRE(valid.size() >= 8);
  // The config each score ranks first on the tuned problem, and how slow it is there.
  auto first_pick = [&](const ScoreContext& with) {
    absl::StatusOr<ScoreFn> score = TransferScore(with, space, runs);
    REQUIRE(score.ok());
    absl::StatusOr<std::vector<float>> s = (*score)(valid);
    REQUIRE(s.ok());
    const size_t at = static_cast<size_t>(std::min_element(s->begin(), s->end()) - s->begin());
    return WaveTime(ctx, tuned, valid[at]) / best;
  };
  const double aware = first_pick(ctx);
  INFO("first pick on the tuned problem: " << aware << "x the best");
  CHECK(aware <= 1.05);
  // The same configs score differently on another problem (the axes alone could not tell).
  const Problem large = ParseDriverLine(drivers.front())->front();
  absl::StatusOr<ScoreFn> on_tuned = TransferScore(ctx, space, runs);
  absl::StatusOr<ScoreFn> on_large = TransferScore({rs->solver, *target, large}, space, runs);
  REQUIRE(on_tuned.ok());
  REQUIRE(on_large.ok());
  CHECK(*(*on_tuned)(valid) != *(*on_large)(valid));
  absl::StatusOr<ScoreFn> blind = TransferScore({nullptr, *target, tuned}, space, runs);
  absl::StatusOr<ScoreFn> blind_large = TransferScore({nullptr, *target, large}, space, runs);
  REQUIRE(blind.ok());
  REQUIRE(blind_large.ok());
  CHECK(*(*blind)(valid) == *(*blind_large)(valid));
}

TEST_CASE("transfer seeds: none for a generic search capped where a specialised solver serves") {
  TuneOptions o;
  o.budget = 48;
  CHECK(TransferSeeds(o, 48) == kTransferSeeds);
  CHECK(TransferSeeds(o, o.generic_budget) == 0);  // LimitsOf capped it
  o.transfer_seeds = 4;
  CHECK(TransferSeeds(o, 48) == 4);
}

}  // namespace
}  // namespace tuna::search
