#include "coordinator/wire.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tuna::coordinator {

v1::Step ToWire(JobStep step) {
  return step == JobStep::kCompile ? v1::STEP_COMPILE : v1::STEP_EVAL;
}

absl::StatusOr<JobStep> FromWire(v1::Step step) {
  switch (step) {
    case v1::STEP_COMPILE: return JobStep::kCompile;
    case v1::STEP_EVAL: return JobStep::kEval;
    default: return absl::InvalidArgumentError("step must be STEP_COMPILE or STEP_EVAL");
  }
}

void ToWire(const Device& d, v1::DeviceDescription* out) {
  out->set_backend(d.backend);
  out->set_arch(d.arch);
  out->set_num_cu(d.num_cu);
  out->set_index(d.index);
  out->set_memory_bytes(d.memory_bytes);
}

Device FromWire(const v1::DeviceDescription& d) {
  return Device{d.backend(), d.arch(), d.num_cu(), d.index(), d.memory_bytes()};
}

void ToWire(const LeaseRequest& r, v1::LeaseRequest* out) {
  out->set_worker_id(r.worker_id);
  out->set_step(ToWire(r.step));
  for (const auto& b : r.compile_backends) out->add_compile_backends(b);
  if (r.device) ToWire(*r.device, out->mutable_device());
  out->set_max_jobs(static_cast<uint32_t>(r.max_jobs));
  out->set_wait_ms(static_cast<uint32_t>(absl::ToInt64Milliseconds(r.wait)));
}

absl::StatusOr<LeaseRequest> FromWire(const v1::LeaseRequest& r) {
  LeaseRequest out;
  out.worker_id = r.worker_id();
  auto step = FromWire(r.step());
  if (!step.ok()) return step.status();
  out.step = *step;
  for (const auto& b : r.compile_backends()) out.compile_backends.push_back(b);
  if (r.has_device()) out.device = FromWire(r.device());
  if (r.max_jobs() > 1024) return absl::InvalidArgumentError("max_jobs too large");
  out.max_jobs = static_cast<int>(r.max_jobs());
  out.wait = absl::Milliseconds(r.wait_ms());
  return out;
}

void ToWire(const LeasedJob& j, v1::LeasedJob* out) {
  out->set_job_id(j.job_id);
  out->set_attempt(j.attempt);
  out->set_step(ToWire(j.step));
  out->set_kind(j.kind);
  out->set_session_id(j.session_id);
  out->set_arch(j.arch);
  out->set_num_cu(j.num_cu);
  out->set_backend(j.backend);
  out->set_config_id(j.config_id);
  out->set_driver(j.driver);
  out->set_solver_id(j.solver_id);
  out->set_solver_name(j.solver_name);
  out->set_tuned_params(j.tuned_params);
  out->set_prior_params(j.prior_params);
  out->set_find_follows(j.find_follows);
  out->set_rival_ms(j.rival_ms);
  for (const search::TransferRun& r : j.transfer) {
    v1::TransferRun* run = out->add_transfer();
    run->set_driver(r.driver);
    for (const search::TransferTime& t : r.times) {
      v1::TransferTime* time = run->add_times();
      time->set_params(t.params);
      time->set_ms(t.ms);
    }
  }
  out->set_lease_expires_unix_ms(absl::ToUnixMillis(j.lease_expires));
}

absl::StatusOr<LeasedJob> FromWire(const v1::LeasedJob& j) {
  LeasedJob out;
  out.job_id = j.job_id();
  out.attempt = j.attempt();
  auto step = FromWire(j.step());
  if (!step.ok()) return step.status();
  out.step = *step;
  out.kind = j.kind();
  out.session_id = j.session_id();
  out.arch = j.arch();
  out.num_cu = j.num_cu();
  out.backend = j.backend();
  out.config_id = j.config_id();
  out.driver = j.driver();
  out.solver_id = j.solver_id();
  out.solver_name = j.solver_name();
  out.tuned_params = j.tuned_params();
  out.prior_params = j.prior_params();
  out.find_follows = j.find_follows();
  out.rival_ms = j.rival_ms();
  for (const v1::TransferRun& r : j.transfer()) {
    search::TransferRun& run = out.transfer.emplace_back();
    run.driver = r.driver();
    for (const v1::TransferTime& t : r.times()) run.times.push_back({t.params(), t.ms()});
  }
  out.lease_expires = absl::FromUnixMillis(j.lease_expires_unix_ms());
  return out;
}

