// The leasing SQL against a real MariaDB: claims, fencing, idempotent reports, reaper, retry
// limit, quarantine, kernels.
#include "schema/store/lease_store.h"

#include <atomic>
#include <cmath>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"

namespace tuna {
namespace {

using schema::ClaimWant;
using schema::JobStep;
using schema::LeaseStore;
using schema::ReportOutcome;
using schema::StepReport;

int64_t Count(schema::Database& db, const std::string& sql, const schema::Params& p = {}) {
  auto r = db.Query(sql, p);
  REQUIRE(r.ok());
  return (*r)[0].Int(0);
}

std::string JobState(schema::Database& db, int64_t id) {
  auto r = db.Query("SELECT state FROM job WHERE id = ?", {id});
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  return (*r)[0].String(0);
}

StepReport Success(const schema::ClaimedJob& j, JobStep step) {
  StepReport r;
  r.job_id = j.job_id;
  r.attempt = j.attempt;
  r.owner = j.owner;
  r.step = step;
  r.succeeded = true;
  return r;
}

TEST_CASE_METHOD(testing::MariadbTest, "claims hand out distinct jobs with a fencing attempt",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 10, 2);
  REQUIRE(seeded.ok());
  REQUIRE(seeded->jobs == 20);
  LeaseStore store(db(), {});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 3}, {"b", 2}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 5);
  std::set<int64_t> ids;
  for (size_t k = 0; k < c->size(); ++k) {
    ids.insert((*c)[k].job_id);
    CHECK((*c)[k].owner == (k < 3 ? "a" : "b"));
    CHECK((*c)[k].attempt == 1);
    CHECK(!(*c)[k].driver.empty());
    CHECK(JobState(db(), (*c)[k].job_id) == "compile_start");
  }
  CHECK(ids.size() == 5);
  // The rest, and then nothing.
  auto rest = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"c", 64}});
  REQUIRE(rest.ok());
  CHECK(rest->size() == 15);
  auto none = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"c", 4}});
  REQUIRE(none.ok());
  CHECK(none->empty());
  // Eval finds nothing until something is compiled.
  auto eval = store.Claim(JobStep::kEval, {seeded->session_id}, {{"d", 4}});
  REQUIRE(eval.ok());
  CHECK(eval->empty());
}

// Fillers (schema 12, job.filler: the naive find jobs on GPU targets): an eval claim takes them
// after the other ready jobs of their priority; a compile claim keeps the id order.
TEST_CASE_METHOD(testing::MariadbTest, "eval claims take fillers last, compile claims in id order", "[mariadb]") {
  for (const char* state : {"new", "compiled"}) {
    INFO(state);
    auto seeded = testing::SeedQueue(db(), 4, 1, "find", state);
    REQUIRE(seeded.ok());
    auto ids = db().Query("SELECT id FROM job WHERE session_id = ? ORDER BY id", {seeded->session_id});
    REQUIRE(ids.ok());
    REQUIRE(ids->size() == 4);
    const int64_t first = (*ids)[0].Int(0);
    REQUIRE(db().Execute("UPDATE job SET filler = TRUE WHERE id IN (?, ?)", {first, first + 2}).ok());
    LeaseStore store(db(), {});
    const JobStep step = std::string(state) == "new" ? JobStep::kCompile : JobStep::kEval;
    auto c = store.Claim(step, {seeded->session_id}, {{"a", 4}});
    REQUIRE(c.ok());
    REQUIRE(c->size() == 4);
    std::vector<int64_t> order;
    for (const auto& j : *c) order.push_back(j.job_id - first);
    if (step == JobStep::kCompile) {
      CHECK(order == std::vector<int64_t>{0, 1, 2, 3});
    } else {
      CHECK(order == std::vector<int64_t>{1, 3, 0, 2});
    }
  }
}

TEST_CASE_METHOD(testing::MariadbTest, "concurrent claims never lease a job twice", "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 100, 3);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {});
  std::mutex mu;
  std::vector<int64_t> all;
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      while (true) {
        auto c = store.Claim(JobStep::kCompile, {seeded->session_id},
                             {{"w" + std::to_string(t), 7}});
        if (!c.ok()) {
          ++errors;
          return;
        }
        if (c->empty()) return;
        std::lock_guard<std::mutex> l(mu);
        for (const auto& j : *c) all.push_back(j.job_id);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors == 0);
  CHECK(all.size() == 300);
  CHECK(std::set<int64_t>(all.begin(), all.end()).size() == 300);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE attempt <> 1") == 0);
}

