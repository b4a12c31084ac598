// The builtin registry's table: ids and names unique, and the (id, name) pairs of the naive and
// CPU solver sets fixed forever (results and exported files refer to them).
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "catch2/catch.hpp"
#include "tuner_core/solver/conv/solver_sets.h"
#include "tuner_core/solver/registry.h"

namespace tuna::solver {
namespace {

TEST_CASE("registry ids and names are unique") {
  const SolverRegistry& r = SolverRegistry::Builtin();
  REQUIRE(r.All().size() >= 4);
  std::set<uint64_t> ids;
  std::set<std::string> names;
  for (const RegisteredSolver& s : r.All()) {
    CHECK(s.id != 0);
    CHECK(ids.insert(s.id).second);
    CHECK(names.insert(std::string(s.solver->Name())).second);
    CHECK(r.ById(s.id) == &s);
    CHECK(r.ByName(s.solver->Name()) == &s);
  }
}

TEST_CASE("naive and cpu solver ids are stable") {
  const std::vector<std::pair<uint64_t, std::string>> expected = {
      {85, "ConvDirectNaiveConvFwd"},
      {86, "ConvDirectNaiveConvBwd"},
      {87, "ConvDirectNaiveConvWrw"},
      {2001, "TunaCpuGemmConv"},
  };
  const SolverRegistry& r = SolverRegistry::Builtin();
  for (const auto& [id, name] : expected) {
    INFO(id << " " << name);
    const RegisteredSolver* s = r.ById(id);
    REQUIRE(s != nullptr);
    CHECK(s->solver->Name() == name);
  }
  // The sets themselves hold exactly these (a new solver takes a new id and a new row here).
  std::vector<std::pair<uint64_t, std::string>> got;
  for (const auto& [id, solver] : NaiveSolvers()) got.emplace_back(id, std::string(solver->Name()));
  for (const auto& [id, solver] : CpuTunableSolvers()) got.emplace_back(id, std::string(solver->Name()));
  CHECK(got == expected);
  // Ranges of solver_sets.h: tuna's CPU solvers live in 2001-2099.
  for (const auto& [id, solver] : CpuTunableSolvers()) {
    CHECK(id >= 2001);
    CHECK(id <= 2099);
  }
}

TEST_CASE("every direction of a cpu problem has a naive solver and the cpu gemm solver") {
  absl::StatusOr<Target> cpu = TargetForArch("cpu-x86_64");
  REQUIRE(cpu.ok());
  Problem p;
  p.n = 2, p.c = 4, p.k = 8;
  p.in = {1, 9, 9};
  p.fil = {1, 3, 3};
  p.pad = {0, 1, 1};
  for (Direction dir : {Direction::kForward, Direction::kBackwardData, Direction::kBackwardWeights}) {
    p.direction = dir;
    std::set<uint64_t> ids;
    for (const RegisteredSolver& s : SolverRegistry::Builtin().Applicable(*cpu, p)) ids.insert(s.id);
    INFO(DirectionName(dir));
    CHECK(ids.count(85 + static_cast<int>(dir)) == 1);
    CHECK(ids.count(2001) == 1);
    // Exactly one naive solver per direction.
    CHECK(ids.count(85) + ids.count(86) + ids.count(87) == 1);
  }
}

}  // namespace
}  // namespace tuna::solver
