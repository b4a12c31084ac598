// admin logic that needs no database: fin steps, progress arithmetic, parallel applicability.
#include "admin/applicability.h"
#include "admin/job_loader.h"
#include "admin/solver_records.h"
#include "admin/status.h"
#include "catch2/catch.hpp"
#include "tests/admin/test_solvers.h"
#include "tuner_core/problem/driver_line.h"

using namespace tuna;

TEST_CASE("Fin steps map to job kinds", "[admin]") {
  CHECK(*admin::KindsForFinSteps({"miopen_perf_compile", "miopen_perf_eval"}) ==
        std::vector<std::string>{"perf"});
  CHECK(*admin::KindsForFinSteps({"miopen_find_eval"}) == std::vector<std::string>{"find"});
  CHECK(*admin::KindsForFinSteps({"miopen_find_compile", "miopen_perf_eval"}) ==
        std::vector<std::string>{"perf", "find"});
  auto bad = admin::KindsForFinSteps({"miopen_perf_compile", "find_compile"});
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("find_compile") != std::string::npos);
  CHECK_FALSE(admin::KindsForFinSteps({}).ok());
}

TEST_CASE("Progress, rate and ETA", "[admin]") {
  admin::StatusReport r;
  r.by_state = {{"new", 50}, {"compile_start", 10}, {"evaluated", 30}, {"failed", 10}};
  r.finished_recently = 20;
  admin::ComputeProgress(10, &r);
  CHECK(r.total == 100);
  CHECK(r.finished == 40);
  CHECK(r.in_progress == 10);
  CHECK(r.progress_percent == Approx(40.0));
  CHECK(r.rate_per_minute == Approx(2.0));
  REQUIRE(r.eta_minutes.has_value());
  CHECK(*r.eta_minutes == Approx(30.0));

  r.finished_recently = 0;
  admin::ComputeProgress(10, &r);
  CHECK_FALSE(r.eta_minutes.has_value());

  admin::StatusReport empty;
  admin::ComputeProgress(10, &empty);
  CHECK(empty.progress_percent == 100.0);
  CHECK(*empty.eta_minutes == 0.0);
}

TEST_CASE("Configs no solver applies to are named with the first relevant reason", "[admin]") {
  std::vector<schema::StoredConfig> configs;
  for (const char* line : {"conv -n 2 -c 8 -H 10 -W 10 -k 8 -y 1 -x 1 -F 1", "convint8 -n 2 -c 8 -H 10 -W 10 -k 8 -y 1 -x 1 -F 1",
                           "conv -n 2 -c 8 -H 10 -W 10 -k 8 -y 3 -x 3 -F 1"}) {
    auto problems = ParseDriverLine(line);
    REQUIRE(problems.ok());
    configs.push_back({static_cast<int64_t>(configs.size() + 1), problems->front(), ""});
  }
  auto rec = [](int64_t config, bool applicable, const std::string& reason) {
    schema::ApplicabilityRecord r;
    r.config_id = config;
    r.applicable = applicable;
    r.reason = reason;
    return r;
  };
  const std::vector<schema::ApplicabilityRecord> records = {
      rec(1, false, "direction F not supported"), rec(1, true, ""),
      rec(2, false, "direction F not supported"), rec(2, false, "Naive: INT8 is not supported"),
      rec(3, false, "direction F not supported"), rec(3, false, "direction F not supported")};
  const std::vector<std::string> got = admin::UnsolvedConfigs(configs, records, 2);
  REQUIRE(got.size() == 2);
  CHECK(got[0] == ToDriverLine(configs[1].problem) + ": Naive: INT8 is not supported");
  CHECK(got[1] == ToDriverLine(configs[2].problem) + ": no solver handles its direction");
}

