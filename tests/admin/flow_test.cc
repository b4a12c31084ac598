// The whole admin flow against a real MariaDB with deterministic test solvers:
// import -> solvers update -> session init -> applicability -> jobs load -> status -> reset.
#include <string>

#include "absl/strings/str_cat.h"
#include "admin/applicability.h"
#include "admin/import_configs.h"
#include "admin/job_loader.h"
#include "admin/solver_records.h"
#include "admin/status.h"
#include "catch2/catch.hpp"
#include "schema/store/config_store.h"
#include "schema/store/job_store.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "tests/admin/test_solvers.h"
#include "tests/fixtures/mariadb_fixture.h"

using namespace tuna;
using tuna::testing::MariadbTest;

namespace {

int64_t Scalar(schema::Database& db, const std::string& sql) {
  auto rows = db.Query(sql);
  REQUIRE(rows.ok());
  return (*rows)[0].Int(0);
}

int64_t StateCount(const admin::StatusReport& r, const std::string& state) {
  for (const auto& s : r.by_state) {
    if (s.state == state) return s.jobs;
  }
  return -1;
}

admin::LoadJobsOptions Load(int64_t session, const std::string& steps, bool only_applicable) {
  admin::LoadJobsOptions o;
  o.session_id = session;
  o.tag = "r50";
  o.only_applicable = only_applicable;
  o.label = "test-label";
  std::string s = steps;
  for (size_t pos; (pos = s.find(',')) != std::string::npos; s = s.substr(pos + 1)) {
    o.fin_steps.push_back(s.substr(0, pos));
  }
  o.fin_steps.push_back(s);
  return o;
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "Import, solvers, session, applicability, jobs, status, reset",
                 "[mariadb][admin][flow]") {
  auto registry = testing::MakeTestRegistry();
  admin::ImportOptions imp;
  imp.tag = "r50";
  REQUIRE(admin::ImportDriverFile(db(), "tests/admin/testdata/resnet50_n32.txt", imp).ok());
  schema::ConfigStore configs(db());
  auto listed = configs.List(std::string("r50"));
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 69);
  int64_t one_by_one = 0;
  for (const auto& c : *listed) one_by_one += testing::IsOneByOne(c.problem);
  REQUIRE(one_by_one > 0);
  REQUIRE(one_by_one % 3 == 0);  // every layer in three directions

