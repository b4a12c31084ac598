// Find over every MIOPEN_FIND_ENFORCE x MIOPEN_FIND_MODE value (CPU backend, fresh user db dir
// each), with and without a user perf-db record for the tunable TunaCpuGemmConv: which searches
// ran, whether Find benchmarked, and which user find/perf db records were read and written.
#include <algorithm>

#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/db/perf_db_text.h"
#include "tuner_core/problem/keys.h"

using namespace tuna;
using namespace tuna::runtime;
using tuna::testing::TempDir;

namespace {

constexpr const char* kLine = "conv -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1";
constexpr const char* kGemm = "TunaCpuGemmConv";

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// A valid config of the gemm solver other than its default (so a perf-db hit is recognisable).
std::string NonDefaultParams(Handle& h, const Problem& p) {
  const solver::Solver& s = *h.registry().ByName(kGemm)->solver;
  const solver::SearchSpace space = s.Space(h.target(), p);
  const solver::PerfConfig def = s.DefaultConfig(h.target(), p);
  for (uint64_t i = 0; i < space.Size(); ++i) {
    solver::PerfConfig c = space.At(i);
    if (!(c == def) && s.IsValid(h.target(), p, c).ok()) return c.ToString();
  }
  return "";
}

void SeedUserPerf(Handle& h, const Problem& p, const std::string& params) {
  db::PerfDbText t;
  t[PerfDbTextKey(p)][kGemm] = params;
  t[PerfDbTextKey(p)]["SomeOtherSolver"] = "1,2,3";
  REQUIRE(db::WritePerfDbTextFile(h.db().files().user_perf_db, t).ok());
}

std::map<std::string, std::string> UserPerfRecord(Handle& h, const Problem& p) {
  auto r = db::ReadPerfDbTextFile(h.db().files().user_perf_db);
  if (!r.ok()) return {};
  auto it = r->records.find(PerfDbTextKey(p));
  return it == r->records.end() ? std::map<std::string, std::string>{} : it->second;
}

const ConvSolution* Find(const FindResult& r, const std::string& name) {
  for (const ConvSolution& s : r.solutions) {
    if (s.solver == name) return &s;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("find: every FIND_ENFORCE x FIND_MODE, with and without a user perf record") {
  TempDir cache("matrix_cache");
  const Problem p = testing::ParseOne(kLine);
  const FindMode modes[] = {FindMode::kNormal, FindMode::kFast, FindMode::kHybrid, FindMode::kDynamicHybrid};
  const FindEnforce enforces[] = {FindEnforce::kNone, FindEnforce::kDbUpdate, FindEnforce::kSearch,
                                  FindEnforce::kSearchDbUpdate, FindEnforce::kDbClean};
  for (bool seeded : {false, true}) {
    for (FindEnforce enforce : enforces) {
      for (FindMode mode : modes) {
        DYNAMIC_SECTION(FindEnforceName(enforce) << " x " << FindModeName(mode) << (seeded ? " seeded" : "")) {
          TempDir user("matrix_user");
          RuntimeConfig c = testing::CpuConfig(user.str(), "", cache.str());
          c.find_mode = mode;
          c.find_enforce = enforce;
          auto h = testing::CpuHandle(c);
          REQUIRE(h.ok());
          Handle& handle = **h;
          REQUIRE(handle.registry().ByName(kGemm) != nullptr);
          REQUIRE(handle.registry().ByName(kGemm)->solver->IsApplicable(handle.target(), p).ok());
          std::string seed;
          if (seeded) {
            seed = NonDefaultParams(handle, p);
            REQUIRE(!seed.empty());
            SeedUserPerf(handle, p, seed);
          }
          auto r = FindConvolution(handle, p);
          REQUIRE(r.ok());
          REQUIRE(!r->solutions.empty());
          const FindMode eff = enforce == FindEnforce::kNone ? mode : FindMode::kNormal;
          CHECK(r->trace.effective_mode == eff);
          const bool benchmarked = eff != FindMode::kFast;
          CHECK(r->trace.benchmarked == benchmarked);
          CHECK(r->trace.stored_find_db == benchmarked);
          CHECK(testing::FileExists(handle.db().files().user_find_db) == benchmarked);
          CHECK(handle.db().stats().user_find_writes == (benchmarked ? 1 : 0));
          // The tunable gemm solver is considered by every benchmark but DYNAMIC_HYBRID's
          // (dynamic solvers only) and by FAST's fallback (which ranks it first: naive last).
          const bool gemm_benchmarked = benchmarked && eff != FindMode::kDynamicHybrid;
          const bool expect_search = gemm_benchmarked && (enforce == FindEnforce::kSearchDbUpdate ||
                                                          (enforce == FindEnforce::kSearch && !seeded));
          CHECK(Contains(r->trace.searched, kGemm) == expect_search);
          CHECK(r->trace.searched.size() == (expect_search ? 1u : 0u));
          CHECK(handle.db().stats().user_perf_writes == (expect_search ? 1 : 0));
          const bool expect_clean = gemm_benchmarked && enforce == FindEnforce::kDbClean;
          CHECK(Contains(r->trace.cleaned, kGemm) == expect_clean);
          const auto record = UserPerfRecord(handle, p);
          if (expect_search) {
            CHECK(record.count(kGemm) == 1);
          } else if (expect_clean) {
            CHECK(record.count(kGemm) == 0);
            CHECK(record.count("SomeOtherSolver") == (seeded ? 1u : 0u));  // only the one entry removed
          } else {
            CHECK(record.count(kGemm) == (seeded ? 1u : 0u));
            if (seeded) CHECK(record.at(kGemm) == seed);
          }
          if (eff == FindMode::kFast) {
            REQUIRE(r->solutions.size() == 1);
            CHECK(r->solutions[0].source == ChoiceSource::kFallback);
            CHECK(r->solutions[0].solver == kGemm);
            CHECK(r->solutions[0].params_source == (seeded ? ChoiceSource::kUserDb : ChoiceSource::kDefault));
          } else {
            CHECK(r->solutions[0].source == ChoiceSource::kBenchmark);
            CHECK(Find(*r, "ConvDirectNaiveConvFwd") != nullptr);
            const ConvSolution* g = Find(*r, kGemm);
            CHECK((g != nullptr) == gemm_benchmarked);
            if (g != nullptr) {
              const ChoiceSource want = expect_search  ? ChoiceSource::kSearch
                                        : expect_clean ? ChoiceSource::kDefault
                                        : seeded       ? ChoiceSource::kUserDb
                                                       : ChoiceSource::kDefault;
              CHECK(g->params_source == want);
              if (want == ChoiceSource::kUserDb) CHECK(g->params == seed);
            }
            for (size_t i = 1; i < r->solutions.size(); ++i) {
              CHECK(r->solutions[i - 1].time_ms <= r->solutions[i].time_ms);
            }
            // The stored record lists what ran.
            auto fdb = db::ReadFindDbFile(handle.db().files().user_find_db);
            REQUIRE(fdb.ok());
            REQUIRE(fdb->records.count(FindDbKey(p)) == 1);
            CHECK(fdb->records.at(FindDbKey(p)).size() == r->solutions.size());
          }
        }
      }
    }
  }
}

TEST_CASE("find: exhaustive search argument with NONE and DB_UPDATE") {
  TempDir cache("exh_cache");
  const Problem p = testing::ParseOne(kLine);
  struct Case {
    FindEnforce enforce;
    bool seeded;
    bool expect_search;
  };
  for (const Case& k : {Case{FindEnforce::kNone, false, true}, Case{FindEnforce::kNone, true, false},
                        Case{FindEnforce::kDbUpdate, false, true}, Case{FindEnforce::kDbUpdate, true, true}}) {
    DYNAMIC_SECTION(FindEnforceName(k.enforce) << (k.seeded ? " seeded" : "")) {
      TempDir user("exh_user");
      RuntimeConfig c = testing::CpuConfig(user.str(), "", cache.str());
      c.find_mode = FindMode::kNormal;
      c.find_enforce = k.enforce;
      auto h = testing::CpuHandle(c);
      REQUIRE(h.ok());
      std::string seed;
      if (k.seeded) {
        seed = NonDefaultParams(**h, p);
        SeedUserPerf(**h, p, seed);
      }
      FindOptions o;
      o.exhaustive_search = true;
      auto r = FindConvolution(**h, p, o);
      REQUIRE(r.ok());
      CHECK(Contains(r->trace.searched, kGemm) == k.expect_search);
      CHECK((*h)->db().stats().user_perf_writes == (k.expect_search ? 1 : 0));
      const ConvSolution* g = Find(*r, kGemm);
      REQUIRE(g != nullptr);
      CHECK(g->params_source == (k.expect_search ? ChoiceSource::kSearch : ChoiceSource::kUserDb));
      // DB_UPDATE skipped the load: the db params were overwritten by the search result.
      if (k.expect_search) CHECK(UserPerfRecord(**h, p).at(kGemm) == g->params);
    }
  }
}

TEST_CASE("find: NORMAL reuses the user record only with invokers; HYBRID hits it in a new handle") {
  TempDir cache("reuse_cache"), user("reuse_user");
  const Problem p = testing::ParseOne(kLine);
  RuntimeConfig c = testing::CpuConfig(user.str(), "", cache.str());
  c.find_mode = FindMode::kNormal;
  {
    auto h = testing::CpuHandle(c);
    REQUIRE(h.ok());
    auto first = FindConvolution(**h, p);
    REQUIRE(first.ok());
    CHECK(first->trace.benchmarked);
    auto second = FindConvolution(**h, p);
    REQUIRE(second.ok());
    CHECK(!second->trace.benchmarked);
    CHECK(second->trace.find_db_hit);
    CHECK(second->solutions[0].source == ChoiceSource::kUserDb);
    CHECK(second->solutions[0].solver == first->solutions[0].solver);
  }
  {
    auto h = testing::CpuHandle(c);  // new handle: no invokers, so NORMAL benchmarks again
    REQUIRE(h.ok());
    auto r = FindConvolution(**h, p);
    REQUIRE(r.ok());
    CHECK(r->trace.benchmarked);
  }
  c.find_mode = FindMode::kHybrid;
  auto h = testing::CpuHandle(c);
  REQUIRE(h.ok());
  auto r = FindConvolution(**h, p);
  REQUIRE(r.ok());
  CHECK(!r->trace.benchmarked);
  CHECK(r->trace.find_db_hit);
  REQUIRE(r->solutions.size() == 1);
  CHECK(r->solutions[0].source == ChoiceSource::kUserDb);
  CHECK((*h)->db().stats().user_find_hits == 1);
  CHECK((*h)->db().stats().user_find_writes == 0);
}
