#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/backend/test_kernels.h"
#include "tuner_core/backend/cuda/cuda_backend.h"

namespace tuna::backend {
namespace {

using testing::GpuRequest;

TEST_CASE("nvrtc compiles the portable kernel to a cubin and to PTX") {
  auto backend = NewCudaBackend(CudaBackendOptions::FromEnv());
  if (!backend->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + backend->CompilerStatus().ToString());
    return;
  }
  absl::StatusOr<CodeObject> cubin = backend->Compile(GpuRequest("sm_90"));
  INFO(cubin.status().ToString());
  REQUIRE(cubin.ok());
  CHECK(cubin->kind == BackendKind::kCuda);
  CHECK(cubin->bytes.compare(0, 4, "\x7f" "ELF") == 0);
  CHECK(cubin->compiler_version.rfind("nvrtc ", 0) == 0);

  absl::StatusOr<CodeObject> ptx = backend->Compile(GpuRequest("compute_90"));
  INFO(ptx.status().ToString());
  REQUIRE(ptx.ok());
  CHECK(ptx->bytes.find(".entry vector_add") != std::string::npos);
  CHECK(ptx->bytes.back() == '\0');  // cuModuleLoadData needs the terminator

  absl::StatusOr<CodeObject> sm80 = backend->Compile(GpuRequest("sm_80"));
  CHECK(sm80.ok());

  std::vector<std::string> targets = backend->CompileTargets();
  CHECK(std::find(targets.begin(), targets.end(), "sm_90") != targets.end());
}

TEST_CASE("nvrtc compile errors carry the log; unknown targets are refused") {
  auto backend = NewCudaBackend(CudaBackendOptions::FromEnv());
  if (!backend->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + backend->CompilerStatus().ToString());
    return;
  }
  CompileRequest req = GpuRequest("sm_90");
  req.options.clear();
  absl::StatusOr<CodeObject> code = backend->Compile(req);
  REQUIRE(code.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(code.status().message().find("TUNA_SCALE must be defined") != std::string::npos);

  req = GpuRequest("sm_90");
  req.entries.push_back("missing_entry");
  CHECK(backend->Compile(req).status().code() == absl::StatusCode::kFailedPrecondition);

  CHECK(backend->Compile(GpuRequest("gfx90a")).status().code() == absl::StatusCode::kInvalidArgument);
  // sm_20 is long gone from NVRTC: not supported rather than a cryptic option error.
  CHECK(backend->Compile(GpuRequest("sm_20")).status().code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("a wrong NVRTC path override falls back to the search, a wrong driver is unavailable") {
  CudaBackendOptions options = CudaBackendOptions::FromEnv();
  options.driver_path = "/nonexistent/libcuda.so.1";
  auto backend = NewCudaBackend(options);
  if (backend->DriverStatus().ok()) {
    WARN("libcuda.so.1 is on the loader path: the override is not the only candidate");
    return;
  }
  CHECK(backend->DriverStatus().code() == absl::StatusCode::kUnavailable);
  CHECK(backend->ListDevices().status().code() == absl::StatusCode::kUnavailable);
  CHECK_FALSE(backend->OpenDevice(0).ok());
}

}  // namespace
}  // namespace tuna::backend
