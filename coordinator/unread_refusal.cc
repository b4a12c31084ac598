#include "coordinator/unread_refusal.h"

#include <utility>

namespace tuna::coordinator {
namespace {

// One call: refuse at once, or read the one request message, hand it to its handler, and write
// the one reply and finish when the handler answers. Deletes itself when gRPC is done with it
// (never before the handler has answered: OnDone follows Finish).
class Call final : public grpc::ServerGenericBidiReactor {
 public:
  Call(grpc::GenericCallbackServerContext* ctx, const Authorize& authorize,
       const std::map<std::string, RawHandler>& handlers)
      : ctx_(ctx) {
    auto h = handlers.find(ctx->method());
    if (h == handlers.end()) {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method " + ctx->method()));
      return;
    }
    if (grpc::Status st = authorize(*ctx, ctx->method()); !st.ok()) {
      Finish(st);  // nothing of the request was asked for: it is never read
      return;
    }
    handler_ = &h->second;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "no request message"));
      return;
    }
    (*handler_)(*ctx_, request_, &reply_, [this](grpc::Status st) {
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
  const RawHandler* handler_ = nullptr;
  grpc::ByteBuffer request_, reply_;
};

class Service final : public grpc::CallbackGenericService {
 public:
  Service(Authorize authorize, std::map<std::string, RawHandler> handlers)
      : authorize_(std::move(authorize)), handlers_(std::move(handlers)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    return new Call(ctx, authorize_, handlers_);
  }

 private:
  Authorize authorize_;
  std::map<std::string, RawHandler> handlers_;
};

}  // namespace

std::unique_ptr<grpc::CallbackGenericService> MakeUnreadRefusalService(
    Authorize authorize, std::map<std::string, RawHandler> handlers) {
  return std::make_unique<Service>(std::move(authorize), std::move(handlers));
}

}  // namespace tuna::coordinator