TEST_CASE("Applicability is computed for every pair, the same on any thread count", "[admin]") {
  auto registry = testing::MakeTestRegistry();
  std::vector<admin::SolverRef> solvers;
  for (const auto& r : registry->All()) solvers.push_back({static_cast<int64_t>(r.id), r.solver});
  std::vector<schema::StoredConfig> configs;
  int64_t id = 1;
  for (const char* line : {"conv -n 2 -c 8 -H 10 -W 10 -k 8 -y 1 -x 1 -F 0",
                           "conv -n 2 -c 8 -H 10 -W 10 -k 8 -y 3 -x 3 -F 0"}) {
    auto problems = ParseDriverLine(line);  // held: `*ParseDriverLine(..)` in the loop head
    REQUIRE(problems.ok());                 // would dangle (ASan: stack-use-after-scope)
    for (const Problem& p : *problems) configs.push_back({id++, p, ""});
  }
  // Many copies so several threads get work.
  std::vector<schema::StoredConfig> many;
  for (int k = 0; k < 200; ++k) {
    for (auto c : configs) {
      c.id += 6 * k;
      many.push_back(c);
    }
  }
  auto target = solver::TargetForArch("gfx90a", 104);
  REQUIRE(target.ok());
  auto one = admin::ComputeApplicability(*target, many, solvers, 1);
  // Progress comes from the calling thread only (no lock here), never goes back and ends at
  // every config checked.
  std::vector<std::pair<int64_t, int64_t>> progress;
  auto four = admin::ComputeApplicability(
      *target, many, solvers, 4,
      [&](int64_t done, int64_t total) { progress.emplace_back(done, total); });
  REQUIRE(progress.size() >= 2);
  CHECK(progress.front() == std::make_pair(int64_t{0}, static_cast<int64_t>(many.size())));
  CHECK(progress.back() ==
        std::make_pair(static_cast<int64_t>(many.size()), static_cast<int64_t>(many.size())));
  for (size_t k = 1; k < progress.size(); ++k) {
    CHECK(progress[k].first >= progress[k - 1].first);
    CHECK(progress[k].second == static_cast<int64_t>(many.size()));
  }
  REQUIRE(one.size() == many.size() * 4);
  REQUIRE(four.size() == one.size());
  int64_t applicable = 0;
  for (size_t k = 0; k < one.size(); ++k) {
    CHECK(one[k].config_id == four[k].config_id);
    CHECK(one[k].solver_id == four[k].solver_id);
    CHECK(one[k].applicable == four[k].applicable);
    CHECK(one[k].reason == four[k].reason);
    applicable += one[k].applicable;
  }
  // Per 6 configs (1x1 F/B/W, 3x3 F/B/W): TunedFwd 2, Naive 6, OneByOne 3, GemmBwd 0.
  CHECK(applicable == 200 * 11);
  CHECK(one[0].config_id == many[0].id);
  CHECK(one[0].solver_id == 1001);
}

TEST_CASE("Solver records carry the registry's metadata", "[admin]") {
  auto registry = testing::MakeTestRegistry();
  auto records = admin::SolverRecords(*registry);
  REQUIRE(records.size() == 4);
  CHECK(records[0].name == "TestTunedFwd");
  CHECK(records[0].directions == "F");
  CHECK(records[1].directions == "FBW");
  CHECK_FALSE(records[1].tunable);
  CHECK(records[3].directions == "B");
  CHECK(records[3].id == 1004);
}

TEST_CASE("Find-only jobs run configs ahead of the rest", "[admin]") {
  // Configs 10..14, each: a find-only job (solver 2) after a perf and a find job (solver 1).
  std::vector<schema::JobSpec> jobs;
  for (int64_t c = 10; c < 15; ++c) {
    jobs.push_back({c, 1, "perf"});
    jobs.push_back({c, 1, "find"});
    jobs.push_back({c, 2, "find"});
  }
  auto find_only = [](const schema::JobSpec& j) { return j.solver_id == 2; };
  auto names = [](const std::vector<schema::JobSpec>& v) {
    std::vector<std::string> out;
    for (const auto& j : v) out.push_back(std::to_string(j.config_id) + (j.solver_id == 2 ? "n" : j.kind.substr(0, 1)));
    return out;
  };
  CHECK(names(admin::FindOnlyAhead(jobs, find_only, 2)) ==
        std::vector<std::string>{"10n", "11n", "10p", "10f", "12n", "11p", "11f", "13n", "12p", "12f",
                                 "14n", "13p", "13f", "14p", "14f"});
  // A window past the last config: every find-only job first.
  CHECK(names(admin::FindOnlyAhead(jobs, find_only, 32)) ==
        std::vector<std::string>{"10n", "11n", "12n", "13n", "14n", "10p", "10f", "11p", "11f", "12p",
                                 "12f", "13p", "13f", "14p", "14f"});
  // No find-only job: the order is kept.
  CHECK(names(admin::FindOnlyAhead(jobs, [](const schema::JobSpec&) { return false; }, 2)) == names(jobs));
}
