#include "coordinator/server.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/service_type.h>
#include <grpcpp/ext/health_check_service_server_builder_option.h>
#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/impl/server_builder_plugin.h>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "coordinator/service.h"
#include "spdlog/spdlog.h"

namespace tuna::coordinator {

bool IsLoopbackAddress(const std::string& listen) {
  if (absl::StartsWith(listen, "unix:")) return true;
  std::string host = listen;
  const size_t colon = listen.rfind(':');
  if (colon != std::string::npos) host = listen.substr(0, colon);
  if (absl::StartsWith(host, "[") && absl::EndsWith(host, "]")) {
    host = host.substr(1, host.size() - 2);
  }
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("token file ", path, " not found"));
  }
  if (st.st_mode & (S_IRWXG | S_IRWXO)) {
    return absl::PermissionDeniedError(
        absl::StrCat("token file ", path, " is accessible by group/others (chmod 600 it)"));
  }
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::string token(absl::StripAsciiWhitespace(line));
  if (token.empty()) return absl::InvalidArgumentError(absl::StrCat("token file ", path, " is empty"));
  return token;
}

namespace {

// Linking gRPC's reflection library registers its plugin for every server of the process (a
// static initializer): this option takes it out again where reflection was not asked for.
class WithoutReflection : public grpc::ServerBuilderOption {
 public:
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [](const auto& p) { return p->name() == "proto_server_reflection"; }),
                   plugins->end());
  }
};

absl::StatusOr<std::unique_ptr<Credentials>> MakeCredentials(const ServerOptions& o) {
  if (!o.token_file.empty() || !o.eval_token_file.empty()) {
    return Credentials::FromFiles(o.token_file, o.eval_token_file);
  }
  return Credentials::Fixed(o.token, o.eval_token);
}

}  // namespace

absl::StatusOr<std::unique_ptr<CoordinatorServer>> CoordinatorServer::Start(
    Coordinator& coordinator, const ServerOptions& options) {
  auto credentials = MakeCredentials(options);
  if (!credentials.ok()) return credentials.status();
  const bool loopback = IsLoopbackAddress(options.listen);
  if (!loopback && !(*credentials)->Required()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to listen on non-loopback address ", options.listen,
        " without a token (--token-file)"));
  }
  if (options.tls_cert_pem.empty() != options.tls_key_pem.empty()) {
    return absl::InvalidArgumentError("TLS needs both a certificate and a key");
  }
  if (!loopback && options.tls_cert_pem.empty() && !options.insecure_plaintext) {
    return absl::InvalidArgumentError(absl::StrCat(
        "refusing to listen on non-loopback address ", options.listen,
        " without TLS: the token would travel in plaintext (give --tls-cert and --tls-key, or "
        "--insecure-plaintext on a network you trust)"));
  }
  if (!loopback && options.tls_cert_pem.empty()) {
    spdlog::warn("coordinator: --insecure-plaintext: tokens and results travel unencrypted on {}",
                 options.listen);
  }
  std::unique_ptr<CoordinatorServer> s(new CoordinatorServer());
  s->coordinator_ = &coordinator;
  s->credentials_ = *std::move(credentials);
  // Calls that wait for the database hold a thread each (Lease and Report do not: the
  // coordinator answers them from its own threads): allow a fleet's worth at once, and keep it.
  s->pool_ = std::make_unique<HandlerPool>(/*max_threads=*/1024, /*keep_idle=*/256);
  s->health_ = std::make_unique<HealthService>();
  s->service_ = MakeWorkerService(coordinator, *s->credentials_, *s->pool_, *s->health_);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  if (!options.reflection) builder.SetOption(std::make_unique<WithoutReflection>());
  // Health is answered by the generic service (health_service.h: unread); gRPC's own service
  // (which reads every request whole) stays off even where the process-wide switch is on.
  builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
  std::shared_ptr<grpc::ServerCredentials> creds;
  if (!options.tls_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions ssl;
    ssl.pem_key_cert_pairs.push_back({options.tls_key_pem, options.tls_cert_pem});
    creds = grpc::SslServerCredentials(ssl);
  } else {
    creds = grpc::InsecureServerCredentials();
  }
  builder.AddListeningPort(options.listen, creds, &s->port_);
  // Every Worker method is served by the generic service (nothing registers them), so each
  // call's token is checked before its request is read.
  builder.RegisterCallbackGenericService(s->service_.get());
  // A refused request is never asked for, but the transport still takes what the stream's
  // HTTP/2 window lets through. With BDP probing that window grows with the connection's
  // traffic (4 MiB on a fresh loopback connection, 20-40 MiB after a few large calls); without
  // it a stream starts with 64 KiB, and a request that is read opens the window to its whole
  // length anyway (a 24 MiB upload took the same time on loopback either way).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  s->server_ = builder.BuildAndStart();
  if (!s->server_ || s->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  const size_t colon = options.listen.rfind(':');
  s->host_ = colon == std::string::npos ? options.listen : options.listen.substr(0, colon);
  if (s->host_ == "0.0.0.0" || s->host_ == "[::]") s->host_ = "127.0.0.1";
  s->health_->SetServing(true);
  spdlog::info("coordinator: listening on {} (port {}, {}, {}{})", options.listen, s->port_,
               s->credentials_->Required() ? "token required" : "no token",
               options.tls_cert_pem.empty() ? "plaintext" : "TLS",
               options.reflection ? ", reflection on" : "");
  if (!options.token_file.empty() || !options.eval_token_file.empty()) {
    s->reloader_ = std::thread([p = s.get(), every = options.token_reload] { p->ReloadLoop(every); });
  }
  return s;
}

