#include "coordinator/in_process_client.h"

namespace tuna::coordinator {
namespace {

class InProcessClient final : public WorkerApi {
 public:
  explicit InProcessClient(Coordinator& c) : c_(c) {}
  absl::StatusOr<Registered> Register(const WorkerRegistration& w) override {
    return c_.Register(w);
  }
  absl::StatusOr<std::vector<LeasedJob>> Lease(const LeaseRequest& r) override {
    return c_.LeaseJobs(r);
  }
  absl::StatusOr<std::vector<coordinator::Lease>> Renew(
      const std::string& id, const std::vector<coordinator::Lease>& l) override {
    return c_.Renew(id, l);
  }
  absl::Status Report(const coordinator::Report& r) override { return c_.SubmitReport(r); }
  absl::StatusOr<int64_t> Release(const std::string& id,
                                  const std::vector<coordinator::Lease>& l) override {
    return c_.Release(id, l);
  }
  absl::StatusOr<std::vector<int64_t>> PutKernels(const std::string& id, int64_t job,
                                                  int64_t attempt,
                                                  const std::vector<KernelBlob>& k) override {
    return c_.PutKernels(id, job, attempt, k);
  }
  absl::StatusOr<std::vector<KernelBlob>> FetchKernels(const std::string& id, int64_t job,
                                                       int64_t attempt) override {
    return c_.FetchKernels(id, job, attempt);
  }

 private:
  Coordinator& c_;
};

}  // namespace

std::unique_ptr<WorkerApi> MakeInProcessClient(Coordinator& coordinator) {
  return std::make_unique<InProcessClient>(coordinator);
}

}  // namespace tuna::coordinator
