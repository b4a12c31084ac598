#include "worker/coordinator_client.h"

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "coordinator/wire.h"
#include "proto/tuna.grpc.pb.h"

namespace tuna::worker {

bool IsTransient(const absl::Status& st) {
  return absl::IsUnavailable(st) || absl::IsDeadlineExceeded(st) || absl::IsAborted(st) ||
         absl::IsResourceExhausted(st);
}

namespace {

using coordinator::FromWire;
using coordinator::ToWire;

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) return absl::OkStatus();
  // This client never cancels its own calls, so CANCELLED means the server ended the call
  // (a coordinator shutting down cancels what is in flight): the same as an unreachable one.
  if (s.error_code() == grpc::StatusCode::CANCELLED) {
    return absl::UnavailableError(absl::StrCat("coordinator ended the call: ", s.error_message()));
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

class GrpcClient final : public coordinator::WorkerApi {
 public:
  explicit GrpcClient(const GrpcClientOptions& o) : options_(o) {
    std::shared_ptr<grpc::ChannelCredentials> creds;
    if (o.tls_root_pem.empty()) {
      creds = grpc::InsecureChannelCredentials();
    } else {
      grpc::SslCredentialsOptions ssl;
      ssl.pem_root_certs = o.tls_root_pem;
      creds = grpc::SslCredentials(ssl);
    }
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(256 << 20);
    args.SetMaxSendMessageSize(256 << 20);
    // Each client its own connection (the benchmark's simulated workers must not share one).
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    // Reconnect within a second of a restarted coordinator listening again: gRPC adds up to 20 %
    // jitter to these, and the worker retries its calls at most Worker::kMaxRetryBackoff apart.
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 400);
    channel_ = grpc::CreateCustomChannel(o.address, creds, args);
    stub_ = v1::Worker::NewStub(channel_);
  }

  absl::StatusOr<coordinator::Registered> Register(
      const coordinator::WorkerRegistration& w) override {
    v1::RegisterRequest req;
    req.set_protocol_version(w.protocol_version);
    req.set_host(w.host);
    req.set_tuna_version(w.version);
    for (const auto& d : w.devices) ToWire(d, req.add_devices());
    v1::RegisterReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(absl::ZeroDuration());
    if (auto st = FromGrpc(stub_->Register(ctx.get(), req, &reply)); !st.ok()) return st;
    return coordinator::Registered{reply.worker_id(), static_cast<int>(reply.lease_seconds())};
  }

  absl::StatusOr<std::vector<coordinator::LeasedJob>> Lease(
      const coordinator::LeaseRequest& r) override {
    v1::LeaseRequest req;
    ToWire(r, &req);
    v1::LeaseReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(r.wait);
    if (auto st = FromGrpc(stub_->Lease(ctx.get(), req, &reply)); !st.ok()) return st;
    std::vector<coordinator::LeasedJob> out;
    for (const auto& j : reply.jobs()) {
      auto x = FromWire(j);
      if (!x.ok()) return x.status();
      out.push_back(std::move(*x));
    }
    return out;
  }

  absl::StatusOr<std::vector<coordinator::Lease>> Renew(
      const std::string& worker_id, const std::vector<coordinator::Lease>& leases) override {
    v1::RenewRequest req;
    req.set_worker_id(worker_id);
    for (const auto& l : leases) {
      auto* x = req.add_leases();
      x->set_job_id(l.job_id);
      x->set_attempt(l.attempt);
    }
    v1::RenewReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(absl::ZeroDuration());
    if (auto st = FromGrpc(stub_->Renew(ctx.get(), req, &reply)); !st.ok()) return st;
    std::vector<coordinator::Lease> out;
    for (const auto& l : reply.held()) out.push_back({l.job_id(), l.attempt()});
    return out;
  }

  absl::Status Report(const coordinator::Report& r) override {
    v1::ReportRequest req;
    ToWire(r, &req);
    v1::ReportReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(absl::ZeroDuration());
    return FromGrpc(stub_->Report(ctx.get(), req, &reply));
  }

  absl::StatusOr<int64_t> Release(const std::string& worker_id,
                                  const std::vector<coordinator::Lease>& leases) override {
    v1::ReleaseRequest req;
    req.set_worker_id(worker_id);
    for (const auto& l : leases) {
      auto* x = req.add_leases();
      x->set_job_id(l.job_id);
      x->set_attempt(l.attempt);
    }
    v1::ReleaseReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(absl::ZeroDuration());
    if (auto st = FromGrpc(stub_->Release(ctx.get(), req, &reply)); !st.ok()) return st;
    return reply.released();
  }

  absl::StatusOr<std::vector<int64_t>> PutKernels(
      const std::string& worker_id, int64_t job_id, int64_t attempt,
      const std::vector<coordinator::KernelBlob>& kernels) override {
    v1::PutKernelsRequest req;
    req.set_worker_id(worker_id);
    req.set_job_id(job_id);
    req.set_attempt(attempt);
    for (const auto& k : kernels) ToWire(k, req.add_kernels());
    v1::PutKernelsReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(absl::ZeroDuration());
    if (auto st = FromGrpc(stub_->PutKernels(ctx.get(), req, &reply)); !st.ok()) return st;
    return std::vector<int64_t>(reply.kernel_ids().begin(), reply.kernel_ids().end());
  }

  absl::StatusOr<std::vector<coordinator::KernelBlob>> FetchKernels(const std::string& worker_id,
                                                                 int64_t job_id,
                                                                 int64_t attempt) override {
    v1::FetchKernelsRequest req;
    req.set_worker_id(worker_id);
    req.set_job_id(job_id);
    req.set_attempt(attempt);
    v1::FetchKernelsReply reply;
    if (absl::Status c = Connected(); !c.ok()) return c;
    auto ctx = Context(absl::ZeroDuration());
    if (auto st = FromGrpc(stub_->FetchKernels(ctx.get(), req, &reply)); !st.ok()) return st;
    std::vector<coordinator::KernelBlob> out;
    for (const auto& k : reply.kernels()) out.push_back(FromWire(k));
    return out;
  }

 private:
  // A channel that is not connected makes its connection attempts progress only while some
  // thread polls it; otherwise gRPC's backup poller does, every 5 s, and a restarted
  // coordinator would be reached seconds late. So a call first waits here, polling, up to
  // kConnectWait for the channel to be ready (at once when it is).
  static constexpr absl::Duration kConnectWait = absl::Seconds(1);
  absl::Status Connected() {
    if (channel_->GetState(true) == GRPC_CHANNEL_READY) return absl::OkStatus();
    if (channel_->WaitForConnected(absl::ToChronoTime(absl::Now() + kConnectWait))) {
      return absl::OkStatus();
    }
    return absl::UnavailableError(absl::StrCat("coordinator ", options_.address,
                                               " unreachable: not connected within 1 s"));
  }

  std::unique_ptr<grpc::ClientContext> Context(absl::Duration extra) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(absl::ToChronoTime(absl::Now() + options_.call_timeout + extra));
    if (!options_.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options_.token);
    return ctx;
  }

  GrpcClientOptions options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Worker::Stub> stub_;
};

}  // namespace

std::unique_ptr<coordinator::WorkerApi> MakeGrpcClient(const GrpcClientOptions& options) {
  return std::make_unique<GrpcClient>(options);
}

}  // namespace tuna::worker
