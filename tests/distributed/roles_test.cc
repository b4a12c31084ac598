// Roles and transport security (issue 15 part 6) over real gRPC against a real MariaDB:
//  * the eval role's token may register, lease eval steps and fetch kernels, but compile leases
//    and PutKernels are PERMISSION_DENIED; the compile role's PutKernels is stored with the
//    worker that built it, and FetchKernels tells who did; a wrong token is UNAUTHENTICATED;
//  * a 64 MiB request without a token, to any method of the Worker service, is refused
//    (UNAUTHENTICATED) before it is read: a proxy counts the bytes that reach the server; with
//    the eval token a 64 MiB PutKernels is PERMISSION_DENIED the same way; with a token, small
//    methods refuse requests over 1 MiB (RESOURCE_EXHAUSTED) and every method those over 32 MiB;
//  * gRPC's health protocol needs no token and never reads its request: a 64 MiB Check is
//    answered SERVING with only what HTTP/2 lets a new stream send reaching the server, and a
//    normal one answers SERVING while the server runs;
//  * TLS with a certificate made by openssl here: calls go through with the CA, and the
//    64 MiB unauthenticated request is refused the same way;
//  * a non-loopback listener needs TLS unless insecure_plaintext; reflection is off by default
//    (UNIMPLEMENTED) and on with the option.
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <sstream>

#include "catch2/catch.hpp"
#include "tests/distributed/byte_counting_proxy.h"
#include "tests/distributed/health_client.h"
#include "coordinator/coordinator.h"
#include "coordinator/server.h"
#include "tests/distributed/seed.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "worker/coordinator_client.h"