void ToWire(const Report& r, v1::ReportRequest* out) {
  out->set_worker_id(r.worker_id);
  out->set_job_id(r.job_id);
  out->set_attempt(r.attempt);
  out->set_step(ToWire(r.step));
  out->set_succeeded(r.succeeded);
  out->set_error(r.error);
  out->set_retryable(r.retryable);
  out->set_executor_killed(r.executor_killed);
  out->set_blame(r.blame == jobs::Blame::kHost          ? v1::BLAME_HOST
                 : r.blame == jobs::Blame::kUnsupported ? v1::BLAME_UNSUPPORTED
                                                        : v1::BLAME_JOB);
  for (const auto& k : r.kernels) {
    auto* l = out->add_kernels();
    l->set_kernel_id(k.kernel_id);
    l->set_build_key(k.build_key);
  }
  out->set_has_result(r.has_result);
  out->set_params(r.params);
  out->set_kernel_time_ms(r.kernel_time_ms);
  out->set_workspace_bytes(r.workspace_bytes);
  out->set_candidates_tried(r.candidates_tried);
  out->set_verified(r.verified);
  out->set_finished(r.finished);
  for (const auto& s : r.samples) {
    auto* w = out->add_samples();
    w->set_params(s.params);
    w->set_has_time(s.time_ms.has_value());
    w->set_time_ms(s.time_ms.value_or(0));
    w->set_status(s.status);
    w->set_error(s.error);
  }
  auto* t = out->mutable_timings();
  t->set_wall_seconds(r.timings.wall_seconds);
  t->set_device_seconds(r.timings.device_seconds);
  t->set_kernel_seconds(r.timings.kernel_seconds);
}

absl::StatusOr<Report> FromWire(const v1::ReportRequest& r) {
  Report out;
  out.worker_id = r.worker_id();
  out.job_id = r.job_id();
  out.attempt = r.attempt();
  auto step = FromWire(r.step());
  if (!step.ok()) return step.status();
  out.step = *step;
  out.succeeded = r.succeeded();
  out.error = r.error();
  out.retryable = r.retryable();
  out.executor_killed = r.executor_killed();
  switch (r.blame()) {
    case v1::BLAME_JOB: out.blame = jobs::Blame::kJob; break;
    case v1::BLAME_HOST: out.blame = jobs::Blame::kHost; break;
    case v1::BLAME_UNSUPPORTED: out.blame = jobs::Blame::kUnsupported; break;
    default: return absl::InvalidArgumentError(absl::StrCat("unknown blame ", r.blame()));
  }
  for (const auto& k : r.kernels()) out.kernels.push_back({k.kernel_id(), k.build_key()});
  out.has_result = r.has_result();
  out.params = r.params();
  out.kernel_time_ms = r.kernel_time_ms();
  out.workspace_bytes = r.workspace_bytes();
  out.candidates_tried = r.candidates_tried();
  out.verified = r.verified();
  out.finished = r.finished();
  for (const auto& s : r.samples()) {
    Sample x;
    x.params = s.params();
    if (s.has_time()) x.time_ms = s.time_ms();
    x.status = s.status();
    x.error = s.error();
    out.samples.push_back(std::move(x));
  }
  out.timings = {r.timings().wall_seconds(), r.timings().device_seconds(),
                 r.timings().kernel_seconds()};
  return out;
}

void ToWire(const KernelBlob& k, v1::Kernel* out) {
  out->set_build_key(k.build_key);
  out->set_arch(k.arch);
  out->set_compiler(k.compiler);
  out->set_kernel_name(k.kernel_name);
  out->set_options(k.options);
  out->set_entries(k.entries);
  out->set_code_object(k.code_object);
  out->set_built_by(k.built_by);
}

KernelBlob FromWire(const v1::Kernel& k) {
  return KernelBlob{k.build_key(), k.arch(),        k.compiler(), k.kernel_name(),
                    k.options(),   k.entries(),     k.code_object(), k.built_by()};
}

}  // namespace tuna::coordinator
