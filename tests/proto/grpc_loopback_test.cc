// The generated service really works over loopback TCP with the system gRPC.
#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "catch2/catch.hpp"
#include "proto/tuna.grpc.pb.h"

namespace {

class EchoWorker final : public tuna::v1::Worker::Service {
  grpc::Status Register(grpc::ServerContext*, const tuna::v1::RegisterRequest* req,
                        tuna::v1::RegisterReply* reply) override {
    if (req->devices_size() == 0) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "no devices");
    }
    reply->set_worker_id(req->host() + "/" + req->devices(0).arch());
    reply->set_lease_seconds(30);
    return grpc::Status::OK;
  }
};

}  // namespace

TEST_CASE("generated Worker service answers over loopback") {
  EchoWorker service;
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server != nullptr);
  REQUIRE(port > 0);

  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port),
                                     grpc::InsecureChannelCredentials());
  auto stub = tuna::v1::Worker::NewStub(channel);

  tuna::v1::RegisterRequest req;
  req.set_host("hostA");
  auto* dev = req.add_devices();
  dev->set_arch("sm_90");
  tuna::v1::RegisterReply reply;
  grpc::ClientContext ctx;
  grpc::Status st = stub->Register(&ctx, req, &reply);
  REQUIRE(st.ok());
  CHECK(reply.worker_id() == "hostA/sm_90");
  CHECK(reply.lease_seconds() == 30);

  tuna::v1::RegisterRequest empty;
  grpc::ClientContext ctx2;
  st = stub->Register(&ctx2, empty, &reply);
  CHECK(st.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  server->Shutdown();
}
