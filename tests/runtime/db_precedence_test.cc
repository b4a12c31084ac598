// User db over system db (find db: the user record wins entirely; perf db: user entries merged
// over system ones), a system db written with tuner_core/db's writers driving the choice, and
// the fallback ranking on a miss.
#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/perf_db_text.h"
#include "tuner_core/problem/keys.h"

using namespace tuna;
using namespace tuna::runtime;
using tuna::testing::TempDir;

namespace {
constexpr const char* kLine = "conv -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1";
constexpr const char* kGemm = "TunaCpuGemmConv";
constexpr const char* kNaive = "ConvDirectNaiveConvFwd";

std::string ValidParams(Handle& h, const Problem& p, int skip) {
  const solver::Solver& s = *h.registry().ByName(kGemm)->solver;
  const solver::SearchSpace space = s.Space(h.target(), p);
  for (uint64_t i = 0; i < space.Size(); ++i) {
    if (s.IsValid(h.target(), p, space.At(i)).ok() && skip-- == 0) return space.At(i).ToString();
  }
  return "";
}
}  // namespace

TEST_CASE("find db: the user record replaces the system record entirely") {
  TempDir sys("prec_sys"), user("prec_user"), cache("prec_cache");
  const Problem p = testing::ParseOne(kLine);
  RuntimeConfig c = testing::CpuConfig(user.str(), sys.str(), cache.str());
  auto h = testing::CpuHandle(c);
  REQUIRE(h.ok());
  const DbFiles& f = (*h)->db().files();
  db::FindDb system, mine;
  system[FindDbKey(p)] = {{kGemm, 0.5f, 0, "miopenConvolutionFwdAlgoImplicitGEMM"},
                          {kNaive, 1.5f, 0, "miopenConvolutionFwdAlgoDirect"}};
  mine[FindDbKey(p)] = {{kNaive, 2.0f, 0, "miopenConvolutionFwdAlgoDirect"}};
  REQUIRE(db::WriteFindDbFile(f.system_find_db, system).ok());
  REQUIRE(db::WriteFindDbFile(f.user_find_db, mine).ok());

  auto v = GetSolution(**h, p);
  REQUIRE(v.ok());
  REQUIRE(v->size() == 1);
  CHECK((*v)[0].solver == kNaive);
  CHECK((*v)[0].source == ChoiceSource::kUserDb);
  CHECK((*v)[0].time_ms == 2.0f);
  CHECK(*GetSolutionCount(**h, p) == 1);

  std::filesystem::remove(f.user_find_db);
  v = GetSolution(**h, p);
  REQUIRE(v.ok());
  REQUIRE(v->size() == 2);
  CHECK((*v)[0].solver == kGemm);
  CHECK((*v)[0].source == ChoiceSource::kSystemDb);
  CHECK((*v)[1].solver == kNaive);
  CHECK((*h)->db().stats().system_find_hits >= 1);
  CHECK((*h)->db().stats().user_find_hits >= 2);
}

