#include "tests/distributed/health_client.h"

namespace tuna::testing {
namespace {

// A fresh channel with its own connection per call: a server that stopped or came back is seen
// at once, not behind an earlier channel's reconnect backoff.
std::unique_ptr<grpc::health::v1::Health::Stub> FreshStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::health::v1::Health::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

absl::Status ToAbsl(const grpc::Status& st) {
  return absl::Status(static_cast<absl::StatusCode>(st.error_code()), st.error_message());
}

}  // namespace

absl::StatusOr<std::string> CheckHealth(const std::string& address, const std::string& service,
                                        absl::Duration timeout) {
  auto stub = FreshStub(address);
  grpc::ClientContext ctx;
  ctx.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  grpc::health::v1::HealthCheckResponse reply;
  const grpc::Status st = stub->Check(&ctx, req, &reply);
  if (!st.ok()) return ToAbsl(st);
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(reply.status());
}

HealthWatch::HealthWatch(const std::string& address, const std::string& service,
                         absl::Duration timeout)
    : stub_(FreshStub(address)) {
  ctx_.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  reader_ = stub_->Watch(&ctx_, req);
}

absl::StatusOr<std::string> HealthWatch::Next() {
  grpc::health::v1::HealthCheckResponse reply;
  if (!ended_ && reader_->Read(&reply)) {
    return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(reply.status());
  }
  if (!ended_) {
    const grpc::Status st = reader_->Finish();
    ended_ = st.ok() ? absl::OutOfRangeError("the server ended the watch") : ToAbsl(st);
  }
  return *ended_;
}

}  // namespace tuna::testing
