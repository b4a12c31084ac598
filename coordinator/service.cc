// The gRPC adapter: the only server file that includes tuna.grpc.pb.h. Every method is served
// through unread_refusal.h, which checks the token (and PutKernels' role) before the request is
// read and holds each method to its size; each handler converts the request (wire.h), calls the
// domain and maps absl::Status to grpc::Status. Handlers that block (the database) run on a
// HandlerPool; Lease answers from the coordinator's dispatcher (or its expiry thread) and Report
// from its reporter, so no thread waits for either.
#include "coordinator/service.h"

#include <grpcpp/impl/codegen/proto_utils.h>

#include <algorithm>
#include <memory>

#include "coordinator/credentials.h"
#include "coordinator/handler_pool.h"
#include "coordinator/unread_refusal.h"
#include "coordinator/wire.h"
#include "proto/tuna.grpc.pb.h"
#include "spdlog/spdlog.h"

namespace tuna::coordinator {
namespace {

// Requests of every method but Report and PutKernels are small: bigger ones are refused by their
// method's limit (after the token, unread_refusal.h). Report and PutKernels take up to the
// server's own limit (ServerOptions::max_message_bytes); workers send kernels in 8 MiB pieces.
constexpr size_t kMaxSmallRequest = 1 << 20;

grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

constexpr const char* kMethodPrefix = "/tuna.v1.Worker/";
constexpr const char* kPutKernels = "/tuna.v1.Worker/PutKernels";

// The Worker service's handlers. Each is called once the caller's token was accepted
// (Authorize) and its request read and parsed; `ctx` is the call's.
class WorkerService : public std::enable_shared_from_this<WorkerService> {
 public:
  WorkerService(Coordinator& c, const Credentials& credentials, HandlerPool& pool)
      : c_(c), credentials_(credentials), pool_(pool) {}

  // Before a request is read: a token, and for PutKernels the compile role (eval hosts never
  // hand code to the others).
  grpc::Status Authorize(const grpc::ServerContextBase& ctx, const std::string& method) const {
    const Role role = RoleOf(ctx);
    if (role == Role::kNone) {
      return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "missing or wrong token");
    }
    if (method == kPutKernels && role != Role::kCompile) {
      return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                          "PutKernels needs the compile role's token (this is the eval role's)");
    }
    return grpc::Status::OK;
  }

  grpc::Status Register(const grpc::ServerContextBase&, const v1::RegisterRequest& req,
                        v1::RegisterReply* reply) {
    WorkerRegistration w;
    w.protocol_version = req.protocol_version();
    w.host = req.host();
    w.version = req.tuna_version();
    for (const auto& d : req.devices()) w.devices.push_back(FromWire(d));
    auto r = c_.Register(w);
    if (!r.ok()) return ToGrpc(r.status());
    reply->set_worker_id(r->worker_id);
    reply->set_lease_seconds(static_cast<uint32_t>(r->lease_seconds));
    return grpc::Status::OK;
  }

  grpc::Status Ping(const grpc::ServerContextBase&, const v1::PingRequest&, v1::PingReply* reply) {
    reply->set_coordinator_version("tuna-coordinator/1");
    return grpc::Status::OK;
  }

