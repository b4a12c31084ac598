// Admin workflow benchmarks against a throwaway MariaDB (tests/fixtures): import of 10k generated
// driver lines, applicability of 10k configs x every builtin solver, import-db of the 9,600-key
// gfx942 find db. Run: bazel run //bench/admin:admin_bench [-- FDB_PATH]
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "admin/applicability.h"
#include "admin/import_configs.h"
#include "admin/import_db.h"
#include "admin/solver_records.h"
#include "schema/store/session_store.h"
#include "schema/store/solver_store.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/solver/registry.h"

using namespace tuna;

namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// 10,000 distinct forward problems: batch x channels x size.
std::string GeneratedLines(int count) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    const int n = 1 + i % 16, c = 8 * (1 + (i / 16) % 25), h = 7 + (i / 400) % 25;
    const int f = (i % 2) ? 3 : 1;
    text += "./bin/MIOpenDriver conv -n " + std::to_string(n) + " -c " + std::to_string(c) +
            " -H " + std::to_string(h) + " -W " + std::to_string(h) + " -k 64 -y " +
            std::to_string(f) + " -x " + std::to_string(f) + " -p " + std::to_string(f / 2) +
            " -q " + std::to_string(f / 2) + " -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1\n";
  }
  return text;
}

int Fail(const char* what, const absl::Status& st) {
  std::fprintf(stderr, "%s: %s\n", what, std::string(st.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string fdb = argc > 1 ? argv[1] : "tests/problem/testdata/miopen/gfx942130.HIP.fdb.txt";
  auto t = testing::CreateTestDatabase(/*migrate=*/true, /*pool_size=*/4);
  if (!t.ok()) return Fail("database", t.status());
  schema::Database& db = *t->db;
  const auto& registry = solver::SolverRegistry::Builtin();

  // 1. import of 10k lines (one transaction), then the same file again (all known).
  const std::string text = GeneratedLines(10000);
  admin::ImportOptions io;
  io.tag = "bench10k";
  auto t0 = std::chrono::steady_clock::now();
  auto imp = admin::ImportDriverText(db, text, io);
  const double import_s = Since(t0);
  if (!imp.ok()) return Fail("import", imp.status());
  t0 = std::chrono::steady_clock::now();
  auto again = admin::ImportDriverText(db, text, io);
  const double reimport_s = Since(t0);
  if (!again.ok()) return Fail("reimport", again.status());
  std::printf("import 10k lines:        %.2f s (%lld configs new, %.0f lines/s); again: %.2f s "
              "(%lld known)\n",
              import_s, static_cast<long long>(imp->configs_new), 10000 / import_s, reimport_s,
              static_cast<long long>(again->configs_known));

  // 2. applicability of the 10k configs x every builtin solver.
  auto sync = schema::SolverStore(db).Sync(admin::SolverRecords(registry));
  if (!sync.ok()) return Fail("solvers", sync.status());
  schema::SessionRecord s;
  s.arch = "gfx90a";
  s.num_cu = 104;
  s.backend = "HIP";
  s.label = "bench";
  auto session = schema::SessionStore(db).Create(s);
  if (!session.ok()) return Fail("session", session.status());
  admin::ApplicabilityOptions ao;
  ao.session_id = *session;
  t0 = std::chrono::steady_clock::now();
  auto app = admin::UpdateApplicability(db, registry, ao);
  const double app_s = Since(t0);
  if (!app.ok()) return Fail("applicability", app.status());
  std::printf("applicability:           %.2f s total for %lld configs x %lld solvers = %lld rows "
              "(compute %.3f s on %u threads, store %.2f s, %.0f rows/s stored); %lld applicable\n",
              app_s, static_cast<long long>(app->configs), static_cast<long long>(app->solvers),
              static_cast<long long>(app->configs * app->solvers), app->compute_seconds,
              std::thread::hardware_concurrency(), app->store_seconds,
              (app->applicable + app->not_applicable) / app->store_seconds,
              static_cast<long long>(app->applicable));

  // 3. import-db of the find db (one transaction), then again (all existing).
  admin::ImportDbOptions d;
  d.session_id = *session;
  d.path = fdb;
  t0 = std::chrono::steady_clock::now();
  auto idb = admin::ImportMiopenDb(db, registry, d);
  const double idb_s = Since(t0);
  if (!idb.ok()) return Fail("import-db", idb.status());
  t0 = std::chrono::steady_clock::now();
  auto idb2 = admin::ImportMiopenDb(db, registry, d);
  const double idb2_s = Since(t0);
  if (!idb2.ok()) return Fail("import-db again", idb2.status());
  std::printf("import-db find db:       %.2f s (%lld keys, %lld entries, %lld results new); "
              "again: %.2f s (%lld existing)\n",
              idb_s, static_cast<long long>(idb->keys), static_cast<long long>(idb->entries),
              static_cast<long long>(idb->results_added), idb2_s,
              static_cast<long long>(idb2->results_existing));
  testing::DropTestDatabase(t->name);
  return 0;
}