bool CoordinatorServer::SleepUnlessStopping(absl::Duration d) {
  absl::MutexLock l(&reload_mu_);
  auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(reload_mu_) { return stopping_; };
  return reload_mu_.AwaitWithTimeout(absl::Condition(&stop), d);
}

void CoordinatorServer::ReloadLoop(absl::Duration every) {
  for (;;) {
    if (SleepUnlessStopping(every)) return;
    auto changed = credentials_->Reload();
    if (!changed.ok()) {
      spdlog::warn("coordinator: token files not re-read (the old tokens stay): {}",
                   changed.status().ToString());
    } else if (*changed) {
      spdlog::warn("coordinator: a token file changed: workers holding the old token are refused "
                   "from now on; the leases they hold are requeued without a retry charged");
      coordinator_->BeginGrace();
      // A Lease or Renew call authorised just before the reload can commit its lease after the
      // grace began, and that lease would be charged when it expires: begin the grace once more
      // after such calls have ended (they take milliseconds; 2 s is ample).
      if (SleepUnlessStopping(absl::Seconds(2))) return;
      coordinator_->BeginGrace();
    }
  }
}

std::string CoordinatorServer::address() const {
  if (absl::StartsWith(host_, "unix:")) return host_;
  return absl::StrCat(host_, ":", port_);
}

void CoordinatorServer::Wait() {
  if (server_) server_->Wait();
}

void CoordinatorServer::Shutdown() {
  {
    absl::MutexLock l(&reload_mu_);
    stopping_ = true;
  }
  if (reloader_.joinable()) reloader_.join();
  if (!server_) return;
  health_->Shutdown();  // NOT_SERVING; open Watch calls are told and ended
  // The Coordinator first: it answers its blocked long-polls, refuses what arrives from now on and
  // commits the queued reports, answering each, however long the database takes. Only then does
  // the server stop, its 2 s grace for the calls still returning: a deadline running during the
  // drain cancelled report calls whose reports were then committed (12 of 100 in a loaded CI run).
  coordinator_->Shutdown();
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_.reset();
}

CoordinatorServer::~CoordinatorServer() { Shutdown(); }

}  // namespace tuna::coordinator