  // Answers when the coordinator hands jobs out or the wait ends (LeaseJobsAsync): no thread
  // waits for it.
  void Lease(const grpc::ServerContextBase& ctx, const v1::LeaseRequest& req,
             v1::LeaseReply* reply, Done done) {
    auto r = FromWire(req);
    if (!r.ok()) {
      done(ToGrpc(r.status()));
      return;
    }
    if (r->step == JobStep::kCompile && RoleOf(ctx) != Role::kCompile) {
      done(grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "compile leases need the compile role's token (this is the eval role's)"));
      return;
    }
    // Never wait past the caller's own deadline: jobs leased for a caller that gave up would
    // sit until their lease expires.
    const auto left = absl::FromChrono(ctx.deadline()) - absl::Now() - absl::Milliseconds(200);
    if (left < r->wait) r->wait = std::max(left, absl::ZeroDuration());
    c_.LeaseJobsAsync(*r, [self = shared_from_this(), &ctx, reply, worker_id = r->worker_id,
                           done = std::move(done)](absl::StatusOr<std::vector<LeasedJob>> jobs) {
      if (!jobs.ok()) {
        done(ToGrpc(jobs.status()));
      } else if (ctx.IsCancelled() && !jobs->empty()) {
        // Handing back writes to the database: not on the coordinator's thread.
        self->pool_.Run([self, worker_id, jobs = *std::move(jobs), done] {
          done(self->HandBack(worker_id, jobs));
        });
      } else {
        for (const auto& j : *jobs) ToWire(j, reply->add_jobs());
        done(grpc::Status::OK);
      }
    });
  }

  grpc::Status Renew(const grpc::ServerContextBase&, const v1::RenewRequest& req,
                     v1::RenewReply* reply) {
    std::vector<coordinator::Lease> leases;
    for (const auto& l : req.leases()) leases.push_back({l.job_id(), l.attempt()});
    auto held = c_.Renew(req.worker_id(), leases);
    if (!held.ok()) return ToGrpc(held.status());
    for (const auto& h : *held) {
      auto* l = reply->add_held();
      l->set_job_id(h.job_id);
      l->set_attempt(h.attempt);
    }
    return grpc::Status::OK;
  }

  // Answers once the report's batch is committed, from the reporter thread (no thread waits
  // for it).
  void Report(const v1::ReportRequest& req, Done done) {
    auto r = FromWire(req);
    if (!r.ok()) {
      done(ToGrpc(r.status()));
      return;
    }
    c_.SubmitReportAsync(*r, [done = std::move(done)](absl::Status st) { done(ToGrpc(st)); });
  }

  grpc::Status Release(const grpc::ServerContextBase&, const v1::ReleaseRequest& req,
                       v1::ReleaseReply* reply) {
    std::vector<coordinator::Lease> leases;
    for (const auto& l : req.leases()) leases.push_back({l.job_id(), l.attempt()});
    auto n = c_.Release(req.worker_id(), leases);
    if (!n.ok()) return ToGrpc(n.status());
    reply->set_released(*n);
    return grpc::Status::OK;
  }

  grpc::Status PutKernels(const grpc::ServerContextBase&, const v1::PutKernelsRequest& req,
                          v1::PutKernelsReply* reply) {
    std::vector<KernelBlob> kernels;
    for (const auto& k : req.kernels()) kernels.push_back(FromWire(k));
    auto ids = c_.PutKernels(req.worker_id(), req.job_id(), req.attempt(), kernels);
    if (!ids.ok()) return ToGrpc(ids.status());
    for (int64_t id : *ids) reply->add_kernel_ids(id);
    return grpc::Status::OK;
  }

  grpc::Status FetchKernels(const grpc::ServerContextBase&, const v1::FetchKernelsRequest& req,
                            v1::FetchKernelsReply* reply) {
    auto k = c_.FetchKernels(req.worker_id(), req.job_id(), req.attempt());
    if (!k.ok()) return ToGrpc(k.status());
    for (const auto& x : *k) ToWire(x, reply->add_kernels());
    return grpc::Status::OK;
  }

 private:
  // Jobs claimed for a long-poll whose caller went away meanwhile (a worker killed, its
  // connection closed, its deadline passed) would reach nobody and sit until their lease
  // expired, charged a retry: they go back now, uncharged (fenced like a worker's Release).
  grpc::Status HandBack(const std::string& worker_id, const std::vector<LeasedJob>& jobs) {
    std::vector<coordinator::Lease> leases;
    for (const auto& j : jobs) leases.push_back({j.job_id, j.attempt});
    auto n = c_.Release(worker_id, leases);
    spdlog::info("coordinator: {} job(s) claimed for {} handed back: the caller went away ({})",
                 jobs.size(), worker_id, n.ok() ? "released" : n.status().ToString());
    return grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away");
  }

  Role RoleOf(const grpc::ServerContextBase& ctx) const {
    const auto& md = ctx.client_metadata();
    auto it = md.find("authorization");
    return credentials_.RoleOf(it == md.end() ? std::string_view()
                                              : std::string_view(it->second.data(), it->second.size()));
  }

  Coordinator& c_;
  const Credentials& credentials_;
  HandlerPool& pool_;
};