  // Solvers: written once, idempotent.
  schema::SolverStore solvers(db());
  auto sync = solvers.Sync(admin::SolverRecords(*registry));
  REQUIRE(sync.ok());
  CHECK(sync->added == 4);
  auto resync = solvers.Sync(admin::SolverRecords(*registry));
  REQUIRE(resync.ok());
  CHECK(resync->added == 0);
  CHECK(resync->unchanged == 4);
  auto rows = solvers.List();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 4);
  CHECK((*rows)[0].id == 1001);
  CHECK((*rows)[0].name == "TestTunedFwd");
  CHECK((*rows)[0].directions == "F");
  CHECK((*rows)[0].tunable);
  CHECK((*rows)[1].directions == "FBW");
  CHECK_FALSE((*rows)[1].tunable);
  CHECK((*rows)[3].directions == "B");

  // Session.
  schema::SessionStore sessions(db());
  schema::SessionRecord rec;
  rec.arch = "gfx90a";
  rec.num_cu = 104;
  rec.backend = "HIP";
  rec.label = "flow";
  rec.tuner_version = "tuna test";
  auto session = sessions.Create(rec);
  REQUIRE(session.ok());
  CHECK(sessions.Get(*session)->arch == "gfx90a");
  CHECK(sessions.Get(*session + 100).status().code() == absl::StatusCode::kNotFound);

  // -o before applicability exists is refused.
  auto early = admin::LoadJobs(db(), *registry, Load(*session, "miopen_perf_compile", true));
  CHECK(early.status().code() == absl::StatusCode::kFailedPrecondition);

  // Applicability: 69 configs x 4 solvers.
  admin::ApplicabilityOptions app;
  app.session_id = *session;
  auto applicability = admin::UpdateApplicability(db(), *registry, app);
  REQUIRE(applicability.ok());
  const int64_t expect_applicable = 23 + 69 + one_by_one;
  CHECK(applicability->configs == 69);
  CHECK(applicability->solvers == 4);
  CHECK(applicability->applicable == expect_applicable);
  CHECK(applicability->not_applicable == 276 - expect_applicable);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver_applicability") == 276);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver_applicability WHERE applicable = 0 AND "
                     "reason = 'GemmBwd1x1_stride1: rule says no'") == 23);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver_applicability WHERE applicable = 0 AND "
                     "reason = 'direction B not supported'") == 23);
  // Recomputing overwrites, never duplicates.
  REQUIRE(admin::UpdateApplicability(db(), *registry, app).ok());
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver_applicability") == 276);

  // Perf jobs for applicable tunable solvers: TestTunedFwd on 23 F configs, TestOneByOne on
  // every 1x1 config; TestNaive is not tunable, GemmBwd1x1_stride1 never applicable.
  const int64_t expect_perf = 23 + one_by_one;
  auto load = admin::LoadJobs(db(), *registry,
                              Load(*session, "miopen_perf_compile,miopen_perf_eval", true));
  REQUIRE(load.ok());
  CHECK(load->added == expect_perf);
  CHECK(load->existing == 0);
  CHECK(load->skipped_not_tunable == 69);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job WHERE label = 'test-label' AND kind = 'perf'") ==
        expect_perf);
  // Within a config, the generic solver's job comes after the others (TestTunedFwd has the
  // lower solver id).
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job g JOIN job o ON o.config_id = g.config_id AND "
                     "o.session_id = g.session_id AND o.kind = g.kind WHERE g.solver_id = 1001 AND o.solver_id = 1003 AND "
                     "o.id > g.id") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job g JOIN job o ON o.config_id = g.config_id AND "
                     "o.session_id = g.session_id AND o.kind = g.kind WHERE g.solver_id = 1001 AND o.solver_id = 1003") > 0);

  auto reload = admin::LoadJobs(db(), *registry,
                                Load(*session, "miopen_perf_compile,miopen_perf_eval", true));
  REQUIRE(reload.ok());
  CHECK(reload->added == 0);
  CHECK(reload->existing == expect_perf);

  admin::StatusOptions so;
  so.session_id = *session;
  auto status = admin::CollectStatus(db(), so);
  REQUIRE(status.ok());
  CHECK(StateCount(*status, "new") == expect_perf);
  CHECK(status->total == expect_perf);
  CHECK(status->progress_percent == 0);
  CHECK_FALSE(status->eta_minutes.has_value());
  int64_t tagged = 0;
  for (const auto& t : status->by_tag) tagged += t.tag == "r50" ? t.jobs : 0;
  CHECK(tagged == expect_perf);

  // Find jobs too: every applicable solver (TestNaive included).
  auto both = admin::LoadJobs(
      db(), *registry, Load(*session, "miopen_perf_eval,miopen_find_compile,miopen_find_eval", true));
  REQUIRE(both.ok());
  CHECK(both->kinds == std::vector<std::string>{"perf", "find"});
  CHECK(both->added == expect_applicable);
  CHECK(both->existing == expect_perf);
  const int64_t total = expect_perf + expect_applicable;
  // Find-only jobs (TestNaive: not tunable) come before the other find jobs of their config
  // (admin::FindOnlyAhead), and the first configs' ones before every other job of the load.
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job n JOIN job o ON o.session_id = n.session_id AND "
                     "o.config_id = n.config_id AND o.kind = 'find' AND o.solver_id <> 1002 "
                     "WHERE n.solver_id = 1002 AND n.kind = 'find' AND o.id < n.id") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM (SELECT solver_id FROM job WHERE kind = 'find' ORDER BY id "
                     "LIMIT 32) f WHERE f.solver_id <> 1002") == 0);
  // They are the fillers (eval claims take them after the other ready jobs), and only they.
  CHECK(Scalar(db(), absl::StrCat("SELECT COUNT(*) FROM job WHERE session_id = ", *session,
                                  " AND filler = TRUE")) > 0);
  CHECK(Scalar(db(), absl::StrCat("SELECT COUNT(*) FROM job WHERE session_id = ", *session,
                                  " AND filler <> (kind = 'find' AND solver_id = 1002)")) == 0);

  // Some jobs finish or fail; status groups failures by reason.
  REQUIRE(db().Execute("UPDATE job SET state = 'failed', error = 'kernel timed out' WHERE id % 5 "
                       "= 0")
              .ok());
  REQUIRE(db().Execute("UPDATE job SET state = 'errored', error = 'compile error: x' WHERE id % "
                       "5 = 1")
              .ok());
  REQUIRE(db().Execute("UPDATE job SET state = 'evaluated', finished_at = NOW(6) WHERE id % 5 = "
                       "2")
              .ok());
  const int64_t failed = Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'failed'");
  const int64_t errored = Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'errored'");
  const int64_t evaluated = Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated'");
  REQUIRE(failed > 0);
  REQUIRE(errored > 0);
  status = admin::CollectStatus(db(), so);
  REQUIRE(status.ok());
  CHECK(status->total == total);
  CHECK(status->finished == failed + evaluated);
  CHECK(status->finished_recently == failed + evaluated);
  CHECK(status->rate_per_minute > 0);
  REQUIRE(status->eta_minutes.has_value());
  CHECK(*status->eta_minutes > 0);
  REQUIRE(status->errors.size() == 2);
  for (const auto& e : status->errors) {
    if (e.state == "failed") {
      CHECK(e.reason == "kernel timed out");
      CHECK(e.jobs == failed);
    } else {
      CHECK(e.reason == "compile error: x");
      CHECK(e.jobs == errored);
    }
  }

  // Reset: a tag no config has changes nothing; the real one moves them back to new.
  schema::JobStore jobs(db());
  auto none = jobs.Reset(*session, {"errored", "failed"}, std::string("no-such-tag"));
  REQUIRE(none.ok());
  CHECK(*none == 0);
  CHECK_FALSE(jobs.Reset(*session, {"bogus"}, std::nullopt).ok());
  auto reset = jobs.Reset(*session, {"errored", "failed"}, std::string("r50"));
  REQUIRE(reset.ok());
  CHECK(*reset == failed + errored);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job WHERE state = 'new'") == total - evaluated);

  // A solver leaving the registry is marked invalid, never deleted, and gets no new jobs.
  auto smaller = testing::MakeTestRegistry(/*with_one_by_one=*/false);
  auto shrink = solvers.Sync(admin::SolverRecords(*smaller));
  REQUIRE(shrink.ok());
  CHECK(shrink->invalidated == 1);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM solver") == 4);
  CHECK(Scalar(db(), "SELECT valid FROM solver WHERE name = 'TestOneByOne'") == 0);
  auto named = Load(*session, "miopen_perf_eval", false);
  named.solvers = {"TestOneByOne"};
  CHECK(admin::LoadJobs(db(), *smaller, named).status().code() ==
        absl::StatusCode::kInvalidArgument);

  // Without -o: every valid solver of the config's direction (perf: tunable only).
  rec.label = "second";
  auto session2 = sessions.Create(rec);
  REQUIRE(session2.ok());
  auto all = admin::LoadJobs(db(), *smaller, Load(*session2, "miopen_perf_compile", false));
  REQUIRE(all.ok());
  CHECK(all->added == 23 + 23);  // TestTunedFwd on F, GemmBwd1x1_stride1 on B
  auto only = Load(*session2, "miopen_find_eval", false);
  only.solvers = {"TestNaive"};
  auto naive = admin::LoadJobs(db(), *smaller, only);
  REQUIRE(naive.ok());
  CHECK(naive->added == 69);

  auto sessions_listed = sessions.List();
  REQUIRE(sessions_listed.ok());
  CHECK(sessions_listed->size() == 2);

  // On a CPU target the find-only jobs keep their place (the device is the compiler's cores):
  // each config's other find jobs follow its naive one, so the first 32 are not all naive.
  rec.arch = "cpu-avx2";
  rec.backend = "CPU";
  rec.label = "cpu";
  auto session3 = sessions.Create(rec);
  REQUIRE(session3.ok());
  auto cpu_finds = admin::LoadJobs(db(), *registry, Load(*session3, "miopen_find_eval", false));
  REQUIRE(cpu_finds.ok());
  CHECK(Scalar(db(), absl::StrCat("SELECT COUNT(*) FROM (SELECT solver_id FROM job WHERE session_id = ",
                                  *session3, " ORDER BY id LIMIT 32) f WHERE f.solver_id <> 1002")) > 0);
  CHECK(Scalar(db(), absl::StrCat("SELECT COUNT(*) FROM job WHERE session_id = ", *session3, " AND filler = TRUE")) == 0);
}
