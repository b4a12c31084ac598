// --from-db's mapping from perf db rows to bench jobs (CPU only: no device is opened).
#include "bench/kernels/from_db.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "catch2/catch.hpp"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/driver_line.h"
#include "tuner_core/problem/keys.h"

namespace tuna::bench {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path d = fs::path(tmp ? tmp : fs::temp_directory_path().string()) / ("from_db_test_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Problem Resnet3x3() {
  absl::StatusOr<std::vector<Problem>> ps = ParseDriverLine(
      "./bin/MIOpenDriver conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1");
  REQUIRE(ps.ok());
  REQUIRE(ps->size() == 1);
  return (*ps)[0];
}

solver::Target Sm90() {
  absl::StatusOr<solver::Target> t = solver::TargetForArch("sm_90", 132);
  REQUIRE(t.ok());
  return *t;
}

TEST_CASE("perf db rows become (problem, solver, params) jobs") {
  const solver::Target target = Sm90();
  const solver::SolverRegistry& reg = solver::SolverRegistry::Builtin();
  const Problem p = Resnet3x3();
  const solver::RegisteredSolver* simt = reg.ByName("TunaFastSimtFwd");
  REQUIRE(simt != nullptr);
  REQUIRE(simt->solver->IsApplicable(target, p).ok());
  const solver::PerfConfig def = simt->solver->DefaultConfig(target, p);
  REQUIRE(!def.values.empty());

  // A second valid config (not the default), so the test shows the params are the row's.
  const solver::SearchSpace space = simt->solver->Space(target, p);
  solver::PerfConfig other = def;
  for (uint64_t i = 0; i < space.Size(); ++i) {
    solver::PerfConfig c = space.At(i);
    if (!(c == def) && simt->solver->IsValid(target, p, c).ok()) {
      other = c;
      break;
    }
  }
  REQUIRE(!(other == def));

  Problem bwd = p;
  bwd.direction = Direction::kBackwardData;
  db::PerfDbWriter w;
  w.Add(ToPerfDbConfig(p), "TunaFastSimtFwd", other.ToString());
  w.Add(ToPerfDbConfig(bwd), "ConvBinWinogradRxSf2x3", "1,2,3");  // not a tuna solver
  Problem p1x1 = p;
  p1x1.fil = {1, 1, 1};
  p1x1.pad = {0, 0, 0};
  w.Add(ToPerfDbConfig(p1x1), "TunaFastSimtFwd", "7");  // malformed params
  const fs::path dir = FreshDir("rows");
  const fs::path db = dir / "sm_9084.db";
  REQUIRE(w.Write(db.string()).ok());

  absl::StatusOr<std::string> found = FindPerfDb(dir.string(), target);
  REQUIRE(found.ok());
  CHECK(*found == db.string());
  absl::StatusOr<DbJobs> jobs = ReadDbJobs(*found, reg, target);
  REQUIRE(jobs.ok());
  REQUIRE(jobs->jobs.size() == 1);
  const DbJob& j = jobs->jobs[0];
  CHECK(j.problem == p);
  CHECK(j.solver == simt->solver);
  CHECK(j.config == other);
  CHECK(j.params == other.ToString());
  CHECK(ToDriverLine(j.problem) == ToDriverLine(p));
  REQUIRE(jobs->skipped.size() == 2);
  bool unknown = false, bad_params = false;
  for (const DbSkip& s : jobs->skipped) {
    unknown |= s.solver == "ConvBinWinogradRxSf2x3" && s.reason == "unknown solver";
    bad_params |= s.solver == "TunaFastSimtFwd" && s.reason.rfind("params", 0) == 0;
  }
  CHECK(unknown);
  CHECK(bad_params);
}

TEST_CASE("FindPerfDb picks the device's basename, else the only db") {
  const solver::Target target = Sm90();
  const fs::path empty = FreshDir("empty");
  CHECK(absl::IsNotFound(FindPerfDb(empty.string(), target).status()));
  CHECK(absl::IsNotFound(FindPerfDb((empty / "absent").string(), target).status()));

  const fs::path one = FreshDir("one");
  std::ofstream(one / "other.db") << "x";
  absl::StatusOr<std::string> only = FindPerfDb(one.string(), target);
  REQUIRE(only.ok());
  CHECK(*only == (one / "other.db").string());

  std::ofstream(one / "third.db") << "x";
  CHECK(absl::IsInvalidArgument(FindPerfDb(one.string(), target).status()));
  std::ofstream(one / "sm_9084.db") << "x";
  absl::StatusOr<std::string> named = FindPerfDb(one.string(), target);
  REQUIRE(named.ok());
  CHECK(*named == (one / "sm_9084.db").string());
}

TEST_CASE("every FP16 NHWC ResNet-50 layer survives the perf db round trip") {
  const solver::Target target = Sm90();
  const solver::SolverRegistry& reg = solver::SolverRegistry::Builtin();
  const solver::RegisteredSolver* tc = reg.ByName("TunaFastTcFwd");
  REQUIRE(tc != nullptr);
  absl::StatusOr<DriverFile> file = ParseDriverFile("bench/kernels/data/resnet50_n32_fwd_fp16_nhwc.txt");
  REQUIRE(file.ok());
  REQUIRE(file->errors.empty());
  db::PerfDbWriter w;
  std::vector<Problem> problems;
  for (const DriverFileLine& line : file->lines) {
    for (const Problem& p : line.problems) {
      REQUIRE(tc->solver->IsApplicable(target, p).ok());
      w.Add(ToPerfDbConfig(p), "TunaFastTcFwd", tc->solver->DefaultConfig(target, p).ToString());
      problems.push_back(p);
    }
  }
  REQUIRE(problems.size() == 23);
  const fs::path dir = FreshDir("fp16");
  REQUIRE(w.Write((dir / "sm_9084.db").string()).ok());
  absl::StatusOr<DbJobs> jobs = ReadDbJobs((dir / "sm_9084.db").string(), reg, target);
  REQUIRE(jobs.ok());
  CHECK(jobs->skipped.empty());
  REQUIRE(jobs->jobs.size() == problems.size());
  for (const DbJob& j : jobs->jobs) {
    CHECK(std::find(problems.begin(), problems.end(), j.problem) != problems.end());
    CHECK(j.config == tc->solver->DefaultConfig(target, j.problem));
  }
}

}  // namespace
}  // namespace tuna::bench
