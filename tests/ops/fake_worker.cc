// A stand-in worker for operations demos and tests (docs/status-watch.txt was captured with
// it): registers with a `tuna coordinator` over gRPC and loops lease → (sleep) → report for
// compile and eval steps without running any kernel. Eval reports carry no result (evaluated
// without a winner), and every `--fail-every`-th eval job is reported as a permanent failure,
// so that `tuna status --watch` shows progress, workers with jobs, and failure reasons.
//   fake_worker ADDR HOST ARCH NUM_CU [--delay-ms N] [--fail-every N] [--max-jobs N] [--token T]
#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "worker/coordinator_client.h"

int main(int argc, char** argv) {
  using namespace tuna;
  if (argc < 5) {
    std::cerr << "usage: fake_worker ADDR HOST ARCH NUM_CU [--delay-ms N] [--fail-every N] "
                 "[--max-jobs N] [--token T]\n";
    return 2;
  }
  int delay_ms = 300, fail_every = 0, max_jobs = 2;
  std::string token;
  for (int k = 5; k + 1 < argc; k += 2) {
    const std::string f = argv[k];
    if (f == "--delay-ms") delay_ms = std::atoi(argv[k + 1]);
    if (f == "--fail-every") fail_every = std::atoi(argv[k + 1]);
    if (f == "--max-jobs") max_jobs = std::atoi(argv[k + 1]);
    if (f == "--token") token = argv[k + 1];
  }
  auto client = worker::MakeGrpcClient({argv[1], token});
  coordinator::Device dev{"cpu", argv[3], std::atoi(argv[4]), 0, 0};
  absl::StatusOr<coordinator::Registered> reg;
  for (int k = 0; k < 100; ++k) {
    reg = client->Register({coordinator::kProtocolVersion, argv[2], "fake", {dev}});
    if (reg.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  if (!reg.ok()) {
    std::cerr << "fake_worker: " << reg.status() << "\n";
    return 1;
  }
  int64_t evals = 0;
  int idle = 0;
  while (idle < 20) {
    bool any = false;
    for (jobs::JobStep step : {jobs::JobStep::kEval, jobs::JobStep::kCompile}) {
      coordinator::LeaseRequest req;
      req.worker_id = reg->worker_id;
      req.step = step;
      req.compile_backends = {"cpu"};
      req.device = dev;
      req.max_jobs = max_jobs;
      req.wait = absl::Milliseconds(200);
      auto jobs = client->Lease(req);
      if (!jobs.ok() || jobs->empty()) continue;
      any = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      for (const auto& j : *jobs) {
        coordinator::Report rep;
        rep.worker_id = reg->worker_id;
        rep.job_id = j.job_id;
        rep.attempt = j.attempt;
        rep.step = step;
        rep.succeeded = true;
        if (step == jobs::JobStep::kEval && fail_every > 0 && ++evals % fail_every == 0) {
          rep.succeeded = false;
          rep.retryable = false;
          rep.error = evals % (2 * fail_every) == 0
                          ? "Incorrect: every candidate exceeded the verification tolerance"
                          : "CompileFailed: no candidate built for this problem";
        }
        if (auto st = client->Report(rep); !st.ok()) std::cerr << "report: " << st << "\n";
      }
    }
    idle = any ? 0 : idle + 1;
  }
  return 0;
}
