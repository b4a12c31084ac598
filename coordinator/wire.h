// Conversions between the wire messages (proto/tuna.proto) and the types of coordinator/api.h,
// shared by the service (server side), the gRPC worker client and the executor's pipe. Pure
// functions.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "coordinator/api.h"
#include "proto/tuna.pb.h"

namespace tuna::coordinator {

v1::Step ToWire(JobStep step);
absl::StatusOr<JobStep> FromWire(v1::Step step);  // InvalidArgument for UNSPECIFIED

void ToWire(const Device& d, v1::DeviceDescription* out);
Device FromWire(const v1::DeviceDescription& d);

void ToWire(const LeaseRequest& r, v1::LeaseRequest* out);
absl::StatusOr<LeaseRequest> FromWire(const v1::LeaseRequest& r);

void ToWire(const LeasedJob& j, v1::LeasedJob* out);
absl::StatusOr<LeasedJob> FromWire(const v1::LeasedJob& j);

void ToWire(const Report& r, v1::ReportRequest* out);
absl::StatusOr<Report> FromWire(const v1::ReportRequest& r);

void ToWire(const KernelBlob& k, v1::Kernel* out);
KernelBlob FromWire(const v1::Kernel& k);

}  // namespace tuna::coordinator
