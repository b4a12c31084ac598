// Acceptance: `tuna tune` on the cpu backend over a dozen small problems covering every
// direction, data type, layout, groups, stride, dilation and 3D, with the builtin solvers.
// Every candidate of every applicable solver must verify against the CPU reference.
#include "catch2/catch.hpp"
#include "tests/search/cpu_fixture.h"
#include "tuner_core/search/report.h"
#include "tuner_core/search/session.h"
#include "tuner_core/solver/registry.h"

namespace tuna::search {
namespace {

const char* kLines[] = {
    "conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1",
    "conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -F 2",
    "conv -n 2 -c 8 -H 9 -W 9 -k 8 -y 3 -x 3 -p 1 -q 1 -F 4",
    "convfp16 -n 2 -c 8 -H 9 -W 9 -k 16 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -F 1",
    "convbfp16 -n 2 -c 8 -H 11 -W 11 -k 8 -y 3 -x 3 -p 2 -q 2 -l 2 -j 2 -F 2",
    "conv -n 2 -c 8 -H 8 -W 8 -k 12 -y 3 -x 3 -p 1 -q 1 -g 2 -F 4",
    "conv -n 2 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -F 1",
    "convfp16 -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -p 1 -q 1 -g 8 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -F 2",
    "convbfp16 -n 2 -c 4 -H 8 -W 8 -k 8 -y 1 -x 1 -u 2 -v 2 -g 2 --in_layout NHWC --fil_layout NHWC --out_layout NHWC -F 4",
    "conv -n 1 -c 4 --in_d 5 -H 6 -W 6 -k 4 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 --spatial_dim 3 -F 1",
    "convfp16 -n 1 -c 4 --in_d 5 -H 6 -W 6 -k 4 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 --dilation_d 1 -l 2 -j 2 --spatial_dim 3 --in_layout NDHWC --fil_layout NDHWC --out_layout NDHWC -F 4",
    "convint8 -n 2 -c 8 -H 7 -W 7 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1",
};

TEST_CASE("cpu tune of a dozen small problems verifies every candidate") {
  testing::CpuFixture f;
  if (!f.ok) return;
  std::vector<Problem> problems;
  for (const char* line : kLines) problems.push_back(testing::ParseOne(line));
  SessionOptions s;
  s.backend = "cpu";
  s.tune.strategy = StrategyKind::kRandom;
  s.tune.budget = 3;
  s.tune.seed = 11;
  s.tune.evaluator.repetitions = 3;
  s.tune.evaluator.early_repetitions = 1;
  s.tune.retime_repetitions = 2;
  auto results = TuneProblems(problems, s, solver::SolverRegistry::Builtin());
  REQUIRE(results.ok());
  REQUIRE(results->size() == problems.size());
  int tunable_solvers = 0;
  for (const TuneResult& r : *results) {
    INFO(FormatTuneResult(r));
    CHECK(r.error.empty());
    CHECK(r.reference == "cpu");
    REQUIRE_FALSE(r.solvers.empty());
    CHECK(r.best >= 0);
    for (const SolverTuneResult& sr : r.solvers) {
      CHECK(sr.disposition == Disposition::kPassed);
      CHECK(sr.passed == sr.tried);  // every candidate compiled, ran and verified
      CHECK(sr.by_disposition.count(Disposition::kIncorrect) == 0);
      if (sr.tunable) {
        ++tunable_solvers;
        CHECK(sr.tried >= 1);
        CHECK(sr.default_ms.has_value());
      }
    }
  }
  CHECK(tunable_solvers >= 10);  // the CPU GEMM solver took part in (nearly) all of them
}

}  // namespace
}  // namespace tuna::search