TEST_CASE("perf db: user entries win, system entries fill in") {
  TempDir sys("perf_sys"), user("perf_user"), cache("perf_cache");
  const Problem p = testing::ParseOne(kLine);
  auto h = testing::CpuHandle(testing::CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(h.ok());
  const DbFiles& f = (*h)->db().files();
  const std::string a = ValidParams(**h, p, 1), b = ValidParams(**h, p, 2);
  REQUIRE(!a.empty());
  REQUIRE(a != b);
  db::PerfDbText system, mine;
  system[PerfDbTextKey(p)][kGemm] = a;
  mine[PerfDbTextKey(p)]["OtherSolver"] = "7";
  REQUIRE(db::WritePerfDbTextFile(f.system_perf_db_txt, system).ok());
  REQUIRE(db::WritePerfDbTextFile(f.user_perf_db, mine).ok());
  PerfLookup l = (*h)->db().LookupPerf(p, kGemm);
  CHECK(l.source == DbSource::kSystem);
  CHECK(l.params == a);
  mine[PerfDbTextKey(p)][kGemm] = b;
  REQUIRE(db::WritePerfDbTextFile(f.user_perf_db, mine).ok());
  l = (*h)->db().LookupPerf(p, kGemm);
  CHECK(l.source == DbSource::kUser);
  CHECK(l.params == b);
  CHECK((*h)->db().LookupPerf(p, "NoSuchSolver").source == DbSource::kNone);

  // Find takes the user params.
  RuntimeConfig c = testing::CpuConfig(user.str(), sys.str(), cache.str());
  c.find_mode = FindMode::kNormal;
  auto h2 = testing::CpuHandle(c);
  REQUIRE(h2.ok());
  auto r = FindConvolution(**h2, p);
  REQUIRE(r.ok());
  bool seen = false;
  for (const auto& s : r->solutions) {
    if (s.solver != kGemm) continue;
    seen = true;
    CHECK(s.params == b);
    CHECK(s.params_source == ChoiceSource::kUserDb);
  }
  CHECK(seen);
}

TEST_CASE("a system db written with the db writers drives the choice (\"system db\")") {
  TempDir sys("sysdb_sys"), user("sysdb_user"), cache("sysdb_cache");
  const Problem p = testing::ParseOne(kLine);
  RuntimeConfig c = testing::CpuConfig(user.str(), sys.str(), cache.str());
  c.find_mode = FindMode::kFast;
  auto h = testing::CpuHandle(c);
  REQUIRE(h.ok());
  const DbFiles& f = (*h)->db().files();
  const std::string a = ValidParams(**h, p, 3);
  // find db says gemm is fastest; the SQLite perf db gives its params.
  db::FindDb system;
  system[FindDbKey(p)] = {{kNaive, 3.0f, 0, "miopenConvolutionFwdAlgoDirect"},
                          {kGemm, 0.25f, 0, "miopenConvolutionFwdAlgoImplicitGEMM"}};
  REQUIRE(db::WriteFindDbFile(f.system_find_db, system).ok());
  db::PerfDbWriter w;
  w.Add(ToPerfDbConfig(p), kGemm, a);
  REQUIRE(w.Write(f.system_perf_db_sqlite).ok());
  REQUIRE(!testing::FileExists(f.system_perf_db_txt));

  auto r = FindConvolution(**h, p);
  REQUIRE(r.ok());
  REQUIRE(r->solutions.size() == 1);
  CHECK(r->solutions[0].solver == kGemm);
  CHECK(r->solutions[0].source == ChoiceSource::kSystemDb);
  CHECK(r->solutions[0].time_ms == 0.25f);
  CHECK(r->solutions[0].params == a);
  CHECK(r->solutions[0].params_source == ChoiceSource::kSystemDb);
  CHECK(!r->trace.benchmarked);
  CHECK(!testing::FileExists(f.user_find_db));
  CHECK(ChoiceSourceName(r->solutions[0].source) == "system db");

  auto rep = testing::RunAndVerify(**h, p, r->solutions[0].solver_id);
  REQUIRE(rep.ok());
  CHECK(rep->ok);
}

TEST_CASE("db miss: the fallback ranks by the analytic estimate, naive solvers last") {
  TempDir user("fb_user"), cache("fb_cache");
  const Problem p = testing::ParseOne(kLine);
  auto h = testing::CpuHandle(testing::CpuConfig(user.str(), "", cache.str()));
  REQUIRE(h.ok());
  auto v = GetSolution(**h, p);
  REQUIRE(v.ok());
  REQUIRE(v->size() >= 2);
  CHECK(v->front().solver == kGemm);
  CHECK(v->back().solver == kNaive);
  for (const auto& s : *v) {
    CHECK(s.source == ChoiceSource::kFallback);
    CHECK(s.time_ms > 0);
  }
  CHECK(*GetSolutionCount(**h, p) == v->size());
  CHECK(*GetSolutionWorkspaceSize(**h, p, 85) == 0);
  CHECK(!GetSolutionWorkspaceSize(**h, p, 86).ok());  // bwd solver: not applicable to F
  CHECK(!GetSolutionWorkspaceSize(**h, p, 999999).ok());
  for (const auto& s : *v) {
    REQUIRE(CompileSolution(**h, p, s.solver_id).ok());
    auto rep = testing::RunAndVerify(**h, p, s.solver_id);
    REQUIRE(rep.ok());
    CHECK(rep->ok);
  }
  RuntimeConfig off = testing::CpuConfig(user.str(), "", cache.str());
  off.disable_fallback = true;
  auto h2 = testing::CpuHandle(off);
  REQUIRE(h2.ok());
  CHECK(absl::IsNotFound(GetSolution(**h2, p).status()));
  CHECK(absl::IsNotFound(GetSolutionCount(**h2, p).status()));
}
