// gRPC health (grpc.health.v1, asked through proto/health.proto like any probe would) over real
// gRPC on loopback, against a real MariaDB:
//  * the coordinator's health service (answered unread, coordinator/health_service.h) says
//    SERVING for any service name while it runs, and a Watch sees NOT_SERVING at its shutdown;
//  * a `tuna worker --health 127.0.0.1:0` PROCESS logs its health port, reports NOT_SERVING
//    while its coordinator is not there yet, SERVING once it has registered, NOT_SERVING after
//    the coordinator is shut down (after its retries; it keeps running), SERVING again when a
//    coordinator answers on the same address, and exits with status 0 on SIGTERM.
// Waits poll the health service with generous bounds; nothing is timed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "tests/distributed/health_client.h"
#include "tests/distributed/worker_test_util.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tuner_core/solver/registry.h"

namespace tuna {
namespace {

using testing::CheckHealth;
using testing::CountRows;

using testing::WaitUntil;

std::string Status(const absl::StatusOr<std::string>& s) {  // readable in failure messages
  return s.ok() ? *s : s.status().ToString();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A loopback port nothing listens on (the kernel's pick for a bound, then closed, socket), for
// a coordinator that starts only later.
int UnusedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) {
    port = ntohs(a.sin_port);
  }
  close(fd);
  return port;
}

// A coordinator (domain + gRPC server) on `listen`.
struct RunningCoordinator {
  std::unique_ptr<coordinator::Coordinator> coordinator;
  std::unique_ptr<coordinator::CoordinatorServer> server;
};

absl::StatusOr<RunningCoordinator> StartCoordinator(schema::Database& db, const std::string& listen) {
  coordinator::CoordinatorOptions co;
  co.registry = &solver::SolverRegistry::Builtin();
  co.lease_seconds = 3;
  co.empty_poll_interval = absl::Milliseconds(50);
  co.max_wait = absl::Seconds(1);  // short long-polls: the worker calls often
  auto c = coordinator::Coordinator::Create(db, co);
  if (!c.ok()) return c.status();
  coordinator::ServerOptions so;
  so.listen = listen;
  auto s = coordinator::CoordinatorServer::Start(**c, so);
  if (!s.ok()) return s.status();
  return RunningCoordinator{*std::move(c), *std::move(s)};
}

// Kills the child if a REQUIRE ends the test early, so no worker outlives the test.
struct ChildGuard {
  pid_t pid = -1;
  void Stop() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      testing::WaitFor(pid, 10);
    }
    pid = -1;
  }
  ~ChildGuard() { Stop(); }
};

TEST_CASE_METHOD(testing::MariadbTest, "the coordinator's gRPC health service answers SERVING",
                 "[mariadb][distributed]") {
  auto c = StartCoordinator(db(), "127.0.0.1:0");
  REQUIRE(c.ok());
  const std::string addr = c->server->address();
  CHECK(Status(CheckHealth(addr, "")) == "SERVING");
  // The request is not read: every name gets the server's status.
  CHECK(Status(CheckHealth(addr, "tuna.v1.NoSuchService")) == "SERVING");
  // The answer is the server's state, not any answer at all: it turns NOT_SERVING at shutdown.
  testing::HealthWatch watch(addr, "tuna.v1.Worker");
  CHECK(Status(watch.Next()) == "SERVING");
  c->server->Shutdown();
  CHECK(Status(watch.Next()) == "NOT_SERVING");
  auto gone = CheckHealth(addr, "");
  CHECK(!gone.ok());
}

