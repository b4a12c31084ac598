#include <cmath>
#include <numeric>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/backend/test_kernels.h"
#include "tuner_core/backend/cpu/cpu_backend.h"

namespace tuna::backend {
namespace {

std::unique_ptr<Backend> Cpu() { return NewCpuBackend(CpuBackendOptions::FromEnv()); }

TEST_CASE("cpu backend compiles, loads and runs a kernel") {
  auto backend = Cpu();
  REQUIRE(backend->CompilerStatus().ok());
  REQUIRE(backend->Kind() == BackendKind::kCpu);
  REQUIRE_FALSE(backend->CompilerVersion().empty());

  absl::StatusOr<std::vector<DeviceInfo>> devices = backend->ListDevices();
  REQUIRE(devices.ok());
  REQUIRE(devices->size() == 1);
  const DeviceInfo& info = devices->front();
  CHECK(info.compute_units >= 1);
  CHECK(info.global_memory_bytes > 0);
  CHECK(info.arch.rfind("cpu-", 0) == 0);

  absl::StatusOr<CodeObject> code = backend->Compile(testing::CpuRequest(info.arch));
  INFO(code.status().ToString());
  REQUIRE(code.ok());
  CHECK(code->kind == BackendKind::kCpu);
  CHECK(code->bytes.compare(0, 4, "\x7f" "ELF") == 0);
  CHECK(code->compiler_version == backend->CompilerVersion());

  // The code object is self-contained: a copy loads in a fresh device.
  CodeObject copy = *code;
  absl::StatusOr<std::unique_ptr<Device>> device = backend->OpenDevice(0);
  REQUIRE(device.ok());
  absl::StatusOr<std::unique_ptr<Module>> module = (*device)->Load(copy);
  INFO(module.status().ToString());
  REQUIRE(module.ok());
  absl::StatusOr<Kernel> kernel = (*module)->GetKernel("vector_add");
  REQUIRE(kernel.ok());

  const int n = 1000;  // not a multiple of the block: the tail is guarded in the kernel
  std::vector<float> a(n), b(n), c(n, -1.0f);
  std::iota(a.begin(), a.end(), 0.0f);
  for (int i = 0; i < n; ++i) b[i] = 0.5f * i;
  auto da = (*device)->Alloc(n * sizeof(float));
  auto db = (*device)->Alloc(n * sizeof(float));
  auto dc = (*device)->Alloc(n * sizeof(float));
  REQUIRE(da.ok());
  REQUIRE(db.ok());
  REQUIRE(dc.ok());
  REQUIRE((*device)->CopyToDevice(*da, a.data(), n * sizeof(float)).ok());
  REQUIRE((*device)->CopyToDevice(*db, b.data(), n * sizeof(float)).ok());
  REQUIRE((*device)->Memset(*dc, 0, n * sizeof(float)).ok());
  KernelArgs args;
  args.Add(*da).Add(*db).Add(*dc).Add(n);
  REQUIRE(args.size() == 4);
  REQUIRE((*device)->Launch(*kernel, Dim3{(n + 63) / 64}, Dim3{64}, 0, args).ok());
  REQUIRE((*device)->Synchronize().ok());
  REQUIRE((*device)->CopyToHost(c.data(), *dc, n * sizeof(float)).ok());
  for (int i = 0; i < n; ++i) REQUIRE(c[i] == a[i] + 2.0f * b[i]);

  // Shared scratch is private to each block.
  absl::StatusOr<Kernel> reverse = (*module)->GetKernel("smem_reverse");
  REQUIRE(reverse.ok());
  const int block = 50, blocks = 20;
  KernelArgs rargs;
  rargs.Add(*da).Add(*dc);
  REQUIRE((*device)->Launch(*reverse, Dim3{blocks}, Dim3{block}, block * sizeof(float), rargs).ok());
  REQUIRE((*device)->CopyToHost(c.data(), *dc, n * sizeof(float)).ok());
  for (int bi = 0; bi < blocks; ++bi) {
    for (int t = 0; t < block; ++t) REQUIRE(c[bi * block + t] == a[bi * block + block - 1 - t]);
  }

  // Timing: one positive time per repetition.
  absl::StatusOr<std::vector<double>> times = (*device)->TimeLaunches(
      [&] { return (*device)->Launch(*kernel, Dim3{(n + 63) / 64}, Dim3{64}, 0, args); }, 5);
  REQUIRE(times.ok());
  REQUIRE(times->size() == 5);
  for (double t : *times) CHECK(t > 0.0);

  // An untimed step before each run, in order with the runs.
  std::vector<char> order;
  times = (*device)->TimeLaunches([&] { order.push_back('L'); return absl::OkStatus(); }, 3,
                                  [&] { order.push_back('b'); return absl::OkStatus(); });
  REQUIRE(times.ok());
  CHECK(times->size() == 3);
  CHECK(std::string(order.begin(), order.end()) == "bLbLbL");
  CHECK((*device)->TimeLaunches([] { return absl::OkStatus(); }, 0).status().code() ==
        absl::StatusCode::kInvalidArgument);

  // Device-to-device copies, range-checked.
  REQUIRE((*device)->CopyOnDevice(*dc, *da, n * sizeof(float)).ok());
  REQUIRE((*device)->CopyToHost(c.data(), *dc, n * sizeof(float)).ok());
  CHECK(c == a);
  auto small = (*device)->Alloc(16);
  REQUIRE(small.ok());
  CHECK((*device)->CopyOnDevice(*small, *da, 32).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("cpu compile errors carry the compiler log") {
  auto backend = Cpu();
  REQUIRE(backend->CompilerStatus().ok());
  CompileRequest req = testing::CpuRequest("cpu-x86_64");
  req.options.clear();  // TUNA_SCALE missing → the source's #error
  absl::StatusOr<CodeObject> code = backend->Compile(req);
  REQUIRE(code.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(code.status().message().find("TUNA_SCALE must be defined") != std::string::npos);

  req = testing::CpuRequest("cpu-x86_64");
  req.source += "\nthis is not C++;\n";
  code = backend->Compile(req);
  REQUIRE(code.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(code.status().message().find("kernel.cc") != std::string::npos);

  req = testing::CpuRequest("cpu-x86_64");
  req.entries.push_back("no_such_kernel");
  code = backend->Compile(req);
  REQUIRE(code.status().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(code.status().message().find("no_such_kernel") != std::string::npos);
}

TEST_CASE("cpu compile rejects bad requests") {
  auto backend = Cpu();
  CompileRequest req = testing::CpuRequest("cpu-pentium2");
  CHECK(backend->Compile(req).status().code() == absl::StatusCode::kInvalidArgument);
  req = testing::CpuRequest("cpu-x86_64");
  req.options.push_back("-o/etc/passwd");
  CHECK(backend->Compile(req).status().code() == absl::StatusCode::kInvalidArgument);
  req = testing::CpuRequest("cpu-x86_64");
  req.source.clear();
  CHECK(backend->Compile(req).status().code() == absl::StatusCode::kInvalidArgument);
  req = testing::CpuRequest("cpu-x86_64");
  req.headers.push_back({"../escape.h", "int x;"});
  CHECK(backend->Compile(req).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("cpu device refuses foreign code objects and out-of-range copies") {
  auto backend = Cpu();
  auto device = backend->OpenDevice(0);
  REQUIRE(device.ok());
  CHECK(backend->OpenDevice(1).status().code() == absl::StatusCode::kInvalidArgument);

  CodeObject cuda_code;
  cuda_code.kind = BackendKind::kCuda;
  cuda_code.arch = "sm_90";
  cuda_code.bytes = "\x7f" "ELF";
  CHECK((*device)->Load(cuda_code).status().code() == absl::StatusCode::kInvalidArgument);

  CodeObject garbage;
  garbage.kind = BackendKind::kCpu;
  garbage.arch = (*device)->Info().arch;
  garbage.bytes = "not a shared object";
  CHECK((*device)->Load(garbage).status().code() == absl::StatusCode::kInvalidArgument);

  auto buf = (*device)->Alloc(16);
  REQUIRE(buf.ok());
  float data[8] = {};
  CHECK((*device)->CopyToDevice(*buf, data, 32).code() == absl::StatusCode::kInvalidArgument);
  CHECK((*device)->CopyToHost(data, *buf, 8, 12).code() == absl::StatusCode::kInvalidArgument);
  CHECK((*device)->CopyToDevice(*buf, data, 8, 8).ok());
  CHECK((*device)->Alloc(0).status().code() == absl::StatusCode::kInvalidArgument);
  // No tensor copy engine: a tensor map is refused, not faked.
  TensorMapSpec map;
  map.dims = {8, 1, 0, 0, 0};
  map.box = {8, 1, 0, 0, 0};
  CHECK((*device)->EncodeTensorMap(map, *buf, 0).status().code() == absl::StatusCode::kUnimplemented);
}

TEST_CASE("an avx512 code object does not load on an older cpu level") {
  auto backend = Cpu();
  auto device = backend->OpenDevice(0);
  REQUIRE(device.ok());
  if ((*device)->Info().arch == "cpu-avx512") {
    WARN("host is avx512: nothing newer to refuse");
    return;
  }
  absl::StatusOr<CodeObject> code = backend->Compile(testing::CpuRequest("cpu-avx512"));
  REQUIRE(code.ok());  // compiling for another target needs no such CPU
  CHECK((*device)->Load(*code).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("kernel args pack values at their alignment") {
  KernelArgs args;
  args.Add(int8_t{7}).Add(double{2.5}).Add(int32_t{-3});
  void** p = args.Pointers();
  CHECK(*static_cast<int8_t*>(p[0]) == 7);
  CHECK(*static_cast<double*>(p[1]) == 2.5);
  CHECK(reinterpret_cast<uintptr_t>(p[1]) % alignof(double) == 0);
  CHECK(*static_cast<int32_t*>(p[2]) == -3);
  for (int i = 0; i < 100; ++i) args.Add(i);  // growth keeps earlier values
  p = args.Pointers();
  CHECK(*static_cast<double*>(p[1]) == 2.5);
  CHECK(*static_cast<int*>(p[102]) == 99);
}

TEST_CASE("a missing compiler is Unavailable, not a crash") {
  CpuBackendOptions options = CpuBackendOptions::FromEnv();
  options.cxx = "/nonexistent/c++";
  auto backend = NewCpuBackend(options);
  CHECK(backend->CompilerStatus().code() == absl::StatusCode::kUnavailable);
  CHECK(backend->Compile(testing::CpuRequest("cpu-x86_64")).status().code() ==
        absl::StatusCode::kUnavailable);
  CHECK(backend->DriverStatus().ok());  // the host still runs prebuilt code objects
}

}  // namespace
}  // namespace tuna::backend
