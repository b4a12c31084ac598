// Small deterministic solvers for admin tests: counts of applicable pairs and jobs follow from
// simple rules the tests can recompute, independent of the solvers tuna ships.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/solver.h"

namespace tuna::testing {

class RuleSolver : public solver::Solver {
 public:
  using Rule = std::function<bool(const Problem&)>;
  RuleSolver(std::string name, bool tunable, std::vector<Direction> dirs, Rule rule, bool generic = false)
      : name_(std::move(name)), tunable_(tunable), dirs_(std::move(dirs)), rule_(std::move(rule)), generic_(generic) {}
  std::string_view Name() const override { return name_; }
  bool IsGeneric(const solver::Target&, const Problem&) const override { return generic_; }
  solver::Algorithm Algo() const override { return solver::Algorithm::kDirect; }
  bool IsTunable() const override { return tunable_; }
  std::vector<Direction> Directions() const override { return dirs_; }
  absl::Status IsApplicable(const solver::Target&, const Problem& p) const override {
    return rule_(p) ? absl::OkStatus() : solver::NotApplicable(name_, "rule says no");
  }
  absl::StatusOr<solver::Solution> GetSolution(const solver::Target&, const Problem&,
                                               const solver::PerfConfig&) const override {
    return absl::UnimplementedError("test solver");
  }

 private:
  std::string name_;
  bool tunable_;
  std::vector<Direction> dirs_;
  Rule rule_;
  bool generic_;
};

inline const std::vector<Direction> kAllDirections = {
    Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};

inline bool IsOneByOne(const Problem& p) { return p.fil[1] == 1 && p.fil[2] == 1; }

// TestTunedFwd (id 1001): tunable, F only, always applicable, generic (a config's last jobs).
// TestNaive (id 1002): not tunable, F/B/W, always applicable.
// TestOneByOne (id 1003): tunable, F/B/W, only 1x1 filters.
// GemmBwd1x1_stride1 (id 1004): tunable, B only, never applicable; named like a MIOpen solver so
// import-db matches it by name.
inline std::unique_ptr<solver::SolverRegistry> MakeTestRegistry(bool with_one_by_one = true) {
  std::vector<std::pair<uint64_t, std::unique_ptr<solver::Solver>>> s;
  s.emplace_back(1001, std::make_unique<RuleSolver>(
                           "TestTunedFwd", true, std::vector<Direction>{Direction::kForward},
                           [](const Problem&) { return true; }, true));
  s.emplace_back(1002, std::make_unique<RuleSolver>("TestNaive", false, kAllDirections,
                                                    [](const Problem&) { return true; }));
  if (with_one_by_one) {
    s.emplace_back(1003, std::make_unique<RuleSolver>("TestOneByOne", true, kAllDirections,
                                                      IsOneByOne));
  }
  s.emplace_back(1004, std::make_unique<RuleSolver>(
                           "GemmBwd1x1_stride1", true,
                           std::vector<Direction>{Direction::kBackwardData},
                           [](const Problem&) { return false; }));
  return std::make_unique<solver::SolverRegistry>(std::move(s));
}

}  // namespace tuna::testing
