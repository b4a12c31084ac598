// Checks tuner_core/backend/cuda/cuda_api.h against the real CUDA headers: the system g++
// compiles two generated files (one per mode of cuda_api.h) with static_asserts on every
// constant and every function signature. Skips when /usr/local/cuda/include is absent (a
// fresh Debian machine); override with TUNA_CUDA_INCLUDE.
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"

namespace {

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string CudaInclude() {
  const char* env = std::getenv("TUNA_CUDA_INCLUDE");
  return env && *env ? env : "/usr/local/cuda/include";
}

// Runs a shell command line, returns (exit code, output).
std::pair<int, std::string> Run(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string TmpDir() {
  const char* t = std::getenv("TEST_TMPDIR");
  return t && *t ? t : "/tmp";
}

// Our header lives in the runfiles tree (a data dependency); cwd is the workspace root there.
const char kHeader[] = "tuner_core/backend/cuda/cuda_api.h";

int Compile(const std::string& file, const std::string& text, std::string* log) {
  std::ofstream(file) << text;
  auto [code, out] = Run("g++ -std=c++17 -fsyntax-only -I. -I" + CudaInclude() + " " + file);
  *log = out;
  return code;
}

}  // namespace

TEST_CASE("cuda_api.h agrees with cuda.h and nvrtc.h") {
  if (!Exists(CudaInclude() + "/cuda.h") || !Exists(CudaInclude() + "/nvrtc.h")) {
    ::tuna::testing::SkipUnlessCi("no cuda.h/nvrtc.h in " + CudaInclude());
    return;
  }
  REQUIRE(Exists(kHeader));

  // Signatures: in system-types mode every PFN_x must be exactly decltype(&::x).
  std::string signatures = R"(
#include <cuda.h>
#include <nvrtc.h>
#include <type_traits>
#define TUNA_CUDA_API_SYSTEM_TYPES 1
#include "tuner_core/backend/cuda/cuda_api.h"
namespace api = tuna::cuda_api;
#define CHECK_FN(name, params) \
  static_assert(std::is_same_v<api::PFN_##name, decltype(&::name)>, #name " differs from the CUDA headers");
TUNA_CUDA_DRIVER_FUNCTIONS(CHECK_FN)
TUNA_NVRTC_FUNCTIONS(CHECK_FN)
static_assert(std::is_same_v<api::PFN_nvrtcGetErrorString, decltype(&::nvrtcGetErrorString)>);
)";
  std::string log;
  INFO(log);
  int code = Compile(TmpDir() + "/cuda_api_signatures.cc", signatures, &log);
  INFO("g++ output:\n" << log);
  CHECK(code == 0);

  // Own-types mode: constants equal, types the same size (ABI), enums int-sized.
  std::string constants = R"(
#include <cuda.h>
#include <nvrtc.h>
#include "tuner_core/backend/cuda/cuda_api.h"
namespace api = tuna::cuda_api;
#define CHECK_CONST(name, value) \
  static_assert(api::k##name == static_cast<int>(::name), #name " differs from the CUDA headers");
TUNA_CUDA_CONSTANTS(CHECK_CONST)
static_assert(sizeof(api::CUdeviceptr) == sizeof(::CUdeviceptr));
static_assert(sizeof(api::CUdevice) == sizeof(::CUdevice));
static_assert(sizeof(api::CUresult) == sizeof(::CUresult));
static_assert(sizeof(api::nvrtcResult) == sizeof(::nvrtcResult));
static_assert(sizeof(api::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(api::CUfunction_attribute) == sizeof(::CUfunction_attribute));
static_assert(sizeof(api::CUcontext) == sizeof(::CUcontext));
static_assert(sizeof(api::CUtensorMap) == sizeof(::CUtensorMap) && alignof(api::CUtensorMap) == alignof(::CUtensorMap));
static_assert(sizeof(api::CUtensorMapDataType) == sizeof(::CUtensorMapDataType));
static_assert(sizeof(api::CUtensorMapSwizzle) == sizeof(::CUtensorMapSwizzle));
)";
  code = Compile(TmpDir() + "/cuda_api_constants.cc", constants, &log);
  INFO("g++ output:\n" << log);
  CHECK(code == 0);
}

TEST_CASE("the header check can fail: a wrong declaration is caught") {
  if (!Exists(CudaInclude() + "/cuda.h")) {
    ::tuna::testing::SkipUnlessCi("no cuda.h in " + CudaInclude());
    return;
  }
  std::string wrong = R"(
#include <cuda.h>
#include <type_traits>
using Wrong = CUresult (*)(int flags);  // cuInit takes unsigned int
static_assert(std::is_same_v<Wrong, decltype(&::cuInit)>);
)";
  std::string log;
  CHECK(Compile(TmpDir() + "/cuda_api_wrong.cc", wrong, &log) != 0);
}