// A handler of `Req` -> `Reply` over serialized messages: `handle` gets the call, the request
// and the reply to fill, and answers through its Done (unread_refusal.h), which serializes the
// reply.
template <class Req, class Reply>
using Handle =
    std::function<void(const grpc::ServerContextBase&, std::shared_ptr<const Req>, Reply*, Done)>;

template <class Req, class Reply>
RawHandler Raw(Handle<Req, Reply> handle) {
  return [handle](const grpc::ServerContextBase& ctx, const grpc::ByteBuffer& in,
                  grpc::ByteBuffer* out, Done done) {
    auto req = std::make_shared<Req>();
    grpc::ByteBuffer copy(in);
    grpc::Status st = grpc::SerializationTraits<Req>::Deserialize(&copy, req.get());
    if (!st.ok()) {
      done(st);
      return;
    }
    auto reply = std::make_shared<Reply>();
    handle(ctx, std::move(req), reply.get(), [reply, out, done = std::move(done)](grpc::Status st) {
      bool own = false;
      if (st.ok()) st = grpc::SerializationTraits<Reply>::Serialize(*reply, out, &own);
      done(st);
    });
  };
}

// A handler that blocks (the database) runs on `pool`, off gRPC's callback threads.
template <class Req, class Reply>
RawHandler OnPool(HandlerPool& pool, std::shared_ptr<WorkerService> w,
                  grpc::Status (WorkerService::*method)(const grpc::ServerContextBase&, const Req&,
                                                        Reply*)) {
  return Raw<Req, Reply>([&pool, w, method](const grpc::ServerContextBase& ctx,
                                            std::shared_ptr<const Req> req, Reply* reply,
                                            Done done) {
    pool.Run([&ctx, w, method, req, reply, done = std::move(done)] {
      done(((*w).*method)(ctx, *req, reply));
    });
  });
}

}  // namespace

std::unique_ptr<grpc::CallbackGenericService> MakeWorkerService(Coordinator& coordinator,
                                                                const Credentials& credentials,
                                                                HandlerPool& pool,
                                                                HealthService& health) {
  auto w = std::make_shared<WorkerService>(coordinator, credentials, pool);
  const std::string p = kMethodPrefix;
  std::map<std::string, RawMethod> m;
  m[p + "Register"] = {kMaxSmallRequest, OnPool(pool, w, &WorkerService::Register)};
  m[p + "Ping"] = {kMaxSmallRequest, OnPool(pool, w, &WorkerService::Ping)};
  m[p + "Lease"] = {kMaxSmallRequest,
                    Raw<v1::LeaseRequest, v1::LeaseReply>(
                        [w](const grpc::ServerContextBase& ctx,
                            std::shared_ptr<const v1::LeaseRequest> q, v1::LeaseReply* reply,
                            Done done) { w->Lease(ctx, *q, reply, std::move(done)); })};
  m[p + "Renew"] = {kMaxSmallRequest, OnPool(pool, w, &WorkerService::Renew)};
  m[p + "Release"] = {kMaxSmallRequest, OnPool(pool, w, &WorkerService::Release)};
  m[p + "FetchKernels"] = {kMaxSmallRequest, OnPool(pool, w, &WorkerService::FetchKernels)};
  m[p + "PutKernels"] = {0, OnPool(pool, w, &WorkerService::PutKernels)};
  m[p + "Report"] = {0, Raw<v1::ReportRequest, v1::ReportReply>(
                            [w](const grpc::ServerContextBase&,
                                std::shared_ptr<const v1::ReportRequest> q, v1::ReportReply*,
                                Done done) { w->Report(*q, std::move(done)); })};
  return MakeUnreadRefusalService(
      [w](const grpc::ServerContextBase& ctx, const std::string& method) {
        return w->Authorize(ctx, method);
      },
      std::move(m),
      [&health](grpc::GenericCallbackServerContext* ctx) { return health.CreateReactor(ctx); });
}

}  // namespace tuna::coordinator
