// worker/health_server.h over real gRPC on loopback, asked through the standard
// grpc.health.v1 protocol (proto/health.proto): starts NOT_SERVING, follows SetServing for ""
// and the named services, knows no other name, keeps its port to itself, and stops answering
// after Shutdown.
#include "worker/health_server.h"

#include "absl/strings/str_cat.h"
#include "catch2/catch.hpp"
#include "tests/distributed/health_client.h"

namespace tuna {
namespace {

using testing::CheckHealth;

std::string Status(const absl::StatusOr<std::string>& s) {  // readable in failure messages
  return s.ok() ? *s : s.status().ToString();
}

TEST_CASE("the health server follows SetServing for the server and its services", "[grpc]") {
  auto server = worker::HealthServer::Start("127.0.0.1:0", {"tuna.v1.Worker"});
  REQUIRE(server.ok());
  const int port = (*server)->port();
  REQUIRE(port > 0);
  const std::string addr = absl::StrCat("127.0.0.1:", port);

  CHECK(Status(CheckHealth(addr, "")) == "NOT_SERVING");
  CHECK(Status(CheckHealth(addr, "tuna.v1.Worker")) == "NOT_SERVING");
  // A name it was not given is unknown (so the answers above come from a real lookup).
  auto other = CheckHealth(addr, "tuna.v1.Other");
  REQUIRE(!other.ok());
  CHECK(absl::IsNotFound(other.status()));

  (*server)->SetServing(true);
  CHECK(Status(CheckHealth(addr, "")) == "SERVING");
  CHECK(Status(CheckHealth(addr, "tuna.v1.Worker")) == "SERVING");
  (*server)->SetServing(false);
  CHECK(Status(CheckHealth(addr, "")) == "NOT_SERVING");
  CHECK(Status(CheckHealth(addr, "tuna.v1.Worker")) == "NOT_SERVING");
  (*server)->SetServing(true);
  CHECK(Status(CheckHealth(addr, "")) == "SERVING");

  // A second server on the same port is refused, not silently sharing it (SO_REUSEPORT).
  auto twin = worker::HealthServer::Start(addr, {});
  CHECK(absl::IsUnavailable(twin.status()));

  (*server)->Shutdown();
  (*server)->SetServing(true);  // ignored, and safe, once shut down
  auto gone = CheckHealth(addr, "");
  REQUIRE(!gone.ok());
  CHECK(absl::IsUnavailable(gone.status()));
}

TEST_CASE("the health server refuses an empty address", "[grpc]") {
  auto server = worker::HealthServer::Start("", {});
  REQUIRE(!server.ok());
  CHECK(absl::IsInvalidArgument(server.status()));
}

}  // namespace
}  // namespace tuna
