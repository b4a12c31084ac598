// worker/health_server.h over real gRPC on loopback, asked through the standard
// grpc.health.v1 protocol (proto/health.proto): starts NOT_SERVING, follows SetServing for every
// service name, keeps its port to itself, and stops answering after Shutdown; Watch streams
// the changes and ends at Shutdown; a 64 MiB request is answered without being read (a proxy
// counts the bytes that reach the server).
#include "worker/health_server.h"

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "tests/distributed/byte_counting_proxy.h"
#include "tests/distributed/health_client.h"

namespace tuna {
namespace {

using testing::CheckHealth;

std::string Status(const absl::StatusOr<std::string>& s) {  // readable in failure messages
  return s.ok() ? *s : s.status().ToString();
}

TEST_CASE("the health server follows SetServing for every service name", "[grpc]") {
  auto server = worker::HealthServer::Start("127.0.0.1:0");
  REQUIRE(server.ok());
  const int port = (*server)->port();
  REQUIRE(port > 0);
  const std::string addr = absl::StrCat("127.0.0.1:", port);

  // The request is never read, so every name gets the server's one status.
  for (const std::string name : {"", "tuna.v1.Worker", "tuna.v1.Other"}) {
    INFO("service '" << name << "'");
    CHECK(Status(CheckHealth(addr, name)) == "NOT_SERVING");
    (*server)->SetServing(true);
    CHECK(Status(CheckHealth(addr, name)) == "SERVING");
    (*server)->SetServing(false);
    CHECK(Status(CheckHealth(addr, name)) == "NOT_SERVING");
  }
  (*server)->SetServing(true);
  CHECK(Status(CheckHealth(addr, "")) == "SERVING");

  // A second server on the same port is refused, not silently sharing it (SO_REUSEPORT).
  auto twin = worker::HealthServer::Start(addr);
  CHECK(absl::IsUnavailable(twin.status()));

  (*server)->Shutdown();
  (*server)->SetServing(true);  // ignored, and safe, once shut down
  auto gone = CheckHealth(addr, "");
  REQUIRE(!gone.ok());
  CHECK(absl::IsUnavailable(gone.status()));
}

TEST_CASE("a health Watch gets the status, each change, and its end at Shutdown", "[grpc]") {
  auto server = worker::HealthServer::Start("127.0.0.1:0");
  REQUIRE(server.ok());
  const std::string addr = absl::StrCat("127.0.0.1:", (*server)->port());
  testing::HealthWatch watch(addr, "tuna.v1.Worker");
  CHECK(Status(watch.Next()) == "NOT_SERVING");
  (*server)->SetServing(true);
  CHECK(Status(watch.Next()) == "SERVING");
  (*server)->SetServing(true);  // no change: nothing sent
  (*server)->SetServing(false);
  CHECK(Status(watch.Next()) == "NOT_SERVING");
  (*server)->SetServing(true);
  CHECK(Status(watch.Next()) == "SERVING");
  testing::HealthWatch second(addr, "");
  CHECK(Status(second.Next()) == "SERVING");
  (*server)->Shutdown();
  for (testing::HealthWatch* w : {&watch, &second}) {
    CHECK(Status(w->Next()) == "NOT_SERVING");
    auto end = w->Next();
    INFO(end.status().ToString());
    CHECK(absl::IsOutOfRange(end.status()));  // ended by the server, OK
  }
}

TEST_CASE("a 64 MiB health request is answered without being read", "[grpc]") {
  auto server = worker::HealthServer::Start("127.0.0.1:0");
  REQUIRE(server.ok());
  auto proxy = testing::ByteCountingProxy::Start((*server)->port());
  REQUIRE(proxy.ok());
  const std::string addr = absl::StrCat("127.0.0.1:", (*proxy)->port());
  const std::string big(64u << 20, 'x');
  for (bool serving : {false, true}) {
    (*server)->SetServing(serving);
    const int64_t before = (*proxy)->client_to_server_bytes();
    auto st = CheckHealth(addr, big, absl::Seconds(60));
    const int64_t reached = (*proxy)->client_to_server_bytes() - before;
    std::printf("64 MiB health Check: %s; %lld bytes reached the server\n", Status(st).c_str(),
                static_cast<long long>(reached));
    CHECK(Status(st) == (serving ? "SERVING" : "NOT_SERVING"));
    // What HTTP/2 lets a new stream send before the answer (64 KiB), not the request (gRPC's
    // own health service read all 64 MiB, then refused it RESOURCE_EXHAUSTED).
    CHECK(reached < (1 << 20));
  }
  CHECK(Status(CheckHealth(addr, "")) == "SERVING");
}

TEST_CASE("the health server refuses an empty address", "[grpc]") {
  auto server = worker::HealthServer::Start("");
  REQUIRE(!server.ok());
  CHECK(absl::IsInvalidArgument(server.status()));
}

}  // namespace
}  // namespace tuna
