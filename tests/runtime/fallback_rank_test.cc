// The analytic fallback ranking on a GPU model (no device: the model comes from DeviceInfo):
// the family the H100 measurements put first is ranked first for each kind of problem.
#include <string>

#include "catch2/catch.hpp"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/runtime/fallback.h"
#include "tuner_core/solver/registry.h"
#include "tuner_core/solver/target.h"

namespace tuna {
namespace {

std::string FirstRanked(const std::string& line) {
  const DriverFile file = ParseDriverText(line + "\n");
  REQUIRE(file.errors.empty());
  REQUIRE(file.lines.size() == 1);
  REQUIRE(file.lines[0].problems.size() == 1);
  const Problem& p = file.lines[0].problems[0];
  backend::DeviceInfo info;
  info.arch = "sm_90";
  info.compute_units = 132;
  info.clock_mhz = 1980;
  const runtime::DeviceModel model = runtime::ModelForDevice(backend::BackendKind::kCuda, info);
  absl::StatusOr<solver::Target> target = solver::TargetForArch("sm_90", 132);
  REQUIRE(target.ok());
  const std::vector<solver::RegisteredSolver> applicable = solver::SolverRegistry::Builtin().Applicable(*target, p);
  REQUIRE(applicable.size() >= 2);
  const std::vector<runtime::RankedSolver> ranked = runtime::RankFallback(model, p, applicable, nullptr);
  REQUIRE(!ranked.empty());
  CHECK(runtime::IsNaiveSolver(*ranked.back().solver.solver));
  return std::string(ranked.front().solver.solver->Name());
}

TEST_CASE("fallback on an H100 model ranks the measured-fastest family first") {
  const std::string nhwc = " --in_layout NHWC --fil_layout NHWC --out_layout NHWC";
  // FP16 NHWC 3x3 (ResNet-50 layer): the TMA wgmma kernel, not the SIMT implicit GEMM.
  CHECK(FirstRanked("./bin/MIOpenDriver convfp16 -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 "
                    "-l 1 -j 1 -m conv -g 1 -F 1 -t 1" + nhwc) == "TunaHopperTmaFwd");
  CHECK(FirstRanked("./bin/MIOpenDriver convfp16 -n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 "
                    "-l 1 -j 1 -m conv -g 1 -F 4 -t 1" + nhwc) == "TunaHopperTmaWrw");
  // FP32 NCHW 1x1: the SIMT tile family.
  CHECK(FirstRanked("./bin/MIOpenDriver conv -n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 "
                    "-j 1 -m conv -g 1 -F 1 -t 1") == "TunaFastSimtFwd");
  // The RGB stem's backward data: the thin direct kernel.
  CHECK(FirstRanked("./bin/MIOpenDriver conv -n 32 -c 3 -H 224 -W 224 -k 64 -y 7 -x 7 -p 3 -q 3 -u 2 -v 2 -l 1 "
                    "-j 1 -m conv -g 1 -F 2 -t 1") == "TunaThinBwd");
  // Depthwise: the depthwise kernels.
  CHECK(FirstRanked("./bin/MIOpenDriver convfp16 -n 32 -c 144 -H 56 -W 56 -k 144 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 "
                    "-l 1 -j 1 -m conv -g 144 -F 1 -t 1" + nhwc) == "TunaDepthwiseFwd");
}

}  // namespace
}  // namespace tuna
