#include "coordinator/unread_refusal.h"

#include <string>
#include <utility>

namespace tuna::coordinator {
namespace {

// One call: refuse at once, or read the one request message, hand it to its handler, and write
// the one reply and finish when the handler answers. Deletes itself when gRPC is done with it
// (never before the handler has answered: OnDone follows Finish).
class Call final : public grpc::ServerGenericBidiReactor {
 public:
  Call(grpc::GenericCallbackServerContext* ctx, const Authorize& authorize,
       const std::map<std::string, RawMethod>& methods)
      : ctx_(ctx) {
    auto m = methods.find(ctx->method());
    if (m == methods.end()) {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method " + ctx->method()));
      return;
    }
    if (grpc::Status st = authorize(*ctx, ctx->method()); !st.ok()) {
      Finish(st);  // nothing of the request was asked for: it is never read
      return;
    }
    method_ = &m->second;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "no request message"));
      return;
    }
    if (method_->max_request_bytes > 0 && request_.Length() > method_->max_request_bytes) {
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "request of " + std::to_string(request_.Length()) +
                              " bytes too large for " + ctx_->method() + " (at most " +
                              std::to_string(method_->max_request_bytes) + ")"));
      return;
    }
    method_->handle(*ctx_, request_, &reply_, [this](grpc::Status st) {
      if (st.ok()) {
        StartWriteAndFinish(&reply_, grpc::WriteOptions(), st);
      } else {
        Finish(st);
      }
    });
  }

  void OnDone() override { delete this; }

 private:
  grpc::GenericCallbackServerContext* ctx_;
  const RawMethod* method_ = nullptr;
  grpc::ByteBuffer request_, reply_;
};

class Service final : public grpc::CallbackGenericService {
 public:
  Service(Authorize authorize, std::map<std::string, RawMethod> methods, OpenMethods open)
      : authorize_(std::move(authorize)), methods_(std::move(methods)), open_(std::move(open)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    if (!methods_.contains(ctx->method()) && open_) {
      if (grpc::ServerGenericBidiReactor* r = open_(ctx)) return r;
    }
    return new Call(ctx, authorize_, methods_);
  }

 private:
  Authorize authorize_;
  std::map<std::string, RawMethod> methods_;
  OpenMethods open_;
};

}  // namespace

std::unique_ptr<grpc::CallbackGenericService> MakeUnreadRefusalService(
    Authorize authorize, std::map<std::string, RawMethod> methods, OpenMethods open) {
  return std::make_unique<Service>(std::move(authorize), std::move(methods), std::move(open));
}

}  // namespace tuna::coordinator
