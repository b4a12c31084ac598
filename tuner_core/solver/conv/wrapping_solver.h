// A solver that runs another one (`inner`) on a problem it maps: the base of ChannelsLastAdapter
// and FlatteningSolver. It takes the inner solver's algorithm, tunability, dynamism, generic-ness
// and directions; a subclass names itself and maps the problem in each planning verb. Owns the
// inner solver; stateless and thread-safe like every solver.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "tuner_core/solver/solver.h"

namespace tuna::solver {

class WrappingSolver : public Solver {
 public:
  Algorithm Algo() const override { return inner_->Algo(); }
  bool IsTunable() const override { return inner_->IsTunable(); }
  bool IsDynamic() const override { return inner_->IsDynamic(); }
  bool IsGeneric(const Target& target, const Problem& problem) const override {
    return inner_->IsGeneric(target, problem);
  }
  std::vector<Direction> Directions() const override { return inner_->Directions(); }
  const Solver& inner() const { return *inner_; }

 protected:
  explicit WrappingSolver(std::unique_ptr<Solver> inner) : inner_(std::move(inner)) {}  // non-null

 private:
  std::unique_ptr<Solver> inner_;
};

}  // namespace tuna::solver