TEST_CASE_METHOD(testing::MariadbTest, "reports are fenced and idempotent", "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 2, 1, "perf");
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 1}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 1);
  const auto job = (*c)[0];

  StepReport stale = Success(job, JobStep::kCompile);
  stale.attempt = job.attempt + 1;
  auto o = store.Report({stale});
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kStale);
  StepReport other = Success(job, JobStep::kCompile);
  other.owner = "intruder";
  o = store.Report({other});
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kStale);
  CHECK(JobState(db(), job.job_id) == "compile_start");

  schema::StoredKernel k{std::string(64, 'a'), "cpu-test", "g++", "x.cc", "-DX=1", "f",
                         std::string(1000, 'z')};
  auto kid = store.PutKernels({k, k});
  REQUIRE(kid.ok());
  CHECK((*kid)[0] == (*kid)[1]);  // deduplicated by content
  StepReport ok = Success(job, JobStep::kCompile);
  ok.kernels = {{(*kid)[0], std::string(64, 'a')}};
  o = store.Report({ok, ok});  // the second copy in the same batch is a duplicate
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kApplied);
  CHECK((*o)[1] == ReportOutcome::kDuplicate);
  CHECK(JobState(db(), job.job_id) == "compiled");
  auto fetched = store.JobKernels(job.job_id);
  REQUIRE(fetched.ok());
  REQUIRE(fetched->size() == 1);
  CHECK((*fetched)[0].code_object == std::string(1000, 'z'));
  CHECK((*fetched)[0].build_key == std::string(64, 'a'));

  auto e = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 5}});
  REQUIRE(e.ok());
  REQUIRE(e->size() == 1);
  CHECK((*e)[0].attempt == 2);
  StepReport eval = Success((*e)[0], JobStep::kEval);
  eval.has_result = true;
  eval.params = "2";
  eval.kernel_time_ms = 0.5;
  eval.verified = true;
  eval.samples = {{"1", 0.7, "Passed", ""}, {"2", 0.5, "Passed", ""}, {"4", std::nullopt,
                                                                       "Incorrect", "mismatch"}};
  o = store.Report({eval});
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kApplied);
  o = store.Report({eval});
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kDuplicate);
  CHECK(JobState(db(), job.job_id) == "evaluated");
  CHECK(Count(db(), "SELECT COUNT(*) FROM perf_result") == 1);
  CHECK(Count(db(), "SELECT COUNT(*) FROM eval_sample") == 3);
  // A report from the compile lease after the eval finished is stale, not a duplicate.
  o = store.Report({ok});
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kStale);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "a find job waits for its perf job and is handed the tuned params", "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 2, 1, "perf");
  REQUIRE(seeded.ok());
  REQUIRE(db().Execute("INSERT INTO job (session_id, config_id, solver_id, kind, state) "
                       "SELECT session_id, config_id, solver_id, 'find', 'new' FROM job")
              .ok());
  LeaseStore store(db(), {});
  // Only the perf jobs can be claimed while they run.
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 10}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 2);
  for (const auto& j : *c) {
    CHECK(j.kind == "perf");
    CHECK(j.tuned_params.empty());
    CHECK(j.find_follows);  // the find job runs the finishing step
  }
  auto o = store.Report({Success((*c)[0], JobStep::kCompile), Success((*c)[1], JobStep::kCompile)});
  REQUIRE(o.ok());
  auto none = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 10}});
  REQUIRE(none.ok());
  CHECK(none->empty());  // perf compiled, not evaluated: the find jobs still wait

  auto e = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 10}});
  REQUIRE(e.ok());
  REQUIRE(e->size() == 2);
  StepReport tuned = Success((*e)[0], JobStep::kEval);
  tuned.has_result = true;
  tuned.params = "2";
  tuned.kernel_time_ms = 0.5;
  tuned.verified = true;
  StepReport failed = Success((*e)[1], JobStep::kEval);
  failed.succeeded = false;
  failed.retryable = false;
  failed.error = "Incorrect: every candidate";
  o = store.Report({tuned, failed});
  REQUIRE(o.ok());

  // Both perf jobs ended (one evaluated, one failed): both find jobs go, one with the params.
  auto f = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 10}});
  REQUIRE(f.ok());
  REQUIRE(f->size() == 2);
  std::map<int64_t, std::string> params_by_config;
  for (const auto& j : *f) {
    CHECK(j.kind == "find");
    params_by_config[j.config_id] = j.tuned_params;
  }
  CHECK(params_by_config[(*e)[0].config_id] == "2");
  CHECK(params_by_config[(*e)[1].config_id].empty());
  for (const auto& j : *f) CHECK_FALSE(j.find_follows);

  // A find job that kept the tuned params' build for its problem alone (the finishing step)
  // gives the perf result those params and their time; one that did not leaves it as it was.
  o = store.Report({Success((*f)[0], JobStep::kCompile), Success((*f)[1], JobStep::kCompile)});
  REQUIRE(o.ok());
  auto fe = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 10}});
  REQUIRE(fe.ok());
  REQUIRE(fe->size() == 2);
  std::vector<StepReport> found;
  for (const auto& j : *fe) {
    StepReport r = Success(j, JobStep::kEval);
    r.has_result = true;
    r.verified = true;
    r.params = j.tuned_params.empty() ? "1" : "2,1";
    r.kernel_time_ms = 0.25;
    r.finished = true;  // for the config without a perf result: nothing to update
    found.push_back(r);
  }
  o = store.Report(found);
  REQUIRE(o.ok());
  auto pr = db().Query("SELECT config_id, params, kernel_time FROM perf_result WHERE session_id = ?",
                       {seeded->session_id});
  REQUIRE(pr.ok());
  REQUIRE(pr->size() == 1);
  CHECK((*pr)[0].Int("config_id") == (*e)[0].config_id);
  CHECK((*pr)[0].String("params") == "2,1");
  CHECK((*pr)[0].Double("kernel_time") == Approx(0.25));
  CHECK(Count(db(), "SELECT COUNT(*) FROM find_result WHERE session_id = ?", {seeded->session_id}) == 2);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "a perf job without a find job finishes its own search; perf jobs get the config's fastest time",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 1, 2, "perf");
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 10}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 2);
  for (const auto& j : *c) {
    CHECK_FALSE(j.find_follows);
    CHECK(j.rival_ms == 0);  // no result yet
  }
  REQUIRE(store.Report({Success((*c)[0], JobStep::kCompile), Success((*c)[1], JobStep::kCompile)}).ok());
  auto first = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 1}});
  REQUIRE(first.ok());
  REQUIRE(first->size() == 1);
  StepReport r = Success((*first)[0], JobStep::kEval);
  r.has_result = true;
  r.verified = true;
  r.params = "1";
  r.kernel_time_ms = 0.75;
  REQUIRE(store.Report({r}).ok());
  auto second = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 1}});
  REQUIRE(second.ok());
  REQUIRE(second->size() == 1);
  CHECK((*second)[0].rival_ms == Approx(0.75));  // the other solver's result on this config
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "perf claims carry the params that ran closest to the best on other configs (warm start)",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 2, 1, "perf");
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {});  // every claim reads them (the default)
  schema::LeaseStoreOptions reuse;
  reuse.warm_params_ttl_s = 30;
  LeaseStore cached(db(), reuse);
  auto first = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 1}});
  REQUIRE(first.ok());
  REQUIRE(first->size() == 1);
  CHECK(first->front().transfer.empty());  // nothing tuned yet
  auto probe = cached.Claim(JobStep::kCompile, {seeded->session_id}, {{"p", 1}});  // caches "none"
  REQUIRE(probe.ok());
  REQUIRE(probe->size() == 1);
  CHECK(probe->front().transfer.empty());
  REQUIRE(db().Execute("UPDATE job SET state = 'new', lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = 'p'").ok());
  REQUIRE(store.Report({Success(first->front(), JobStep::kCompile)}).ok());
  auto e = store.Claim(JobStep::kEval, {seeded->session_id}, {{"a", 1}});
  REQUIRE(e.ok());
  REQUIRE(e->size() == 1);
  StepReport eval = Success(e->front(), JobStep::kEval);
  eval.has_result = true;
  eval.params = "4";
  eval.kernel_time_ms = 0.5;
  eval.verified = true;
  // What the search timed: ranked by time against the config's fastest; a failed candidate and
  // a time that is not > 0 are no evidence.
  eval.samples = {{"2", 0.8, "Passed", ""}, {"4", 0.5, "Passed", ""}, {"8", 0.6, "Passed", ""},
                  {"1", 0.1, "Incorrect", "mismatch"}, {"16", 0.0, "Passed", ""}};
  REQUIRE(store.Report({eval}).ok());
  // A compile claim fixes a new horizon, so even a store with a TTL reads again.
  auto stale = cached.Claim(JobStep::kCompile, {seeded->session_id}, {{"p", 1}});
  REQUIRE(stale.ok());
  REQUIRE(stale->size() == 1);
  CHECK(stale->front().transfer.size() == 1);
  REQUIRE(db().Execute("UPDATE job SET state = 'new', lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = 'p'").ok());

  // A config of another data type (or direction, or layout) learns nothing from it.
  REQUIRE(db().Execute("UPDATE conv_config SET data_type = 'FP16' WHERE id <> ?", {first->front().config_id}).ok());
  auto other = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"o", 1}});
  REQUIRE(other.ok());
  REQUIRE(other->size() == 1);
  CHECK(other->front().config_class == "FP16/F/NCHW");
  CHECK(other->front().transfer.empty());
  REQUIRE(db().Execute("UPDATE conv_config SET data_type = 'FP32'").ok());
  REQUIRE(db().Execute("UPDATE job SET state = 'new', lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = 'o'").ok());

  auto second = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"b", 1}});
  REQUIRE(second.ok());
  REQUIRE(second->size() == 1);
  CHECK(second->front().config_id != first->front().config_id);
  // One run: the first config's driver line and the fastest passing time of each params.
  REQUIRE(second->front().transfer.size() == 1);
  CHECK(second->front().transfer[0].driver == first->front().driver);
  CHECK(second->front().transfer[0].times ==
        std::vector<search::TransferTime>{{"2", 0.8}, {"4", 0.5}, {"8", 0.6}});
  // An unverified result is no evidence.
  REQUIRE(db().Execute("UPDATE perf_result SET verified = FALSE").ok());
  REQUIRE(store.Report({Success(second->front(), JobStep::kCompile)}).ok());
  auto e2 = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 1}});
  REQUIRE(e2.ok());
  REQUIRE(e2->size() == 1);
  CHECK(e2->front().transfer.empty());

  // The compile step's claim fixed the job's transfer horizon; the eval step reads the results
  // finished by then, as the compile step did (so both learn the same score): one finished
  // later is not read, and a job without a horizon reads every result.
  CHECK(!second->front().transfer_horizon.empty());
  CHECK(e2->front().transfer_horizon == second->front().transfer_horizon);
  REQUIRE(db().Execute("UPDATE perf_result SET verified = TRUE").ok());
  auto again = [&](const char* horizon) {
    REQUIRE(db().Execute(absl::StrCat("UPDATE job SET state = 'compiled', lease_owner = NULL, "
                                      "lease_expires_at = NULL, transfer_horizon = ", horizon, " WHERE id = ?"),
                         {second->front().job_id}).ok());
    auto e = store.Claim(JobStep::kEval, {seeded->session_id}, {{"b", 1}});
    REQUIRE(e.ok());
    REQUIRE(e->size() == 1);
    return e->front();
  };
  CHECK(again("'2000-01-01'").transfer.empty());
  const schema::ClaimedJob unbounded = again("NULL");
  CHECK(unbounded.transfer_horizon.empty());
  CHECK(unbounded.transfer.size() == 1);
}

