// Runs the portable kernels on every GPU backend with a device (tags = ["gpu"]). Without a GPU
// driver each case passes with a skip message; a host with a driver (device node, or for CUDA a
// loadable libcuda.so.1) whose backend cannot be used fails: a broken GPU host is not skipped.
//   bazel test //tests/backend:gpu_device_test --test_output=all
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/backend/test_kernels.h"
#include "tuner_core/backend/registry.h"

namespace tuna::backend {
namespace {

// Whether the host has the kernel driver of this GPU kind: its device node, or for CUDA the
// user-mode driver library (installed with the kernel driver, unlike the toolkit's stub).
bool GpuDriverPresent(BackendKind kind) {
  if (kind == BackendKind::kHip) return access("/dev/kfd", F_OK) == 0;
  if (access("/dev/nvidiactl", F_OK) == 0) return true;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib != nullptr) dlclose(lib);
  return lib != nullptr;
}

// The GPU backends that can both compile for and run on device 0. A backend whose driver is
// present but unusable fails the case (FAIL throws); one without a driver is skipped.
std::vector<std::unique_ptr<Backend>> GpuBackends() {
  std::vector<std::unique_ptr<Backend>> out;
  for (DetectedBackend& d : DetectBackends(DetectOptions::FromEnv())) {
    if (d.kind == BackendKind::kCpu) continue;
    if (!d.backend->DriverStatus().ok() || !d.backend->CompilerStatus().ok()) {
      if (GpuDriverPresent(d.kind)) {
        FAIL(d.backend->Name() << ": the GPU driver is installed but the backend is unusable: "
                               << "driver: " << d.backend->DriverStatus().ToString()
                               << "; compiler: " << d.backend->CompilerStatus().ToString());
      }
      WARN("skipped " << d.backend->Name() << " (no GPU driver on this host): driver: "
                      << d.backend->DriverStatus().ToString()
                      << "; compiler: " << d.backend->CompilerStatus().ToString());
      continue;
    }
    out.push_back(std::move(d.backend));
  }
  return out;
}

absl::StatusOr<CodeObject> CompileFor(const Backend& backend, const std::string& arch) {
  return backend.Compile(testing::GpuRequest(arch));
}

float BitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST_CASE("gpu: allocate, copy, launch, time and fault") {
  auto backends = GpuBackends();
  if (backends.empty()) return;
  for (auto& backend : backends) {
    auto devices = backend->ListDevices();
    REQUIRE(devices.ok());
    REQUIRE_FALSE(devices->empty());
    const DeviceInfo& info = devices->front();
    WARN(backend->Name() << " device 0: " << info.name << " " << info.arch << ", "
                         << info.compute_units << " CUs, " << (info.global_memory_bytes >> 20)
                         << " MiB, warp " << info.warp_size << "; " << backend->CompilerVersion()
                         << "; " << backend->DriverVersion());
    CHECK(info.compute_units > 0);
    CHECK(info.warp_size >= 32);

    absl::StatusOr<CodeObject> code = CompileFor(*backend, info.arch);
    INFO(code.status().ToString());
    REQUIRE(code.ok());
    auto device = backend->OpenDevice(0);
    REQUIRE(device.ok());
    Device& dev = **device;
    auto module = dev.Load(*code);
    INFO(module.status().ToString());
    REQUIRE(module.ok());

    // vector_add with a ragged tail.
    const int n = 1 << 20;
    std::vector<float> a(n), b(n), c(n);
    std::iota(a.begin(), a.end(), 0.0f);
    for (int i = 0; i < n; ++i) b[i] = float(i % 7);
    auto da = dev.Alloc(n * 4), db = dev.Alloc(n * 4), dc = dev.Alloc(n * 4);
    REQUIRE((da.ok() && db.ok() && dc.ok()));
    REQUIRE(dev.CopyToDevice(*da, a.data(), n * 4).ok());
    REQUIRE(dev.CopyToDevice(*db, b.data(), n * 4).ok());
    REQUIRE(dev.Memset(*dc, 0xff, n * 4).ok());
    auto add = (*module)->GetKernel("vector_add");
    REQUIRE(add.ok());
    const int m = n - 3;
    KernelArgs args;
    args.Add(*da).Add(*db).Add(*dc).Add(m);
    REQUIRE(dev.Launch(*add, Dim3{(m + 255) / 256}, Dim3{256}, 0, args).ok());
    REQUIRE(dev.Synchronize().ok());
    REQUIRE(dev.CopyToHost(c.data(), *dc, n * 4).ok());
    for (int i = 0; i < m; ++i) REQUIRE(c[i] == a[i] + 2.0f * b[i]);
    for (int i = m; i < n; ++i) REQUIRE(std::isnan(c[i]));  // untouched 0xff bytes

    // warp_sum: one warp per block.
    const int warps = 64, ws = info.warp_size;
    std::vector<float> in(warps * ws), out(warps);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i % 5);
    REQUIRE(dev.CopyToDevice(*da, in.data(), in.size() * 4).ok());
    auto wsum = (*module)->GetKernel("warp_sum");
    REQUIRE(wsum.ok());
    KernelArgs wargs;
    wargs.Add(*da).Add(*dc);
    REQUIRE(dev.Launch(*wsum, Dim3{warps}, Dim3{uint32_t(ws)}, 0, wargs).ok());
    REQUIRE(dev.CopyToHost(out.data(), *dc, warps * 4).ok());
    for (int w = 0; w < warps; ++w) {
      float expect = 0;
      for (int l = 0; l < ws; ++l) expect += in[w * ws + l];
      REQUIRE(out[w] == expect);
    }

    // round_trip through fp16 and bf16 (round to nearest even).
    std::vector<float> vals = {1.0f, -2.5f, 65504.0f, 1.0f / 3.0f, 1e-3f,
                               BitsToFloat(0x3f808000u), BitsToFloat(0x3f818000u)};
    const int k = int(vals.size());
    REQUIRE(dev.CopyToDevice(*da, vals.data(), k * 4).ok());
    auto rt = (*module)->GetKernel("round_trip");
    REQUIRE(rt.ok());
    KernelArgs rargs;
    rargs.Add(*da).Add(*db).Add(*dc).Add(k);
    REQUIRE(dev.Launch(*rt, Dim3{1}, Dim3{64}, 0, rargs).ok());
    std::vector<float> via_half(k), via_bf16(k);
    REQUIRE(dev.CopyToHost(via_half.data(), *db, k * 4).ok());
    REQUIRE(dev.CopyToHost(via_bf16.data(), *dc, k * 4).ok());
    CHECK(via_half[0] == 1.0f);
    CHECK(via_half[1] == -2.5f);
    CHECK(via_half[2] == 65504.0f);
    CHECK(std::fabs(via_half[3] - 1.0f / 3.0f) < 1e-3f);
    CHECK(via_bf16[0] == 1.0f);
    CHECK(via_bf16[1] == -2.5f);
    CHECK(via_bf16[5] == 1.0f);                        // tie rounds to even (down)
    CHECK(via_bf16[6] == BitsToFloat(0x3f820000u));    // tie rounds to even (up)

    // Dynamic shared memory beyond 48 KiB (opt-in on CUDA) where the device allows it.
    const uint32_t block = 256;
    auto rev = (*module)->GetKernel("smem_reverse");
    REQUIRE(rev.ok());
    std::vector<float> r(block * 4);
    REQUIRE(dev.CopyToDevice(*da, a.data(), r.size() * 4).ok());
    KernelArgs sargs;
    sargs.Add(*da).Add(*dc);
    size_t smem = info.shared_memory_per_block_optin > 64 * 1024 ? 64 * 1024 : block * 4;
    REQUIRE(dev.Launch(*rev, Dim3{4}, Dim3{block}, smem, sargs).ok());
    REQUIRE(dev.CopyToHost(r.data(), *dc, r.size() * 4).ok());
    for (uint32_t bi = 0; bi < 4; ++bi) {
      for (uint32_t t = 0; t < block; ++t) REQUIRE(r[bi * block + t] == a[bi * block + block - 1 - t]);
    }

    // Timing with events.
    auto times = dev.TimeLaunches(
        [&] { return dev.Launch(*add, Dim3{(m + 255) / 256}, Dim3{256}, 0, args); }, 10);
    REQUIRE(times.ok());
    REQUIRE(times->size() == 10);
    std::vector<double> sorted = *times;
    std::sort(sorted.begin(), sorted.end());
    WARN(backend->Name() << " vector_add of " << m << " floats: median " << sorted[5] << " ms ("
                         << 12.0 * m / (sorted[5] * 1e-3) / 1e9 << " GB/s)");
    for (double t : *times) CHECK(t > 0.0);

    // Timing with an untimed flush before each run, queued as one batch; then a copy on the
    // device checked on the host.
    auto flushed = dev.TimeLaunches(
        [&] { return dev.Launch(*add, Dim3{(m + 255) / 256}, Dim3{256}, 0, args); }, 4,
        [&] { return dev.Memset(*dc, 0, m * 4); });
    REQUIRE(flushed.ok());
    REQUIRE(flushed->size() == 4);
    for (double t : *flushed) CHECK(t > 0.0);
    REQUIRE(dev.CopyOnDevice(*dc, *da, m * 4).ok());
    std::vector<float> copied(m);
    REQUIRE(dev.CopyToHost(copied.data(), *dc, m * 4).ok());
    std::vector<float> original(m);
    REQUIRE(dev.CopyToHost(original.data(), *da, m * 4).ok());
    CHECK(copied == original);

    // Unknown kernel name.
    CHECK((*module)->GetKernel("nope").status().code() == absl::StatusCode::kInvalidArgument);

    // A faulting kernel: the context is lost, and says so from then on.
    auto poke = (*module)->GetKernel("poke");
    REQUIRE(poke.ok());
    KernelArgs pargs;
    pargs.Add(*da).Add(static_cast<long long>(1) << 40);
    absl::Status st = dev.Launch(*poke, Dim3{1}, Dim3{1}, 0, pargs);
    if (st.ok()) st = dev.Synchronize();
    INFO(st.ToString());
    CHECK(IsContextLost(st));
    CHECK(IsContextLost(dev.Synchronize()));
    WARN(backend->Name() << " after a fault: " << st.ToString());
  }
}

}  // namespace
}  // namespace tuna::backend
