// schema/store against a real MariaDB (tests/fixtures:mariadb_fixture).
#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "schema/store/database.h"
#include "tests/fixtures/mariadb_fixture.h"

using tuna::schema::Connection;
using tuna::schema::Database;
using tuna::schema::Row;
using tuna::schema::Rows;
using tuna::testing::MariadbTest;

TEST_CASE_METHOD(MariadbTest, "A row is written and read back with every value type",
                 "[mariadb][store]") {
  auto n = db().Execute(
      "INSERT INTO session (arch, num_cu, backend, tuner_version, label) VALUES (?, ?, ?, ?, ?)",
      {"gfx90a", int64_t{104}, "HIP", "1.0", "ünïcode ✓"});
  REQUIRE(n.ok());
  CHECK(*n == 1);
  auto rows = db().Query("SELECT id, arch, num_cu, backend, label, created_at FROM session");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  const Row& r = (*rows)[0];
  CHECK(r.Int("id") > 0);
  CHECK(r.String("arch") == "gfx90a");
  CHECK(std::holds_alternative<int64_t>(r[2]));
  CHECK(r.Int("num_cu") == 104);
  CHECK(r.String("label") == "ünïcode ✓");
  CHECK(r.String("created_at").size() == 26);  // DATETIME(6)

  // Binary blobs survive embedded NULs; NULL and doubles round-trip.
  std::string blob("\x00\x01\xff zstd\x00", 9);
  REQUIRE(db().Execute("INSERT INTO kernel (hash, arch, kernel_name, options, `blob`, "
                       "uncompressed_size) VALUES (?, ?, ?, ?, ?, ?)",
                       {std::string(64, 'a'), "gfx90a", "k", "-O3", blob, int64_t{123}})
              .ok());
  auto k = db().Query("SELECT `blob`, uncompressed_size FROM kernel WHERE hash = ?",
                      {std::string(64, 'a')});
  REQUIRE(k.ok());
  REQUIRE(k->size() == 1);
  CHECK((*k)[0].String(0) == blob);

  auto d = db().Query("SELECT CAST(? AS DOUBLE) AS t, ? AS n", {2.5, nullptr});
  REQUIRE(d.ok());
  CHECK((*d)[0].Double("t") == 2.5);
  CHECK(std::holds_alternative<double>((*d)[0][0]));
  CHECK((*d)[0].IsNull("n"));
}

TEST_CASE_METHOD(MariadbTest, "SQL errors become Status codes", "[mariadb][store]") {
  REQUIRE(db().Execute("INSERT INTO solver (id, name) VALUES (?, ?)", {int64_t{1}, "ConvDirect"})
              .ok());
  auto dup = db().Execute("INSERT INTO solver (id, name) VALUES (?, ?)", {int64_t{2}, "ConvDirect"});
  CHECK(dup.status().code() == absl::StatusCode::kAlreadyExists);
  CHECK(std::string(dup.status().message()).find("1062") != std::string::npos);

  auto syntax = db().Query("SELEC 1");
  CHECK(syntax.status().code() == absl::StatusCode::kInvalidArgument);

  auto missing = db().Query("SELECT * FROM no_such_table");
  CHECK(missing.status().code() == absl::StatusCode::kFailedPrecondition);

  auto fk = db().Execute("INSERT INTO config_tag (config_id, tag) VALUES (?, ?)",
                         {int64_t{424242}, "t"});
  CHECK(fk.status().code() == absl::StatusCode::kFailedPrecondition);

  auto count = db().Query("SELECT ? + ?", {int64_t{1}});
  CHECK(count.status().code() == absl::StatusCode::kInvalidArgument);

  // The pool is still healthy afterwards.
  auto ok = db().Query("SELECT COUNT(*) FROM solver");
  REQUIRE(ok.ok());
  CHECK((*ok)[0].Int(0) == 1);
}

TEST_CASE_METHOD(MariadbTest, "A failing transaction is rolled back", "[mariadb][store]") {
  absl::Status st = db().Transaction([](Connection& c) -> absl::Status {
    auto a = c.Execute("INSERT INTO solver (id, name) VALUES (?, ?)", {int64_t{1}, "A"});
    if (!a.ok()) return a.status();
    auto b = c.Execute("INSERT INTO solver (id, name) VALUES (?, ?)", {int64_t{2}, "A"});
    return b.status();  // duplicate name: AlreadyExists
  });
  CHECK(st.code() == absl::StatusCode::kAlreadyExists);
  auto rows = db().Query("SELECT COUNT(*) FROM solver");
  REQUIRE(rows.ok());
  CHECK((*rows)[0].Int(0) == 0);

  // A body's own error also rolls back, and is not retried.
  int runs = 0;
  st = db().Transaction([&](Connection& c) -> absl::Status {
    ++runs;
    (void)c.Execute("INSERT INTO solver (id, name) VALUES (?, ?)", {int64_t{3}, "B"});
    return absl::AbortedError("fenced");
  });
  CHECK(st.code() == absl::StatusCode::kAborted);
  CHECK(runs == 1);
  rows = db().Query("SELECT COUNT(*) FROM solver");
  CHECK((*rows)[0].Int(0) == 0);

  // And a good one commits.
  int64_t id = 0;
  st = db().Transaction([&](Connection& c) -> absl::Status {
    auto s = c.Execute("INSERT INTO session (arch, num_cu, backend) VALUES (?, ?, ?)",
                       {"sm_90", int64_t{132}, "CUDA"});
    if (!s.ok()) return s.status();
    auto last = c.LastInsertId();
    if (!last.ok()) return last.status();
    id = *last;
    return absl::OkStatus();
  });
  REQUIRE(st.ok());
  auto sessions = db().Query("SELECT arch FROM session WHERE id = ?", {id});
  REQUIRE(sessions.ok());
  REQUIRE(sessions->size() == 1);
  CHECK((*sessions)[0].String(0) == "sm_90");
}