TEST_CASE_METHOD(testing::MariadbTest, "a re-compile (after jobs reset) replaces the earlier compile's kernel links",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 1, 1);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {});
  schema::StoredKernel k1{std::string(64, 'a'), "cpu-test", "g++", "x.cc", "-DX=1", "f", std::string(100, 'y')};
  schema::StoredKernel k2{std::string(64, 'b'), "cpu-test", "g++", "x.cc", "-DX=2", "f", std::string(100, 'z')};
  auto kid = store.PutKernels({k1, k2});
  REQUIRE(kid.ok());
  auto compile = [&](int64_t kernel_id, const std::string& key) {
    auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"w", 1}});
    REQUIRE(c.ok());
    REQUIRE(c->size() == 1);
    StepReport r = Success(c->front(), JobStep::kCompile);
    r.kernels = {{kernel_id, key}};
    auto o = store.Report({r});
    REQUIRE(o.ok());
    CHECK((*o)[0] == ReportOutcome::kApplied);
    return c->front();
  };
  const schema::ClaimedJob first = compile((*kid)[0], std::string(64, 'a'));
  CHECK(first.attempt == 1);
  REQUIRE(db().Execute("UPDATE job SET state = 'new' WHERE id = ?", {first.job_id}).ok());  // jobs reset
  const schema::ClaimedJob second = compile((*kid)[1], std::string(64, 'b'));
  CHECK(second.attempt == 2);
  auto linked = store.JobKernels(first.job_id);
  REQUIRE(linked.ok());
  REQUIRE(linked->size() == 1);
  CHECK((*linked)[0].build_key == std::string(64, 'b'));
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "perf claims of a config an earlier session tuned on the same target carry its params",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 2, 1, "perf");
  REQUIRE(seeded.ok());
  const int64_t a = seeded->session_id;
  LeaseStore store(db(), {});
  auto c = store.Claim(JobStep::kCompile, {a}, {{"w", 2}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 2);
  for (const schema::ClaimedJob& j : *c) CHECK(j.prior_params.empty());  // nothing tuned anywhere yet
  REQUIRE(store.Report({Success((*c)[0], JobStep::kCompile), Success((*c)[1], JobStep::kCompile)}).ok());
  auto e = store.Claim(JobStep::kEval, {a}, {{"w", 2}});
  REQUIRE(e.ok());
  REQUIRE(e->size() == 2);
  StepReport tuned = Success((*e)[0], JobStep::kEval);
  tuned.has_result = true;
  tuned.params = "2";
  tuned.kernel_time_ms = 0.5;
  tuned.verified = true;
  StepReport unverified = Success((*e)[1], JobStep::kEval);
  unverified.has_result = true;
  unverified.params = "1";
  unverified.kernel_time_ms = 0.7;
  unverified.verified = false;
  REQUIRE(store.Report({tuned, unverified}).ok());
  const int64_t tuned_config = (*e)[0].config_id;

  // Session b: the same configs and solver on the same target; session c: another CU count.
  auto new_session = [&](int num_cu) {
    REQUIRE(db().Execute("INSERT INTO session (arch, num_cu, backend, label) VALUES ('cpu-test', ?, 'CPU', 'again')",
                         {int64_t{num_cu}}).ok());
    const int64_t id = Count(db(), "SELECT MAX(id) FROM session");
    REQUIRE(db().Execute("INSERT INTO job (session_id, config_id, solver_id, kind, state) "
                         "SELECT ?, config_id, solver_id, kind, 'new' FROM job WHERE session_id = ?",
                         {id, a}).ok());
    return id;
  };
  const int64_t b = new_session(4);
  const int64_t other = new_session(8);
  auto again = store.Claim(JobStep::kCompile, {b}, {{"x", 2}});
  REQUIRE(again.ok());
  REQUIRE(again->size() == 2);
  for (const schema::ClaimedJob& j : *again) {
    INFO(j.config_id);
    CHECK(j.prior_params == (j.config_id == tuned_config ? "2" : ""));  // an unverified result is none
  }
  auto elsewhere = store.Claim(JobStep::kCompile, {other}, {{"y", 2}});
  REQUIRE(elsewhere.ok());
  REQUIRE(elsewhere->size() == 2);
  for (const schema::ClaimedJob& j : *elsewhere) CHECK(j.prior_params.empty());  // 8 CUs: another target
  // --retune: off.
  REQUIRE(db().Execute("UPDATE job SET state = 'new', lease_owner = NULL, lease_expires_at = NULL WHERE session_id = ?",
                       {b}).ok());
  LeaseStore retune(db(), {.reuse_prior_results = false});
  auto searched = retune.Claim(JobStep::kCompile, {b}, {{"z", 2}});
  REQUIRE(searched.ok());
  REQUIRE(searched->size() == 2);
  for (const schema::ClaimedJob& j : *searched) CHECK(j.prior_params.empty());
}

