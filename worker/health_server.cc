#include "worker/health_server.h"

#include <grpcpp/ext/health_check_service_server_builder_option.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tuna::worker {

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& listen) {
  if (listen.empty()) return absl::InvalidArgumentError("health: empty listen address");
  std::unique_ptr<HealthServer> s(new HealthServer());
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &s->port_);
  // gRPC binds with SO_REUSEPORT by default: a second worker given the same port would share it
  // silently and probes would ask either one. Fail to start instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A new stream's HTTP/2 window stays 64 KiB, so that is all an unread request can push in
  // (with BDP probing it grows to megabytes; coordinator/server.cc does the same).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  // Check and Watch come to the generic service, which answers them unread (every other method
  // UNIMPLEMENTED); gRPC's own health service, which reads requests whole, stays off.
  builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
  s->service_ = coordinator::MakeHealthOnlyService(s->health_);
  builder.RegisterCallbackGenericService(s->service_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("health: cannot listen on ", listen));
  }
  spdlog::info("health: gRPC health service listening on {} (port {})", listen, s->port_);
  return s;
}

void HealthServer::SetServing(bool serving) {
  std::lock_guard<std::mutex> l(mu_);
  if (server_) health_.SetServing(serving);
}

void HealthServer::Shutdown() {
  std::unique_ptr<grpc::Server> server;
  {
    std::lock_guard<std::mutex> l(mu_);
    server = std::move(server_);
  }
  if (!server) return;
  // NOT_SERVING for good; open Watch calls get it and end before the stop.
  health_.Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

HealthServer::~HealthServer() { Shutdown(); }

}  // namespace tuna::worker
