// The embedded server's life cycle on its own data dir: bootstrap, idempotent start, kill -9
// recovery, stop, status.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "catch2/catch.hpp"
#include "schema/embedded/mariadb_server.h"
#include "schema/store/database.h"

using tuna::schema::EmbeddedServer;
using tuna::schema::EmbeddedServerOptions;

namespace {

std::string MakeTempDir() {
  const char* tmp = std::getenv("TEST_TMPDIR");
  std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/tuna-embedded-XXXXXX";
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

bool Alive(int pid) { return ::kill(pid, 0) == 0; }

// Stops the server even when a REQUIRE fails half way.
struct StopGuard {
  EmbeddedServer* server;
  ~StopGuard() { (void)server->Stop(); }
};

absl::StatusOr<std::unique_ptr<tuna::schema::Database>> Connect(EmbeddedServer& server) {
  auto info = server.Connection();
  if (!info.ok()) return info.status();
  tuna::schema::DatabaseOptions options;
  options.connection = *info;
  options.pool_size = 1;
  return tuna::schema::Database::Open(options);
}

}  // namespace

TEST_CASE("Embedded server: start, start again, kill -9, recover, stop", "[mariadb][embedded]") {
  std::string dir = MakeTempDir() + "/data";
  EmbeddedServerOptions options;
  options.data_dir = dir;
  options.extra_args = {"--innodb-log-file-size=32M"};
  EmbeddedServer server(options);
  StopGuard guard{&server};

  auto before = server.Status();
  REQUIRE(before.ok());
  CHECK_FALSE(before->running);
  CHECK_FALSE(before->bootstrapped);
  CHECK(server.Connection().status().code() == absl::StatusCode::kFailedPrecondition);

  auto first = server.Start();
  REQUIRE(first.ok());
  CHECK(first->bootstrapped);
  CHECK_FALSE(first->already_running);
  CHECK(first->status.running);
  CHECK(first->status.pid > 0);
  CHECK(first->status.port > 0);
  CHECK(first->status.version.find("MariaDB") != std::string::npos);
  const int port = first->status.port;

  // The password file is private and the password is nowhere else.
  struct stat st {};
  REQUIRE(::stat((dir + "/tuna-client.cnf").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto info = server.Connection();
  REQUIRE(info.ok());
  CHECK(info->port == port);
  CHECK(info->user == "tuna");
  CHECK(info->password.size() >= 16);
  CHECK(info->Redacted().find(info->password) == std::string::npos);

  auto second = server.Start();
  REQUIRE(second.ok());
  CHECK(second->already_running);
  CHECK(second->status.pid == first->status.pid);
  CHECK(second->status.port == port);

  // Data written before a crash survives it.
  {
    auto db = Connect(server);
    REQUIRE(db.ok());
    REQUIRE((*db)->Execute("CREATE TABLE IF NOT EXISTS t (x INT) ENGINE=InnoDB").ok());
    REQUIRE((*db)->Execute("INSERT INTO t VALUES (?)", {int64_t{7}}).ok());
  }

  ::kill(first->status.pid, SIGKILL);
  for (int i = 0; i < 100 && Alive(first->status.pid); ++i) ::usleep(50000);
  auto after_kill = server.Status();
  REQUIRE(after_kill.ok());
  CHECK_FALSE(after_kill->running);  // the pid file is stale now

  auto recovered = server.Start();
  REQUIRE(recovered.ok());
  CHECK_FALSE(recovered->already_running);
  CHECK_FALSE(recovered->bootstrapped);
  CHECK(recovered->status.pid != first->status.pid);
  CHECK(recovered->status.port == port);  // remembered
  {
    auto db = Connect(server);
    REQUIRE(db.ok());
    auto rows = (*db)->Query("SELECT x FROM t");
    REQUIRE(rows.ok());
    REQUIRE(rows->size() == 1);
    CHECK((*rows)[0].Int(0) == 7);
  }

  auto stopped = server.Stop();
  REQUIRE(stopped.ok());
  CHECK(*stopped);
  CHECK_FALSE(Alive(recovered->status.pid));
  auto status = server.Status();
  REQUIRE(status.ok());
  CHECK_FALSE(status->running);
  CHECK(status->bootstrapped);
  CHECK(status->port == port);

  auto again = server.Stop();
  REQUIRE(again.ok());
  CHECK_FALSE(*again);  // not running: nothing to do
}

TEST_CASE("Embedded server refuses a data dir it did not create", "[mariadb][embedded]") {
  std::string dir = MakeTempDir();
  std::filesystem::create_directories(dir + "/mysql");
  EmbeddedServerOptions options;
  options.data_dir = dir;
  EmbeddedServer server(options);
  auto r = server.Start();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(r.status().message()).find("did not create") != std::string::npos);
}

TEST_CASE("FindMariadb honours explicit paths and reports what it tried", "[embedded]") {
  EmbeddedServerOptions options;
  options.mariadbd = "/nonexistent/mariadbd";
  auto r = tuna::schema::FindMariadb(options);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kNotFound);
  CHECK(std::string(r.status().message()).find("/nonexistent/mariadbd") != std::string::npos);

  // A bundle layout next to the binary wins over the system's.
  std::string root = MakeTempDir();
  std::filesystem::create_directories(root + "/bin");
  std::filesystem::create_directories(root + "/libexec");
  std::filesystem::create_directories(root + "/share/mariadb/english");
  std::filesystem::create_directories(root + "/share/mariadb/charsets");
  for (const char* f : {"/share/mariadb/mysql_system_tables.sql",
                        "/share/mariadb/mysql_system_tables_data.sql",
                        "/share/mariadb/english/errmsg.sys"}) {
    FILE* fp = std::fopen((root + f).c_str(), "w");
    REQUIRE(fp != nullptr);
    std::fclose(fp);
  }
  std::filesystem::copy_file("/bin/true", root + "/libexec/mariadbd");
  ::unsetenv("TUNA_MARIADBD");
  ::unsetenv("TUNA_MARIADB_SHARE");
  auto bundle = tuna::schema::FindMariadb(EmbeddedServerOptions{}, root + "/bin/tuna");
  REQUIRE(bundle.ok());
  CHECK(bundle->mariadbd == root + "/libexec/mariadbd");
  CHECK(bundle->share_dir == root + "/share/mariadb");
}

TEST_CASE("DefaultDataDir follows XDG_STATE_HOME", "[embedded]") {
  ::setenv("XDG_STATE_HOME", "/var/tmp/state", 1);
  CHECK(tuna::schema::DefaultDataDir() == "/var/tmp/state/tuna/mariadb");
  ::unsetenv("XDG_STATE_HOME");
  ::setenv("HOME", "/home/someone", 1);
  CHECK(tuna::schema::DefaultDataDir() == "/home/someone/.local/state/tuna/mariadb");
}

TEST_CASE("A server that cannot start reports the log tail; a taken port is refused",
          "[mariadb][embedded]") {
  std::string dir = MakeTempDir() + "/data";
  EmbeddedServerOptions options;
  options.data_dir = dir;
  options.extra_args = {"--no-such-mariadb-option"};
  EmbeddedServer server(options);
  StopGuard guard{&server};
  auto r = server.Start();
  REQUIRE_FALSE(r.ok());
  std::string msg(r.status().message());
  CHECK(msg.find("exited during start") != std::string::npos);
  CHECK(msg.find("no-such-mariadb-option") != std::string::npos);  // from the log tail
  auto st = server.Status();
  REQUIRE(st.ok());
  CHECK_FALSE(st->running);

  // A port some other program listens on.
  auto busy = tuna::schema::PickFreeLoopbackPort();
  REQUIRE(busy.ok());
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(*busy));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0);
  REQUIRE(::listen(fd, 1) == 0);
  EmbeddedServerOptions taken;
  taken.data_dir = dir;
  taken.port = *busy;
  EmbeddedServer other(taken);
  auto t = other.Start();
  ::close(fd);
  REQUIRE_FALSE(t.ok());
  CHECK(t.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(std::string(t.status().message()).find("in use") != std::string::npos);
}