TEST_CASE_METHOD(testing::MariadbTest, "failures retry up to the limit, then fail with the error",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 1, 1);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {.lease_seconds = 60, .max_retries = 2, .quarantine_kills = 5});
  for (int round = 1; round <= 2; ++round) {
    auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 1}});
    REQUIRE(c.ok());
    REQUIRE(c->size() == 1);
    StepReport f = Success((*c)[0], JobStep::kCompile);
    f.succeeded = false;
    f.error = "boom " + std::to_string(round);
    auto o = store.Report({f});
    REQUIRE(o.ok());
    CHECK((*o)[0] == ReportOutcome::kApplied);
    // A retried copy of the failure report changes nothing.
    o = store.Report({f});
    REQUIRE(o.ok());
    CHECK((*o)[0] == ReportOutcome::kDuplicate);
  }
  auto r = db().Query("SELECT state, retries, error FROM job");
  REQUIRE(r.ok());
  CHECK((*r)[0].String(0) == "failed");
  CHECK((*r)[0].Int(1) == 2);
  CHECK((*r)[0].String(2).find("boom 2") != std::string::npos);
}

TEST_CASE_METHOD(testing::MariadbTest, "the reaper requeues expired leases and fences the old one",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 3, 1);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {.lease_seconds = 60, .max_retries = 2, .quarantine_kills = 5});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"dead", 3}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 3);
  // Renewal keeps them; then they expire.
  auto held = store.Renew("dead", {{(*c)[0].job_id, 1}, {(*c)[1].job_id, 7}});
  REQUIRE(held.ok());
  CHECK(held->size() == 1);
  REQUIRE(db().Execute("UPDATE job SET lease_expires_at = NOW(6) - INTERVAL 1 SECOND").ok());
  auto reaped = store.Reap();
  REQUIRE(reaped.ok());
  CHECK(reaped->requeued == 3);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'new' AND retries = 1 AND "
                    "error LIKE 'lease expired (owner dead%'") == 3);
  auto again = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"alive", 3}});
  REQUIRE(again.ok());
  REQUIRE(again->size() == 3);
  CHECK((*again)[0].attempt == 2);
  auto o = store.Report({Success((*c)[0], JobStep::kCompile)});
  REQUIRE(o.ok());
  CHECK((*o)[0] == ReportOutcome::kStale);
  // Second expiry reaches max_retries = 2: failed.
  REQUIRE(db().Execute("UPDATE job SET lease_expires_at = NOW(6) - INTERVAL 1 SECOND").ok());
  reaped = store.Reap();
  REQUIRE(reaped.ok());
  CHECK(reaped->failed == 3);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'failed'") == 3);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "leases last extended before the coordinator began serving expire without a charge",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 4, 1);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {.lease_seconds = 60, .max_retries = 1, .quarantine_kills = 5});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"away", 4}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 4);
  // Two leases claimed a lease before "now" and run out; two claimed long before that.
  REQUIRE(db().Execute("UPDATE job SET lease_expires_at = NOW(6) - INTERVAL 1 SECOND WHERE id IN "
                       "(?, ?)", {(*c)[0].job_id, (*c)[1].job_id}).ok());
  REQUIRE(db().Execute("UPDATE job SET lease_expires_at = NOW(6) - INTERVAL 2 HOUR WHERE id IN "
                       "(?, ?)", {(*c)[2].job_id, (*c)[3].job_id}).ok());
  auto now = store.DatabaseNow();
  REQUIRE(now.ok());
  CHECK(now->size() == 26);  // YYYY-MM-DD hh:mm:ss.ffffff
  // Serving since an hour ago: the leases last extended before then (running out 2 h ago) are
  // forgiven; those renewed while it served (running out now) are charged.
  auto hour_ago = db().Query("SELECT CAST(NOW(6) - INTERVAL 1 HOUR AS CHAR)");
  REQUIRE(hour_ago.ok());
  auto reaped = store.Reap({.forgive_extended_before = (*hour_ago)[0].String(0)});
  REQUIRE(reaped.ok());
  CHECK(reaped->forgiven == 2);
  CHECK(reaped->failed == 2);  // max_retries 1: every charged expiry fails the job
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'failed' AND id IN (" +
                        std::to_string((*c)[0].job_id) + "," + std::to_string((*c)[1].job_id) +
                        ")") == 2);
  REQUIRE(db().Execute("UPDATE job SET state = 'compile_start', lease_owner = 'away', retries = 0, "
                       "error = NULL, finished_at = NULL").ok());
  REQUIRE(db().Execute("UPDATE job SET lease_expires_at = NOW(6) - INTERVAL 1 SECOND").ok());
  // Serving since now: every lease was last extended before, none is charged.
  reaped = store.Reap({.forgive_extended_before = *now});
  REQUIRE(reaped.ok());
  CHECK(reaped->forgiven == 4);
  CHECK(reaped->requeued + reaped->failed == 0);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'new' AND retries = 0 AND lease_owner "
                    "IS NULL AND error LIKE 'lease expired while no coordinator%not counted%'") == 4);
  // ReleaseOwner / LeaseOwners: a resumed `tune -f` hands back its dead predecessor's leases.
  auto again = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"dead-run", 4}});
  REQUIRE(again.ok());
  auto owners = store.LeaseOwners(seeded->session_id);
  REQUIRE(owners.ok());
  CHECK(*owners == std::vector<std::string>{"dead-run"});
  auto n = store.ReleaseOwner(seeded->session_id, "dead-run");
  REQUIRE(n.ok());
  CHECK(*n == 4);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'new' AND retries = 0") == 4);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "executor kills quarantine a config's solver, not the whole config",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 1, 2);  // one config, two solvers' jobs
  REQUIRE(seeded.ok());
  auto ids = db().Query("SELECT id, solver_id FROM job ORDER BY id");
  REQUIRE(ids.ok());
  REQUIRE(ids->size() == 2);
  const int64_t bad_job = (*ids)[0].Int(0), good_job = (*ids)[1].Int(0);
  const int64_t good_solver = (*ids)[1].Int(1);
  LeaseStore store(db(), {.lease_seconds = 60, .max_retries = 10, .quarantine_kills = 2});
  for (int k = 0; k < 2; ++k) {
    // The other solver's job is excluded, so the killed one comes back each time.
    auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 1}},
                         {{seeded->session_id, {good_solver}}});
    REQUIRE(c.ok());
    REQUIRE(c->size() == 1);
    REQUIRE((*c)[0].job_id == bad_job);
    StepReport f = Success((*c)[0], JobStep::kCompile);
    f.succeeded = false;
    f.executor_killed = true;
    f.error = "executor killed by signal 9 (hang)";
    REQUIRE(store.Report({f}).ok());
  }
  CHECK(JobState(db(), bad_job) == "failed");
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE id = ? AND error LIKE 'quarantined%'",
              {bad_job}) == 1);
  CHECK(JobState(db(), good_job) == "new");  // the config's other solver goes on
  CHECK(Count(db(), "SELECT COUNT(*) FROM config_quarantine WHERE quarantined AND kills = 2 AND "
                    "reason = 'executor_killed' AND solver_id <> ?",
              {good_solver}) == 1);
  CHECK(Count(db(), "SELECT COUNT(*) FROM config_quarantine") == 1);
}

