#include "coordinator/health_service.h"

#include <cstdint>
#include <string>
#include <utility>

#include "proto/health.pb.h"

namespace tuna::coordinator {
namespace {

using grpc::health::v1::HealthCheckResponse;

grpc::ByteBuffer Encode(bool serving) {
  HealthCheckResponse reply;
  reply.set_status(serving ? HealthCheckResponse::SERVING : HealthCheckResponse::NOT_SERVING);
  grpc::Slice bytes(reply.SerializeAsString());
  return grpc::ByteBuffer(&bytes, 1);
}

// Check: the status, at once; the request is never asked for, so never read.
class HealthCheck final : public grpc::ServerGenericBidiReactor {
 public:
  explicit HealthCheck(bool serving) : reply_(Encode(serving)) {
    StartWriteAndFinish(&reply_, grpc::WriteOptions(), grpc::Status::OK);
  }
  void OnDone() override { delete this; }

 private:
  grpc::ByteBuffer reply_;
};

}  // namespace

// Watch: the status, then each change, one write at a time (a change that comes while a write
// is in flight is sent after it, if still a change). Owned by itself (self_) until gRPC is done
// with it, and by HealthService::LiveWatches' callers while they tell it of a change; never
// calls gRPC after it finished.
class HealthWatch final : public grpc::ServerGenericBidiReactor {
 public:
  static HealthWatch* Start(std::shared_ptr<HealthWatch> w, bool serving, uint64_t version,
                            bool last) {
    w->self_ = w;
    w->Tell(serving, version, last);
    return w.get();
  }

  // The status as of `version` (older news is dropped); `last`: end the call once it is sent.
  void Tell(bool serving, uint64_t version, bool last) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (version < version_) return;
      version_ = version;
      wanted_ = serving;
      end_ = end_ || last;
    }
    Pump();
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      writing_ = false;
      if (!ok) cancelled_ = true;  // the call ended under it: nothing more can be sent
    }
    Pump();
  }

  void OnCancel() override {
    {
      std::lock_guard<std::mutex> l(mu_);
      cancelled_ = true;
    }
    Pump();
  }

  void OnDone() override {
    std::shared_ptr<HealthWatch> last_owner = std::move(self_);  // may destroy this, last
  }

 private:
  // Starts the next write, or the Finish, when one is due and nothing is in flight. gRPC is
  // called outside mu_ (a reaction may run inline on this thread).
  void Pump() {
    bool write = false;
    grpc::Status finish;
    {
      std::lock_guard<std::mutex> l(mu_);
      if (writing_ || finished_) return;
      if (!cancelled_ && (!sent_ || sent_serving_ != wanted_)) {
        sent_ = true;
        sent_serving_ = wanted_;
        reply_ = Encode(wanted_);
        writing_ = write = true;
      } else if (end_ || cancelled_) {
        finished_ = true;
        finish = cancelled_ ? grpc::Status::CANCELLED : grpc::Status::OK;
      } else {
        return;
      }
    }
    if (write) {
      StartWrite(&reply_);
    } else {
      Finish(finish);
    }
  }

  std::mutex mu_;
  uint64_t version_ = 0;         // guarded by mu_
  bool wanted_ = false;          // guarded by mu_
  bool end_ = false;             // guarded by mu_
  bool cancelled_ = false;       // guarded by mu_
  bool sent_ = false;            // guarded by mu_
  bool sent_serving_ = false;    // guarded by mu_
  bool writing_ = false;         // guarded by mu_
  bool finished_ = false;        // guarded by mu_
  grpc::ByteBuffer reply_;       // written under mu_ while no write is in flight
  std::shared_ptr<HealthWatch> self_;
};

void HealthService::SetServing(bool serving) {
  uint64_t version;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (shut_down_) return;
    serving_ = serving;
    version = ++version_;
  }
  for (const auto& w : LiveWatches()) w->Tell(serving, version, /*last=*/false);
}

void HealthService::Shutdown() {
  uint64_t version;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (shut_down_) return;
    shut_down_ = true;
    serving_ = false;
    version = ++version_;
  }
  for (const auto& w : LiveWatches()) w->Tell(false, version, /*last=*/true);
}

bool HealthService::serving() const {
  std::lock_guard<std::mutex> l(mu_);
  return serving_;
}

std::vector<std::shared_ptr<HealthWatch>> HealthService::LiveWatches() {
  std::lock_guard<std::mutex> l(mu_);
  std::vector<std::shared_ptr<HealthWatch>> live;
  std::vector<std::weak_ptr<HealthWatch>> kept;
  for (const auto& weak : watches_) {
    if (auto w = weak.lock()) {
      live.push_back(std::move(w));
      kept.push_back(weak);
    }
  }
  watches_ = std::move(kept);
  return live;
}

grpc::ServerGenericBidiReactor* HealthService::CreateReactor(
    grpc::GenericCallbackServerContext* ctx) {
  const bool check = ctx->method() == kCheck;
  if (!check && ctx->method() != kWatch) return nullptr;
  std::lock_guard<std::mutex> l(mu_);
  if (check) return new HealthCheck(serving_);
  auto w = std::make_shared<HealthWatch>();
  watches_.push_back(w);
  // Started under mu_, so no change is told to it before its first status (no reaction of a
  // Watch takes mu_, and none runs before CreateReactor returns).
  return HealthWatch::Start(std::move(w), serving_, version_, shut_down_);
}

namespace {

class HealthOnly final : public grpc::CallbackGenericService {
 public:
  explicit HealthOnly(HealthService& health) : health_(health) {}
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* ctx) override {
    if (grpc::ServerGenericBidiReactor* r = health_.CreateReactor(ctx)) return r;
    return grpc::CallbackGenericService::CreateReactor(ctx);  // UNIMPLEMENTED, unread
  }

 private:
  HealthService& health_;
};

}  // namespace

std::unique_ptr<grpc::CallbackGenericService> MakeHealthOnlyService(HealthService& health) {
  return std::make_unique<HealthOnly>(health);
}

}  // namespace tuna::coordinator