TEST_CASE_METHOD(MariadbTest, "A deadlock is retried until both transactions commit",
                 "[mariadb][store]") {
  REQUIRE(db().Execute("INSERT INTO solver (id, name, valid) VALUES (1, 'a', 0), (2, 'b', 0)")
              .ok());
  std::atomic<int> locked_first{0};
  std::atomic<int> attempts{0};
  auto body = [&](int64_t first, int64_t second) {
    return [&, first, second](Connection& c) -> absl::Status {
      int attempt = ++attempts;
      auto a = c.Execute("UPDATE solver SET valid = valid + 1 WHERE id = ?", {first});
      if (!a.ok()) return a.status();
      if (attempt <= 2) {  // first round: make sure both hold their first row
        ++locked_first;
        while (locked_first.load() < 2) std::this_thread::yield();
      }
      auto b = c.Execute("UPDATE solver SET valid = valid + 1 WHERE id = ?", {second});
      return b.status();
    };
  };
  absl::Status s1, s2;
  std::thread t1([&] { s1 = db().Transaction(body(1, 2)); });
  std::thread t2([&] { s2 = db().Transaction(body(2, 1)); });
  t1.join();
  t2.join();
  CHECK(s1.ok());
  CHECK(s2.ok());
  CHECK(attempts.load() >= 3);  // the deadlock victim ran again
  auto rows = db().Query("SELECT valid FROM solver ORDER BY id");
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].Int(0) == 2);
  CHECK((*rows)[1].Int(0) == 2);
}

TEST_CASE_METHOD(MariadbTest, "A killed connection is Unavailable and the pool reconnects",
                 "[mariadb][store]") {
  tuna::schema::DatabaseOptions options;
  options.connection = connection();
  options.pool_size = 1;
  auto victim = Database::Open(options);
  REQUIRE(victim.ok());

  auto id1 = (*victim)->Query("SELECT CONNECTION_ID()");
  REQUIRE(id1.ok());
  int64_t first_id = (*id1)[0].Int(0);

  // Inside a callback the loss is reported as Unavailable...
  absl::Status inner;
  absl::Status outer = (*victim)->WithConnection([&](Connection& c) -> absl::Status {
    static bool killed = false;
    if (!killed) {
      killed = true;
      absl::Status k = db().WithConnection([&](Connection& admin) {
        return admin.ExecuteUnprepared(absl::StrCat("KILL CONNECTION ", first_id));
      });
      if (!k.ok()) return k;
      auto r = c.Query("SELECT 1");
      inner = r.status();
      return r.status();
    }
    return c.Query("SELECT 1").status();  // ...and the retry runs on a new connection
  });
  CHECK(inner.code() == absl::StatusCode::kUnavailable);
  CHECK(outer.ok());

  auto id2 = (*victim)->Query("SELECT CONNECTION_ID()");
  REQUIRE(id2.ok());
  int64_t second_id = (*id2)[0].Int(0);
  CHECK(second_id != first_id);

  // A plain Query after a kill is retried transparently.
  REQUIRE(db().WithConnection([&](Connection& admin) {
            return admin.ExecuteUnprepared(absl::StrCat("KILL CONNECTION ", second_id));
          }).ok());
  auto again = (*victim)->Query("SELECT 42");
  REQUIRE(again.ok());
  CHECK((*again)[0].Int(0) == 42);
  CHECK((*victim)->OpenConnections() == 1);
}

TEST_CASE_METHOD(MariadbTest, "The pool serves many threads with few connections",
                 "[mariadb][store]") {
  tuna::schema::DatabaseOptions options;
  options.connection = connection();
  options.pool_size = 3;
  auto pool = Database::Open(options);
  REQUIRE(pool.ok());
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        auto r = (*pool)->Execute("INSERT INTO config_tag (config_id, tag) SELECT id, ? FROM "
                                  "conv_config WHERE 1 = 0",
                                  {absl::StrCat("t", t, "_", i)});
        if (!r.ok()) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(failures.load() == 0);
  CHECK((*pool)->OpenConnections() <= 3);
}

TEST_CASE("Database::Open names the server when it cannot connect", "[mariadb][store]") {
  tuna::schema::DatabaseOptions options;
  options.connection.host = "127.0.0.1";
  options.connection.port = 1;  // nothing listens there
  options.connection.user = "tuna";
  options.connection.password = "secret-password";
  options.connection.database = "tuna";
  options.connect_timeout = absl::Seconds(2);
  auto db = Database::Open(options);
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == absl::StatusCode::kUnavailable);
  std::string msg(db.status().message());
  CHECK(msg.find("mysql://tuna@127.0.0.1:1/tuna") != std::string::npos);
  CHECK(msg.find("secret-password") == std::string::npos);
}

TEST_CASE("Wrong credentials are PermissionDenied", "[mariadb][store]") {
  auto info = tuna::testing::SharedMariadbConnection();
  REQUIRE(info.ok());
  tuna::schema::DatabaseOptions options;
  options.connection = *info;
  options.connection.password = "wrong";
  auto db = Database::Open(options);
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == absl::StatusCode::kPermissionDenied);
}
