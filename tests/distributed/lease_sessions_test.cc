// CoordinatorOptions::only_sessions: a coordinator restricted to its own session (what
// `tuna tune -f` starts) never leases another session's jobs on the same database, even when
// that session targets the same device.
#include <set>

#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "coordinator/in_process_client.h"

namespace tuna {
namespace {

// A second session of the same target with the same jobs as `from`.
int64_t CopySession(schema::Database& db, int64_t from) {
  REQUIRE(db.Execute("INSERT INTO session (arch, num_cu, backend, label) SELECT arch, num_cu, "
                     "backend, 'other run' FROM session WHERE id = ?",
                     {from})
              .ok());
  auto id = db.Query("SELECT MAX(id) FROM session");
  REQUIRE(id.ok());
  const int64_t to = (*id)[0].Int(0);
  REQUIRE(db.Execute("INSERT INTO job (session_id, config_id, solver_id, kind, state) SELECT ?, "
                     "config_id, solver_id, kind, state FROM job WHERE session_id = ?",
                     {to, from})
              .ok());
  return to;
}

std::set<int64_t> LeasedSessions(schema::Database& db, std::vector<int64_t> only) {
  coordinator::CoordinatorOptions o;
  o.reap_interval = absl::ZeroDuration();
  o.empty_poll_interval = absl::Milliseconds(20);
  o.only_sessions = std::move(only);
  auto coord = coordinator::Coordinator::Create(db, o);
  REQUIRE(coord.ok());
  auto client = coordinator::MakeInProcessClient(**coord);
  coordinator::Device dev{"cpu", "cpu-test", 4, 0, 0};
  auto reg = client->Register({coordinator::kProtocolVersion, "host", "test", {dev}});
  REQUIRE(reg.ok());
  coordinator::LeaseRequest req;
  req.worker_id = reg->worker_id;
  req.step = coordinator::JobStep::kCompile;
  req.compile_backends = {"cpu"};
  req.max_jobs = 64;
  req.wait = absl::Milliseconds(200);
  std::set<int64_t> sessions;
  for (;;) {
    auto jobs = client->Lease(req);
    REQUIRE(jobs.ok());
    if (jobs->empty()) break;
    for (const auto& j : *jobs) sessions.insert(j.session_id);
  }
  return sessions;
}

TEST_CASE_METHOD(testing::MariadbTest, "a coordinator restricted to its session leases only its jobs",
                 "[mariadb][distributed]") {
  auto seeded = testing::SeedQueue(db(), 4, 1);
  REQUIRE(seeded.ok());
  const int64_t other = CopySession(db(), seeded->session_id);
  const int64_t mine = CopySession(db(), seeded->session_id);

  CHECK(LeasedSessions(db(), {mine}) == std::set<int64_t>{mine});
  auto leased = db().Query("SELECT session_id, COUNT(*) FROM job WHERE state <> 'new' GROUP BY "
                           "session_id");
  REQUIRE(leased.ok());
  REQUIRE(leased->size() == 1);
  CHECK((*leased)[0].Int(0) == mine);
  CHECK((*leased)[0].Int(1) == 4);
  // Unrestricted (a shared coordinator), the other sessions' jobs are leased too.
  CHECK(LeasedSessions(db(), {}) == std::set<int64_t>{seeded->session_id, other});
}

}  // namespace
}  // namespace tuna
