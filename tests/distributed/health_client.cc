#include "tests/distributed/health_client.h"

#include <grpcpp/grpcpp.h>

#include "proto/health.grpc.pb.h"

namespace tuna::testing {

absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        absl::Duration timeout) {
  // A fresh channel with its own connection per call: a server that stopped or came back is
  // seen at once, not behind an earlier channel's reconnect backoff.
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  auto stub = grpc::health::v1::Health::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse reply;
  const grpc::Status st = stub->Check(&ctx, req, &reply);
  if (!st.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(st.error_code()), st.error_message());
  }
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(reply.status());
}

}  // namespace tuna::testing