namespace tuna {
namespace {

using coordinator::KernelBlob;
using coordinator::LeaseRequest;
using jobs::JobStep;

struct Running {
  std::unique_ptr<coordinator::Coordinator> coord;
  std::unique_ptr<coordinator::CoordinatorServer> server;
};

Running Start(schema::Database& db, coordinator::ServerOptions so) {
  coordinator::CoordinatorOptions o;
  o.reap_interval = absl::ZeroDuration();
  o.empty_poll_interval = absl::Milliseconds(20);
  auto c = coordinator::Coordinator::Create(db, o);
  REQUIRE(c.ok());
  auto s = coordinator::CoordinatorServer::Start(**c, so);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return {*std::move(c), *std::move(s)};
}

std::unique_ptr<coordinator::WorkerApi> Client(const Running& r, const std::string& token,
                                               const std::string& ca = "") {
  worker::GrpcClientOptions o;
  o.address = ca.empty() ? r.server->address() : "localhost:" + std::to_string(r.server->port());
  o.token = token;
  o.tls_root_pem = ca;
  o.call_timeout = absl::Seconds(20);
  return worker::MakeGrpcClient(o);
}

std::string Register(coordinator::WorkerApi& c, const std::string& host) {
  auto r = c.Register({coordinator::kProtocolVersion, host, "test", {{"cpu", "cpu-test", 4, 0, 0}}});
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return r->worker_id;
}

LeaseRequest CompileLease(const std::string& worker) {
  LeaseRequest req;
  req.worker_id = worker;
  req.step = JobStep::kCompile;
  req.compile_backends = {"cpu"};
  req.max_jobs = 1;
  req.wait = absl::Milliseconds(300);
  return req;
}

// A loopback server with both roles' tokens: "compile-token" and "eval-token".
coordinator::ServerOptions TwoRoles() {
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  so.token = "compile-token";
  so.eval_token = "eval-token";
  return so;
}

KernelBlob Blob(size_t bytes) {
  return KernelBlob{std::string(64, 'a'), "cpu-test", "c++", "k.cc", "", "f",
                    std::string(bytes, 'x'), ""};
}

TEST_CASE_METHOD(testing::MariadbTest, "the eval role may not compile or put kernels",
                 "[mariadb][distributed]") {
  auto seeded = testing::SeedQueue(db(), 2, 1);
  REQUIRE(seeded.ok());
  Running r = Start(db(), TwoRoles());

  auto eval = Client(r, "eval-token");
  const std::string eval_id = Register(*eval, "evalhost");
  auto denied = eval->Lease(CompileLease(eval_id));
  CHECK(absl::IsPermissionDenied(denied.status()));
  auto put = eval->PutKernels(eval_id, 1, 1, {Blob(100)});
  CHECK(absl::IsPermissionDenied(put.status()));
  CHECK(put.status().message().find("compile role") != std::string::npos);

  auto wrong = Client(r, "not-a-token");
  CHECK(absl::IsUnauthenticated(wrong->Register({coordinator::kProtocolVersion, "x", "t", {}}).status()));

  auto compile = Client(r, "compile-token");
  const std::string compile_id = Register(*compile, "buildhost");
  auto job = compile->Lease(CompileLease(compile_id));
  REQUIRE(job.ok());
  REQUIRE(job->size() == 1);
  auto ids = compile->PutKernels(compile_id, (*job)[0].job_id, (*job)[0].attempt, {Blob(100)});
  INFO(ids.status().ToString());
  REQUIRE(ids.ok());
  auto built_by = db().Query("SELECT built_by FROM kernel");
  REQUIRE(built_by.ok());
  REQUIRE(built_by->size() == 1);
  CHECK((*built_by)[0].String(0) == compile_id);
  coordinator::Report rep;
  rep.worker_id = compile_id;
  rep.job_id = (*job)[0].job_id;
  rep.attempt = (*job)[0].attempt;
  rep.step = JobStep::kCompile;
  rep.succeeded = true;
  rep.kernels.push_back({(*ids)[0], std::string(64, 'a')});
  REQUIRE(compile->Report(rep).ok());
  // The eval role fetches them with their provenance.
  LeaseRequest ev;
  ev.worker_id = eval_id;
  ev.step = JobStep::kEval;
  ev.device = coordinator::Device{"cpu", "cpu-test", 4, 0, 0};
  ev.max_jobs = 1;
  ev.wait = absl::Seconds(1);
  auto ej = eval->Lease(ev);
  REQUIRE(ej.ok());
  REQUIRE(ej->size() == 1);
  auto fetched = eval->FetchKernels(eval_id, (*ej)[0].job_id, (*ej)[0].attempt);
  REQUIRE(fetched.ok());
  REQUIRE(fetched->size() == 1);
  CHECK((*fetched)[0].built_by == compile_id);
}

TEST_CASE_METHOD(testing::MariadbTest, "big requests: refused by their token, or by their size",
                 "[mariadb][distributed]") {
  Running r = Start(db(), TwoRoles());
  auto anonymous = Client(r, "");
  auto big = anonymous->PutKernels("w/1", 1, 1, {Blob(64u << 20)});
  INFO(big.status().ToString());
  CHECK(absl::IsUnauthenticated(big.status()));
  CHECK(absl::IsUnauthenticated(anonymous->PutKernels("w/1", 1, 1, {Blob(100)}).status()));
  CHECK(absl::IsPermissionDenied(
      Client(r, "eval-token")->PutKernels("w/1", 1, 1, {Blob(64u << 20)}).status()));
  // With the token, a request over the server's limit (32 MiB) is refused by gRPC.
  CHECK(absl::IsResourceExhausted(
      Client(r, "compile-token")->PutKernels("w/1", 1, 1, {Blob(40u << 20)}).status()));
  // A small method's request of 2 MiB (a long worker id list of leases) is refused after the
  // token check by its own limit.
  auto compile = Client(r, "compile-token");
  std::vector<coordinator::Lease> many(200000, coordinator::Lease{1, 1});
  auto renew = compile->Renew("w/1", many);
  CHECK(absl::IsResourceExhausted(renew.status()));
}

TEST_CASE_METHOD(testing::MariadbTest, "a 64 MiB request without a token is refused unread",
                 "[mariadb][distributed]") {
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  so.token = "compile-token";
  Running r = Start(db(), so);
  // Through a proxy that counts what reaches the server.
  auto proxy = testing::ByteCountingProxy::Start(r.server->port());
  REQUIRE(proxy.ok());
  worker::GrpcClientOptions o;
  o.address = "127.0.0.1:" + std::to_string((*proxy)->port());
  o.call_timeout = absl::Seconds(20);
  auto anonymous = worker::MakeGrpcClient(o);
  const auto t0 = std::chrono::steady_clock::now();
  auto big = anonymous->PutKernels("w/1", 1, 1, {Blob(64u << 20)});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t reached = (*proxy)->client_to_server_bytes();
  std::printf("64 MiB PutKernels without a token: %s after %.2f s; %lld bytes reached the "
              "server\n",
              big.status().ToString().substr(0, 120).c_str(), seconds,
              static_cast<long long>(reached));
  CHECK(absl::IsUnauthenticated(big.status()));
  // Unread: at most what HTTP/2 flow control let through before the refusal (a stream's first
  // 64 KiB), not the message (64 MiB; gRPC's own size limit let all of it through before
  // answering RESOURCE_EXHAUSTED).
  CHECK(reached < (1 << 20));
}

// One unary call of `method` with `bytes` bytes of request (not a valid message: a request that
// is refused is never parsed) and `token` ("": none), as any gRPC client could send it.
grpc::Status RawCall(grpc::GenericStub& stub, const std::string& method, const std::string& token,
                     size_t bytes) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  if (!token.empty()) ctx.AddMetadata("authorization", "Bearer " + token);
  grpc::Slice payload(std::string(bytes, '\xff'));
  grpc::ByteBuffer request(&payload, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/tuna.v1.Worker/" + method, {}, &request, &response,
                 [&](grpc::Status st) { done.set_value(st); });
  return done.get_future().get();
}

// Every method of the Worker service, small and large: the token is checked on the call's
// metadata before its request is read, so a 64 MiB request without one is refused and only
// what HTTP/2 flow control let through reaches the server (gRPC's synchronous handlers read all
// 64 MiB first: the counts below were 67 MB per call before every method was served unread).
TEST_CASE_METHOD(testing::MariadbTest, "every method refuses a 64 MiB request without a token unread",
                 "[mariadb][distributed]") {
  Running r = Start(db(), TwoRoles());
  auto proxy = testing::ByteCountingProxy::Start(r.server->port());
  REQUIRE(proxy.ok());
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*proxy)->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  const size_t big = 64u << 20;
  const std::vector<std::string> methods = {"Register", "Ping",       "Lease",     "Renew",
                                            "Report",   "Release",    "PutKernels", "FetchKernels"};
  auto refused_unread = [&](const std::string& method, const std::string& token,
                            grpc::StatusCode want) {
    const int64_t before = (*proxy)->client_to_server_bytes();
    const auto t0 = std::chrono::steady_clock::now();
    const grpc::Status st = RawCall(stub, method, token, big);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int64_t reached = (*proxy)->client_to_server_bytes() - before;
    std::printf("64 MiB %s (%s): %s after %.2f s; %lld bytes reached the server\n",
                method.c_str(), token.empty() ? "no token" : token.c_str(),
                st.error_message().substr(0, 80).c_str(), seconds,
                static_cast<long long>(reached));
    INFO(method << ": " << st.error_message());
    CHECK(st.error_code() == want);
    // The server's initial HTTP/2 stream window is 64 KiB (BDP probing off); read, it would
    // be 64 MiB.
    CHECK(reached < (1 << 20));
  };
  for (const auto& method : methods) {
    refused_unread(method, "", grpc::StatusCode::UNAUTHENTICATED);
    refused_unread(method, "not-a-token", grpc::StatusCode::UNAUTHENTICATED);
  }
  refused_unread("PutKernels", "eval-token", grpc::StatusCode::PERMISSION_DENIED);