TEST_CASE_METHOD(testing::MariadbTest, "successes decay a config's solver's executor kills",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 1, 1);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {.lease_seconds = 60, .max_retries = 10, .quarantine_kills = 3});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 1}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 1);
  StepReport f = Success((*c)[0], JobStep::kCompile);
  f.succeeded = false;
  f.executor_killed = true;
  f.error = "executor crashed: signal 11";
  REQUIRE(store.Report({f}).ok());
  CHECK(Count(db(), "SELECT kills FROM config_quarantine") == 1);
  c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 1}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 1);
  REQUIRE(store.Report({Success((*c)[0], JobStep::kCompile)}).ok());
  CHECK(Count(db(), "SELECT kills FROM config_quarantine") == 1);  // compiles do not decay it
  c = store.Claim(JobStep::kEval, {seeded->session_id}, {{"a", 1}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 1);
  REQUIRE(store.Report({Success((*c)[0], JobStep::kEval)}).ok());
  CHECK(Count(db(), "SELECT kills FROM config_quarantine") == 0);
  CHECK(Count(db(), "SELECT COUNT(*) FROM config_quarantine WHERE quarantined") == 0);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "failures blamed on the host or unsupported hand the job back uncharged",
                 "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 3, 1);
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {.lease_seconds = 60, .max_retries = 1});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"w/1", 3}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 3);
  std::vector<StepReport> reports;
  for (const jobs::Blame blame : {jobs::Blame::kHost, jobs::Blame::kUnsupported, jobs::Blame::kJob}) {
    StepReport f = Success((*c)[reports.size()], JobStep::kCompile);
    f.succeeded = false;
    f.blame = blame;
    f.error = "cannot open the device";
    reports.push_back(f);
  }
  auto o = store.Report(reports);
  REQUIRE(o.ok());
  for (ReportOutcome x : *o) CHECK(x == ReportOutcome::kApplied);
  CHECK(JobState(db(), reports[0].job_id) == "new");
  CHECK(JobState(db(), reports[1].job_id) == "new");
  CHECK(JobState(db(), reports[2].job_id) == "failed");  // max_retries 1: a charge fails it
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE retries = 0 AND lease_owner IS NULL AND "
                    "error LIKE 'host fault on w/1: cannot open the device; not counted%'") == 1);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE retries = 0 AND "
                    "error LIKE 'released as unsupported by w/1:%'") == 1);
  // Fenced like every report: sending the hand-back again changes nothing.
  auto again = store.Report({reports[0]});
  REQUIRE(again.ok());
  CHECK((*again)[0] == ReportOutcome::kDuplicate);
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "a batch of reports is applied as if one by one, in order", "[mariadb]") {
  auto seeded = testing::SeedQueue(db(), 4, 2);  // 8 perf jobs
  REQUIRE(seeded.ok());
  LeaseStore store(db(), {});
  auto c = store.Claim(JobStep::kCompile, {seeded->session_id}, {{"a", 3}, {"b", 3}});
  REQUIRE(c.ok());
  REQUIRE(c->size() == 6);
  schema::StoredKernel k{std::string(64, 'c'), "cpu-test", "g++", "y.cc", "", "f", "code"};
  auto kid = store.PutKernels({k});
  REQUIRE(kid.ok());

  // Successes of distinct jobs, with a stale one and an unknown job among them.
  std::vector<StepReport> batch;
  for (int j = 0; j < 5; ++j) batch.push_back(Success((*c)[j], JobStep::kCompile));
  batch[0].kernels = {{(*kid)[0], std::string(64, 'c')}};
  batch[3].kernels = {{(*kid)[0], std::string(64, 'c')}};
  batch.push_back(Success((*c)[5], JobStep::kCompile));
  batch.back().attempt += 1;
  batch.push_back(Success((*c)[4], JobStep::kCompile));
  batch.back().job_id = (*c)[5].job_id + 1000;
  const std::vector<ReportOutcome> first = {
      ReportOutcome::kApplied, ReportOutcome::kApplied, ReportOutcome::kApplied,
      ReportOutcome::kApplied, ReportOutcome::kApplied, ReportOutcome::kStale,
      ReportOutcome::kNotFound};
  auto o = store.Report(batch);
  REQUIRE(o.ok());
  CHECK(*o == first);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'compiled' AND lease_owner IS NULL "
                    "AND lease_expires_at IS NULL") == 5);
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE id = ? AND compile_worker = 'b'",
              {(*c)[3].job_id}) == 1);
  CHECK(JobState(db(), (*c)[5].job_id) == "compile_start");
  CHECK(Count(db(), "SELECT COUNT(*) FROM job_kernel") == 2);
  // The same batch again: duplicates, nothing written.
  o = store.Report(batch);
  REQUIRE(o.ok());
  CHECK(*o == std::vector<ReportOutcome>{
                  ReportOutcome::kDuplicate, ReportOutcome::kDuplicate, ReportOutcome::kDuplicate,
                  ReportOutcome::kDuplicate, ReportOutcome::kDuplicate, ReportOutcome::kStale,
                  ReportOutcome::kNotFound});
  CHECK(Count(db(), "SELECT COUNT(*) FROM job_kernel") == 2);

  // A failure in the batch: each report sees the ones before it (the success of the lease the
  // failure just ended is stale).
  StepReport failed = Success((*c)[5], JobStep::kCompile);
  failed.succeeded = false;
  failed.error = "boom";
  o = store.Report({failed, Success((*c)[5], JobStep::kCompile)});
  REQUIRE(o.ok());
  CHECK(*o == std::vector<ReportOutcome>{ReportOutcome::kApplied, ReportOutcome::kStale});
  CHECK(JobState(db(), (*c)[5].job_id) == "new");

  // Eval: perf and find results and samples (more than one INSERT's worth) in one batch.
  auto finds = testing::SeedQueue(db(), 2, 2, "find");
  REQUIRE(finds.ok());
  REQUIRE(db().Execute("UPDATE job SET state = 'compiled' WHERE session_id = ?",
                       {finds->session_id})
              .ok());
  auto e = store.Claim(JobStep::kEval, {seeded->session_id, finds->session_id}, {{"g", 9}});
  REQUIRE(e.ok());
  REQUIRE(e->size() == 9);  // the 5 compiled perf jobs, then the 4 find jobs
  std::vector<StepReport> evals;
  for (size_t j = 0; j < e->size(); ++j) {
    StepReport r = Success((*e)[j], JobStep::kEval);
    r.has_result = j + 1 < e->size();
    r.params = "2";
    r.kernel_time_ms = 0.5 + static_cast<double>(j);
    r.workspace_bytes = 1024 * static_cast<int64_t>(j);
    r.verified = true;
    if (j == 0) {
      for (int p = 0; p < 300; ++p) r.samples.push_back({std::to_string(p), 1.0, "Passed", ""});
    } else {
      r.samples = {{"1", 0.7, "Passed", ""}, {"4", std::nullopt, "Incorrect", "mismatch"}};
    }
    evals.push_back(std::move(r));
  }
  o = store.Report(evals);
  REQUIRE(o.ok());
  CHECK(*o == std::vector<ReportOutcome>(9, ReportOutcome::kApplied));
  CHECK(Count(db(), "SELECT COUNT(*) FROM job WHERE state = 'evaluated' AND eval_worker = 'g' "
                    "AND finished_at IS NOT NULL AND lease_owner IS NULL") == 9);
  CHECK(Count(db(), "SELECT COUNT(*) FROM perf_result") == 5);
  CHECK(Count(db(), "SELECT COUNT(*) FROM find_result") == 3);
  CHECK(Count(db(), "SELECT COUNT(*) FROM eval_sample") == 300 + 8 * 2);
  CHECK(Count(db(), "SELECT COUNT(*) FROM eval_sample WHERE time IS NULL AND error = 'mismatch'") ==
        8);
  auto perf = db().Query("SELECT kernel_time, params FROM perf_result WHERE job_id = ?",
                         {(*e)[1].job_id});
  REQUIRE(perf.ok());
  REQUIRE(perf->size() == 1);
  CHECK((*perf)[0].Double(0) == 1.5);
  CHECK((*perf)[0].String(1) == "2");
  auto find = db().Query("SELECT workspace, kernel_time FROM find_result WHERE job_id = ?",
                         {(*e)[6].job_id});
  REQUIRE(find.ok());
  REQUIRE(find->size() == 1);
  CHECK((*find)[0].Int(0) == 6 * 1024);
  CHECK((*find)[0].Double(1) == 6.5);
  o = store.Report(evals);
  REQUIRE(o.ok());
  CHECK(*o == std::vector<ReportOutcome>(9, ReportOutcome::kDuplicate));
  CHECK(Count(db(), "SELECT COUNT(*) FROM eval_sample") == 300 + 8 * 2);
}

}  // namespace
}  // namespace tuna
