#include <algorithm>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/backend/test_kernels.h"
#include "tuner_core/backend/hip/hip_backend.h"

namespace tuna::backend {
namespace {

using testing::GpuRequest;

TEST_CASE("hiprtc compiles the portable kernel for gfx908 and gfx90a") {
  auto backend = NewHipBackend(HipBackendOptions::FromEnv());
  if (!backend->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + backend->CompilerStatus().ToString());
    return;
  }
  for (const char* arch : {"gfx908", "gfx90a"}) {
    absl::StatusOr<CodeObject> code = backend->Compile(GpuRequest(arch));
    INFO(arch << ": " << code.status().ToString());
    REQUIRE(code.ok());
    CHECK(code->kind == BackendKind::kHip);
    CHECK(code->arch == arch);
    REQUIRE(code->bytes.size() > 64);
    CHECK(code->bytes.compare(0, 4, "\x7f" "ELF") == 0);
    CHECK(code->compiler_version.rfind("hiprtc ", 0) == 0);
  }
}

TEST_CASE("hiprtc reports targets it cannot compile as not supported, without crashing") {
  auto backend = NewHipBackend(HipBackendOptions::FromEnv());
  if (!backend->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + backend->CompilerStatus().ToString());
    return;
  }
  if (backend->CompilerVersion().rfind("hiprtc 5.", 0) != 0) {
    WARN("skipped: gfx942 may be supported by " << backend->CompilerVersion());
    return;
  }
  absl::StatusOr<CodeObject> code = backend->Compile(GpuRequest("gfx942"));
  REQUIRE(code.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(code.status().message().find("not supported") != std::string::npos);
  // Cached: the second answer is the same.
  CHECK(backend->Compile(GpuRequest("gfx942")).status().code() == absl::StatusCode::kUnimplemented);

  std::vector<std::string> targets = backend->CompileTargets();
  CHECK(std::count(targets.begin(), targets.end(), "gfx90a") == 1);
  CHECK(std::count(targets.begin(), targets.end(), "gfx908") == 1);
  CHECK(std::count(targets.begin(), targets.end(), "gfx942") == 0);
}

TEST_CASE("hiprtc compile errors carry the log; bad targets are invalid") {
  auto backend = NewHipBackend(HipBackendOptions::FromEnv());
  if (!backend->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + backend->CompilerStatus().ToString());
    return;
  }
  CompileRequest req = GpuRequest("gfx90a");
  req.options.clear();
  absl::StatusOr<CodeObject> code = backend->Compile(req);
  REQUIRE(code.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(code.status().message().find("TUNA_SCALE must be defined") != std::string::npos);

  req = GpuRequest("gfx90a");
  req.entries.push_back("missing_entry");
  code = backend->Compile(req);
  REQUIRE(code.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(code.status().message().find("missing_entry") != std::string::npos);

  CHECK(backend->Compile(GpuRequest("sm_90")).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(backend->Compile(GpuRequest("gfx9; rm -rf /")).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("hip without a GPU: devices are unavailable, not a crash") {
  auto backend = NewHipBackend(HipBackendOptions::FromEnv());
  if (backend->DriverStatus().ok()) {
    WARN("a HIP device is present: nothing to check here");
    return;
  }
  CHECK(backend->ListDevices().status().code() == backend->DriverStatus().code());
  CHECK_FALSE(backend->OpenDevice(0).ok());
}

// ROCm 5.2's in-process compiler (comgr + clang) keeps LLVM's command-line option registry in
// process-global state; two compiles at once can abort the process ("Option 'h' registered more
// than once"). The backend must serialise them, whichever backend object they come through.
TEST_CASE("hiprtc compiles from many threads and two backends at once") {
  auto a = NewHipBackend(HipBackendOptions::FromEnv());
  auto b = NewHipBackend(HipBackendOptions::FromEnv());
  if (!a->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("compiler unavailable: " + a->CompilerStatus().ToString());
    return;
  }
  constexpr int kThreads = 8;
  std::vector<absl::Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const Backend& backend = (i % 2 == 0) ? *a : *b;
      absl::StatusOr<CodeObject> code = backend.Compile(GpuRequest(i % 4 < 2 ? "gfx90a" : "gfx908"));
      results[i] = code.status();
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& st : results) CHECK(st.ok());
}

}  // namespace
}  // namespace tuna::backend
