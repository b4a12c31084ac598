#include "tests/search/test_solvers.h"

#include "absl/strings/str_cat.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/solver/conv/naive_solvers.h"

namespace tuna::search::testing {
namespace {

using solver::BufferRole;
using solver::KernelArg;

BufferRole OutRole(Direction d) {
  switch (d) {
    case Direction::kForward: return BufferRole::kY;
    case Direction::kBackwardData: return BufferRole::kX;
    case Direction::kBackwardWeights: return BufferRole::kW;
  }
  return BufferRole::kY;
}

class FaultSolver : public solver::Solver {
 public:
  FaultSolver(std::vector<int64_t> faults, float spin_ms, bool generic = false,
              std::optional<int64_t> specialized = std::nullopt)
      : faults_(std::move(faults)), spin_ms_(spin_ms), generic_(generic), specialized_(specialized) {}
  std::string_view Name() const override { return generic_ ? "TestGenericSolver" : "TestFaultSolver"; }
  bool IsGeneric(const solver::Target&, const Problem&) const override { return generic_; }
  solver::Algorithm Algo() const override { return solver::Algorithm::kDirect; }
  bool IsTunable() const override { return true; }
  std::vector<Direction> Directions() const override {
    return {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights};
  }
  absl::Status IsApplicable(const solver::Target& target, const Problem& problem) const override {
    if (target.IsGpu()) return solver::NotApplicable(Name(), "cpu backend only");
    return solver::NaiveConvSolver(problem.direction).IsApplicable(target, problem);
  }
  solver::SearchSpace Space(const solver::Target&, const Problem&) const override {
    if (!specialized_) return solver::SearchSpace({{"fault", faults_}});
    return solver::SearchSpace({{"fault", faults_}, {"SPECIAL", {0, 1}, solver::AxisUse::kSolver, 0, false}});
  }
  solver::PerfConfig DefaultConfig(const solver::Target&, const Problem&) const override {
    if (!specialized_) return solver::PerfConfig{{faults_.front()}};
    return solver::PerfConfig{{faults_.front(), 0}};
  }
  std::optional<solver::PerfConfig> Specialize(const solver::Target&, const Problem&,
                                               const solver::PerfConfig& config) const override {
    if (!specialized_ || config.values.size() != 2 || config.values[1] == 1) return std::nullopt;
    return solver::PerfConfig{{config.values[0], 1}};
  }
  absl::StatusOr<solver::Solution> GetSolution(const solver::Target& target, const Problem& problem,
                                               const solver::PerfConfig& config) const override {
    if (absl::Status st = IsValid(target, problem, config); !st.ok()) return st;
    const int64_t fault = config.values.size() == 2 && config.values[1] == 1 ? *specialized_ : config.values[0];
    const solver::NaiveConvSolver naive(problem.direction);
    if (fault == kClobbersInputs) {
      absl::StatusOr<solver::Solution> s = naive.GetSolution(target, problem, solver::PerfConfig{});
      if (!s.ok()) return s;
      solver::KernelBuild k;
      k.source = "cpu_conv/testonly_faults.cc";
      k.entries = {"testonly_write_garbage"};
      s->kernels.push_back(k);
      for (BufferRole role : {BufferRole::kX, BufferRole::kW, BufferRole::kY}) {
        if (role == OutRole(problem.direction)) continue;
        const TensorDesc d = role == BufferRole::kX ? problem.XDesc()
                             : role == BufferRole::kW ? problem.WDesc()
                                                      : problem.YDesc();
        solver::Launch l;
        l.kernel = static_cast<int>(s->kernels.size() - 1);
        l.entry = "testonly_write_garbage";
        l.args = {KernelArg::Buffer(role),
                  KernelArg::I64(d.ElementCount() * static_cast<int64_t>(DataTypeSize(problem.data_type))),
                  KernelArg::F32(0)};
        s->launches.push_back(l);
      }
      return s;
    }
    if (fault == kCorrect || fault == kSlow) {
      absl::StatusOr<solver::Solution> s = naive.GetSolution(target, problem, solver::PerfConfig{});
      if (!s.ok() || fault == kCorrect) return s;
      const auto launches = s->launches;
      for (int i = 0; i < 2; ++i) s->launches.insert(s->launches.end(), launches.begin(), launches.end());
      return s;
    }
    const TensorDesc out = reference::OutputDesc(problem, problem.direction);
    const int64_t bytes = out.ElementCount() * static_cast<int64_t>(reference::OutputElementSize(problem, problem.direction));
    solver::Solution s;
    solver::KernelBuild k;
    k.source = "cpu_conv/testonly_faults.cc";
    const char* entry = fault == kGarbage ? "testonly_write_garbage"
                        : fault == kSpin  ? "testonly_spin"
                                          : "testonly_write_nothing";
    k.entries = {entry};
    if (fault == kBrokenBuild) k.options.push_back("-DTUNA_TESTONLY_BREAK=1");
    s.kernels.push_back(k);
    solver::Launch l;
    l.kernel = 0;
    l.entry = entry;
    l.args = {KernelArg::Buffer(OutRole(problem.direction)), KernelArg::I64(bytes), KernelArg::F32(spin_ms_)};
    s.launches.push_back(l);
    return s;
  }

 private:
  std::vector<int64_t> faults_;
  float spin_ms_;
  bool generic_ = false;
  std::optional<int64_t> specialized_;
};

}  // namespace

std::unique_ptr<solver::Solver> NewFaultSolver(std::vector<int64_t> faults, float spin_ms) {
  return std::make_unique<FaultSolver>(std::move(faults), spin_ms);
}

std::unique_ptr<solver::SolverRegistry> FaultRegistry(std::vector<int64_t> faults, float spin_ms) {
  solver::SolverList list;
  list.emplace_back(85, std::make_unique<solver::NaiveConvSolver>(Direction::kForward));
  list.emplace_back(86, std::make_unique<solver::NaiveConvSolver>(Direction::kBackwardData));
  list.emplace_back(87, std::make_unique<solver::NaiveConvSolver>(Direction::kBackwardWeights));
  list.emplace_back(9001, NewFaultSolver(std::move(faults), spin_ms));
  return std::make_unique<solver::SolverRegistry>(std::move(list));
}

std::unique_ptr<solver::SolverRegistry> SpecializingRegistry(std::vector<int64_t> faults, int64_t specialized) {
  solver::SolverList list;
  list.emplace_back(85, std::make_unique<solver::NaiveConvSolver>(Direction::kForward));
  list.emplace_back(9001, std::make_unique<FaultSolver>(std::move(faults), 2000, false, specialized));
  return std::make_unique<solver::SolverRegistry>(std::move(list));
}

std::unique_ptr<solver::SolverRegistry> GenericRegistry(std::vector<int64_t> faults, bool with_specialised) {
  solver::SolverList list;
  list.emplace_back(85, std::make_unique<solver::NaiveConvSolver>(Direction::kForward));
  if (with_specialised) list.emplace_back(9001, NewFaultSolver(faults));
  list.emplace_back(9002, std::make_unique<FaultSolver>(std::move(faults), 2000, true));
  return std::make_unique<solver::SolverRegistry>(std::move(list));
}

}  // namespace tuna::search::testing