  // With a token, each small method refuses a request over its own limit (1 MiB), before it is
  // parsed; Report and PutKernels take more (garbage of 2 MiB is then refused as unparsable),
  // and nothing may exceed the server's 32 MiB.
  for (const auto& method : methods) {
    const grpc::Status st = RawCall(stub, method, "compile-token", 2u << 20);
    INFO(method << ": " << st.error_message());
    if (method == "Report" || method == "PutKernels") {
      CHECK(st.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED);
      CHECK(st.error_code() != grpc::StatusCode::OK);
    } else {
      CHECK(st.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
      CHECK(st.error_message().find("too large for /tuna.v1.Worker/" + method) !=
            std::string::npos);
    }
  }
  CHECK(RawCall(stub, "Lease", "compile-token", big).error_code() ==
        grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(RawCall(stub, "NoSuchMethod", "", big).error_code() == grpc::StatusCode::UNIMPLEMENTED);

  // Authenticated calls of normal size go through, on the same connection; a 24 MiB upload is
  // read whole and reaches the coordinator (which refuses it: there is no such job).
  CHECK(RawCall(stub, "Ping", "eval-token", 0).ok());
  auto client = Client(r, "compile-token");
  const std::string id = Register(*client, "afterwards");
  CHECK(client->Renew(id, {}).ok());
  const auto t0 = std::chrono::steady_clock::now();
  auto upload = client->PutKernels(id, 1, 1, {Blob(24u << 20)});
  std::printf("24 MiB PutKernels with the token: %s after %.2f s\n",
              upload.status().ToString().substr(0, 80).c_str(),
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  CHECK(absl::IsNotFound(upload.status()));
}

// The health protocol has no token (probes carry none), so it is the one thing anyone may send
// to the port: its requests are never read (coordinator/health_service.h). gRPC's own health
// service read a 64 MiB Check whole (67 MB reached the server), then refused it.
TEST_CASE_METHOD(testing::MariadbTest, "a 64 MiB health Check is answered unread, without a token",
                 "[mariadb][distributed]") {
  Running r = Start(db(), TwoRoles());
  auto proxy = testing::ByteCountingProxy::Start(r.server->port());
  REQUIRE(proxy.ok());
  const std::string addr = "127.0.0.1:" + std::to_string((*proxy)->port());
  for (const size_t bytes : {size_t(64u << 20), size_t(64u << 20), size_t(0)}) {
    const int64_t before = (*proxy)->client_to_server_bytes();
    auto st = testing::CheckHealth(addr, std::string(bytes, 'x'), absl::Seconds(60));
    const int64_t reached = (*proxy)->client_to_server_bytes() - before;
    std::printf("health Check of a %zu-byte service name, no token: %s; %lld bytes reached the "
                "server\n",
                bytes, st.ok() ? st->c_str() : st.status().ToString().substr(0, 100).c_str(),
                static_cast<long long>(reached));
    INFO(st.status().ToString());
    REQUIRE(st.ok());
    CHECK(*st == "SERVING");
    CHECK(reached < (1 << 20));  // a stream's first 64 KiB at most; read, it would be 64 MiB
  }
  // The Worker methods still need the token on the same port.
  grpc::GenericStub stub(grpc::CreateChannel(addr, grpc::InsecureChannelCredentials()));
  CHECK(RawCall(stub, "Ping", "", 0).error_code() == grpc::StatusCode::UNAUTHENTICATED);
  CHECK(RawCall(stub, "Ping", "eval-token", 0).ok());
  // A Watch gets SERVING, then NOT_SERVING when the server shuts down, then its end.
  testing::HealthWatch watch(r.server->address(), "");
  CHECK(watch.Next().value_or("") == "SERVING");
  r.server->Shutdown();
  CHECK(watch.Next().value_or("") == "NOT_SERVING");
  CHECK(absl::IsOutOfRange(watch.Next().status()));
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE_METHOD(testing::MariadbTest, "TLS with a generated certificate; plaintext off loopback",
                 "[mariadb][distributed]") {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir = std::string(tmp ? tmp : "/tmp") + "/tls";
  mkdir(dir.c_str(), 0700);
  const std::string cmd =
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
      "-addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout " + dir + "/key.pem -out " +
      dir + "/cert.pem 2>/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    WARN("openssl is not installed: skipping the TLS case");
    return;
  }
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  so.token = "compile-token";
  so.tls_cert_pem = Slurp(dir + "/cert.pem");
  so.tls_key_pem = Slurp(dir + "/key.pem");
  Running r = Start(db(), so);
  auto ok = Client(r, "compile-token", so.tls_cert_pem);
  Register(*ok, "tlshost");
  auto anonymous = Client(r, "", so.tls_cert_pem);
  CHECK(absl::IsUnauthenticated(anonymous->PutKernels("w/1", 1, 1, {Blob(64u << 20)}).status()));
  CHECK(absl::IsUnauthenticated(anonymous->PutKernels("w/1", 1, 1, {Blob(100)}).status()));
  r.server->Shutdown();

  // Off loopback: a token alone is not enough without TLS, unless asked for.
  auto c = coordinator::Coordinator::Create(db(), {});
  REQUIRE(c.ok());
  coordinator::ServerOptions open;
  open.listen = "0.0.0.0:0";
  open.token = "compile-token";
  auto refused = coordinator::CoordinatorServer::Start(**c, open);
  REQUIRE(!refused.ok());
  CHECK(refused.status().message().find("without TLS") != std::string::npos);
  open.insecure_plaintext = true;
  auto allowed = coordinator::CoordinatorServer::Start(**c, open);
  CHECK(allowed.ok());
}

// The status of one call to the reflection service (an empty request, like a probe's first).
grpc::StatusCode CallReflection(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  std::promise<grpc::Status> done;
  stub.UnaryCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", {},
                 &request, &response, [&](grpc::Status st) { done.set_value(st); });
  return done.get_future().get().error_code();
}

// gRPC's reflection plugin registers itself for every server of a process that links it: the
// "off" case must see it removed, also after a server that asked for it.
TEST_CASE_METHOD(testing::MariadbTest, "server reflection only when asked for",
                 "[mariadb][distributed]") {
  coordinator::ServerOptions so;
  so.listen = "127.0.0.1:0";
  {
    Running off = Start(db(), so);
    CHECK(CallReflection(off.server->address()) == grpc::StatusCode::UNIMPLEMENTED);
  }
  so.reflection = true;
  {
    Running on = Start(db(), so);
    CHECK(CallReflection(on.server->address()) != grpc::StatusCode::UNIMPLEMENTED);
  }
  so.reflection = false;
  Running off_again = Start(db(), so);
  CHECK(CallReflection(off_again.server->address()) == grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace tuna
