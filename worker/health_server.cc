#include "worker/health_server.h"

#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tuna::worker {

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(const std::string& listen,
                                                                  std::vector<std::string> services) {
  if (listen.empty()) return absl::InvalidArgumentError("health: empty listen address");
  std::unique_ptr<HealthServer> s(new HealthServer());
  s->services_.push_back("");
  for (auto& name : services) {
    if (!name.empty()) s->services_.push_back(std::move(name));
  }
  // The built-in service is created by BuildAndStart when this process-wide switch is on; it
  // needs no generated protobuf code (grpc encodes its messages itself).
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(listen, grpc::InsecureServerCredentials(), &s->port_);
  // gRPC binds with SO_REUSEPORT by default: a second worker given the same port would share it
  // silently and probes would ask either one. Fail to start instead.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // A server must have a service of its own to poll for calls (BuildAndStart fails with "At
  // least one of the completion queues must be frequently polled" otherwise; the built-in
  // health service is added later, in Start). The default generic service answers every other
  // method UNIMPLEMENTED, as a server does anyway.
  s->other_methods_ = std::make_unique<grpc::CallbackGenericService>();
  builder.RegisterCallbackGenericService(s->other_methods_.get());
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("health: cannot listen on ", listen));
  }
  // gRPC starts "" as SERVING; turn it down before the port is even logged, so a probe that
  // finds the port never sees SERVING before the worker is registered.
  s->SetServing(false);
  spdlog::info("health: gRPC health service listening on {} (port {})", listen, s->port_);
  return s;
}

void HealthServer::SetServing(bool serving) {
  std::lock_guard<std::mutex> l(mu_);
  if (!server_) return;
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  for (const std::string& name : services_) health->SetServingStatus(name, serving);
}

void HealthServer::Shutdown() {
  std::unique_ptr<grpc::Server> server;
  {
    std::lock_guard<std::mutex> l(mu_);
    server = std::move(server_);
  }
  if (!server) return;
  // NOT_SERVING for every name and no more changes; open Watch streams get it before the stop.
  server->GetHealthCheckService()->Shutdown();
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

HealthServer::~HealthServer() { Shutdown(); }

}  // namespace tuna::worker