TEST_CASE_METHOD(testing::MariadbTest,
                 "a worker's --health follows registration and the coordinator's reachability",
                 "[mariadb][distributed]") {
  const std::string tuna_bin = testing::Runfile("cli/tuna");
  REQUIRE(!tuna_bin.empty());
  const std::string log = testing::TestOutputDir() + "/worker_health.log";
  const std::regex port_line(R"(health service listening on 127\.0\.0\.1:0 \(port (\d+)\))");

  // 1. No coordinator yet: the worker retries Register, its health says NOT_SERVING. The
  // coordinator's port is only picked, not held, until it starts, so the worker's own health
  // server (port 0) may be handed the same one: then start over with another.
  ChildGuard worker;
  std::string coordinator_addr, health_addr;
  for (int attempt = 0; attempt < 5 && health_addr.empty(); ++attempt) {
    const int coordinator_port = UnusedPort();
    REQUIRE(coordinator_port > 0);
    coordinator_addr = absl::StrCat("127.0.0.1:", coordinator_port);
    std::remove(log.c_str());
    worker.Stop();
    worker.pid = testing::Spawn({tuna_bin, "worker", "--coordinator", coordinator_addr, "--backend",
                                 "cpu", "--host", "health", "--health", "127.0.0.1:0"},
                                log);
    REQUIRE(worker.pid > 0);
    int health_port = 0;
    REQUIRE(WaitUntil(60, [&] {
      std::smatch m;
      const std::string text = ReadFile(log);
      if (!std::regex_search(text, m, port_line)) return false;
      health_port = std::stoi(m[1].str());
      return true;
    }));
    if (health_port != coordinator_port) health_addr = absl::StrCat("127.0.0.1:", health_port);
  }
  REQUIRE(!health_addr.empty());
  INFO("worker health at " << health_addr << ", coordinator at " << coordinator_addr << ", log "
                           << log);
  CHECK(Status(CheckHealth(health_addr, "")) == "NOT_SERVING");
  CHECK(Status(CheckHealth(health_addr, "tuna.v1.Worker")) == "NOT_SERVING");
  CHECK(Status(CheckHealth(health_addr, "tuna.v1.NoSuchService")) == "NOT_SERVING");  // unread
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM worker WHERE host = 'health'") == 0);

  // A worker reconnecting to a port nobody listens on can briefly hold it itself (a TCP
  // self-connect from an ephemeral port): retry the coordinator's bind for a few seconds.
  auto start_on_addr = [&] {
    auto c = StartCoordinator(db(), coordinator_addr);
    for (int k = 0; k < 50 && !c.ok(); ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      c = StartCoordinator(db(), coordinator_addr);
    }
    INFO(c.status().ToString());
    REQUIRE(c.ok());
    return c;
  };

  // 2. The coordinator comes up: the worker registers and turns SERVING.
  auto first = start_on_addr();
  REQUIRE(WaitUntil(60, [&] { return Status(CheckHealth(health_addr, "")) == "SERVING"; }));
  CHECK(Status(CheckHealth(health_addr, "tuna.v1.Worker")) == "SERVING");
  CHECK(CountRows(db(), "SELECT COUNT(*) FROM worker WHERE host = 'health'") > 0);

  // 3. The coordinator goes away: after its retries the worker says NOT_SERVING, and lives on.
  first->server->Shutdown();
  REQUIRE(WaitUntil(60, [&] { return Status(CheckHealth(health_addr, "")) == "NOT_SERVING"; }));
  CHECK(Status(CheckHealth(health_addr, "tuna.v1.Worker")) == "NOT_SERVING");
  int status = 0;
  CHECK(waitpid(worker.pid, &status, WNOHANG) == 0);  // still running, retrying
  CHECK(ReadFile(log).find("unhealthy: coordinator unreachable") != std::string::npos);

  // 4. A coordinator answers on the same address again: SERVING again (no new registration).
  auto second = start_on_addr();
  REQUIRE(WaitUntil(60, [&] { return Status(CheckHealth(health_addr, "")) == "SERVING"; }));
  CHECK(Status(CheckHealth(health_addr, "tuna.v1.Worker")) == "SERVING");

  // 5. SIGTERM: a clean stop (exit 0), and the health server goes with the process.
  REQUIRE(kill(worker.pid, SIGTERM) == 0);
  status = testing::WaitFor(worker.pid, 60);
  REQUIRE(status != -1);
  worker.pid = -1;  // reaped
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  auto gone = CheckHealth(health_addr, "");
  CHECK(!gone.ok());
  second->server->Shutdown();
}

}  // namespace
}  // namespace tuna
