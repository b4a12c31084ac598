#include "catch2/catch.hpp"
#include "tuner_core/backend/registry.h"

namespace tuna::backend {
namespace {

TEST_CASE("detection lists every backend, and the cpu one is usable") {
  std::vector<DetectedBackend> found = DetectBackends(DetectOptions::FromEnv());
  REQUIRE(found.size() == 3);
  CHECK(found[0].kind == BackendKind::kCuda);
  CHECK(found[1].kind == BackendKind::kHip);
  CHECK(found[2].kind == BackendKind::kCpu);
  for (const DetectedBackend& d : found) {
    REQUIRE(d.backend != nullptr);
    CHECK(d.backend->Name() == BackendKindName(d.kind));
    // Unusable means both halves say why.
    if (!d.usable) {
      CHECK_FALSE(d.backend->CompilerStatus().message().empty());
      CHECK_FALSE(d.backend->DriverStatus().message().empty());
    }
  }
  CHECK(found[2].usable);
}

TEST_CASE("a backend whose libraries are all missing is Unavailable with the reason") {
  DetectOptions options = DetectOptions::FromEnv();
  options.cuda.nvrtc_path = "/nonexistent/libnvrtc.so";
  options.cuda.driver_path = "/nonexistent/libcuda.so.1";
  // Only meaningful where the default search finds neither library.
  auto backend = OpenBackend(BackendKind::kCuda, options);
  if (backend.ok()) {
    WARN("cuda libraries found by the default search: " << (*backend)->CompilerVersion());
    return;
  }
  CHECK(backend.status().code() == absl::StatusCode::kUnavailable);
  CHECK(backend.status().message().find("/nonexistent/libcuda.so.1") != std::string::npos);
}

TEST_CASE("backend names parse") {
  CHECK(*ParseBackendKind("cuda") == BackendKind::kCuda);
  CHECK(*ParseBackendKind("hip") == BackendKind::kHip);
  CHECK(*ParseBackendKind("cpu") == BackendKind::kCpu);
  CHECK(ParseBackendKind("opencl").status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tuna::backend
