// The device comparison (tuner_core/search/measure/device_compare.h): its kernel builds for
// every GPU target the compilers here accept (CI, no GPU needed), and on a GPU (tags = ["gpu"])
// it reports what the host comparison reports for the same buffers, including NaNs, gross and
// tolerance-edge errors. Without a compiler or device the cases pass with a skip message.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/search/cpu_fixture.h"
#include "tuner_core/backend/registry.h"
#include "tuner_core/reference/fill.h"
#include "tuner_core/reference/reference_conv.h"
#include "tuner_core/search/measure/device_compare.h"

namespace tuna::search {
namespace {

using reference::ElementType;

std::vector<std::unique_ptr<backend::Backend>> GpuBackends(bool need_device) {
  std::vector<std::unique_ptr<backend::Backend>> out;
  for (backend::DetectedBackend& d : backend::DetectBackends(backend::DetectOptions::FromEnv())) {
    if (d.kind == backend::BackendKind::kCpu) continue;
    if (!d.backend->CompilerStatus().ok() || (need_device && !d.backend->DriverStatus().ok())) {
      WARN("skipped " << d.backend->Name() << ": compiler: " << d.backend->CompilerStatus().ToString()
                      << "; driver: " << d.backend->DriverStatus().ToString());
      continue;
    }
    out.push_back(std::move(d.backend));
  }
  return out;
}

TEST_CASE("comparison kernels build for the GPU targets of this host's compilers") {
  for (auto& backend : GpuBackends(false)) {
    const std::vector<std::string> wanted = backend->Kind() == backend::BackendKind::kCuda
                                                ? std::vector<std::string>{"sm_80", "sm_90"}
                                                : std::vector<std::string>{"gfx908", "gfx90a"};
    const std::vector<std::string> targets = backend->CompileTargets();
    for (const std::string& arch : wanted) {
      if (std::find(targets.begin(), targets.end(), arch) == targets.end()) {
        WARN("skipped " << arch << ": not a target of " << backend->CompilerVersion());
        continue;
      }
      CompareKernelCache cache;
      for (ElementType t : {ElementType::kFp32, ElementType::kFp16, ElementType::kBf16}) {
        INFO(backend->Name() << " " << arch << " " << reference::ElementTypeName(t));
        absl::StatusOr<backend::CodeObject> code = cache.Get(*backend, arch, t);
        REQUIRE(code.ok());
        CHECK_FALSE(code->bytes.empty());
      }
      CHECK(cache.Get(*backend, arch, ElementType::kInt32).status().code() ==
            absl::StatusCode::kUnimplemented);
    }
  }
}

TEST_CASE("gpu: the device comparison reports what the host comparison reports") {
  for (auto& backend : GpuBackends(true)) {
    auto device = backend->OpenDevice(0);
    REQUIRE(device.ok());
    backend::Device& dev = **device;
    CompareKernelCache cache;
    for (const char* line : {"conv -n 4 -c 16 -H 28 -W 28 -k 32 -y 3 -x 3 -p 1 -q 1 -F 1",
                             "convfp16 -n 4 -c 16 -H 28 -W 28 -k 32 -y 3 -x 3 -p 1 -q 1 -F 2",
                             "convbfp16 -n 4 -c 16 -H 28 -W 28 -k 32 -y 3 -x 3 -p 1 -q 1 -F 4"}) {
      INFO(backend->Name() << ": " << line);
      const Problem p = testing::ParseOne(line);
      const ElementType type = reference::OutputType(p, p.direction);
      const int64_t n = reference::OutputDesc(p, p.direction).ElementCount();
      const size_t elem = reference::ElementSize(type);
      const std::vector<std::byte> expected = reference::RandomBuffer(type, n, 7);
      const reference::Tolerance tol = reference::DefaultTolerance(p.data_type);
      auto code = cache.Get(*backend, dev.Info().arch, type);
      REQUIRE(code.ok());
      auto got_buf = dev.Alloc(n * elem);
      REQUIRE(got_buf.ok());
      auto comparer = DeviceComparer::Create(dev, *code, p, expected, tol, *got_buf);
      INFO(comparer.status().ToString());
      REQUIRE(comparer.ok());

      // Variants of the result: exact, within tolerance, gross errors, a NaN, all zero.
      std::mt19937 rng(11);
      std::vector<std::vector<std::byte>> variants;
      variants.push_back(expected);
      std::vector<double> values = reference::ToDoubles(type, expected.data(), n);
      auto encode = [&](const std::vector<double>& v) {
        std::vector<std::byte> b(n * elem);
        for (int64_t i = 0; i < n; ++i) reference::StoreFromDouble(type, b.data(), i, v[i]);
        return b;
      };
      std::vector<double> noisy = values;
      for (double& v : noisy) v *= 1 + 1e-7 * (rng() % 3);
      variants.push_back(encode(noisy));
      std::vector<double> gross = values;
      gross[n / 3] += 10;
      gross[n / 2] = -gross[n / 2] - 1;
      variants.push_back(encode(gross));
      std::vector<double> nan = values;
      nan[5] = std::nan("");
      variants.push_back(encode(nan));
      variants.push_back(encode(std::vector<double>(n, 0.0)));

      for (size_t k = 0; k < variants.size(); ++k) {
        INFO("variant " << k);
        REQUIRE(dev.CopyToDevice(*got_buf, variants[k].data(), n * elem).ok());
        absl::StatusOr<reference::VerifyReport> on_device = (*comparer)->Compare(*got_buf);
        REQUIRE(on_device.ok());
        absl::StatusOr<reference::VerifyReport> on_host = reference::VerifyConvOutput(
            p, p.direction, variants[k].data(), expected.data(), false, &tol);
        REQUIRE(on_host.ok());
        INFO("device: " << on_device->Summary() << " host: " << on_host->Summary());
        CHECK(on_device->ok == on_host->ok);
        CHECK(on_device->mismatches == on_host->mismatches);
        CHECK(on_device->first_mismatch == on_host->first_mismatch);
        CHECK(on_device->first_location == on_host->first_location);
        CHECK((on_device->first_got == on_host->first_got ||
               (std::isnan(on_device->first_got) && std::isnan(on_host->first_got))));
        CHECK(on_device->got_nan == on_host->got_nan);
        CHECK(on_device->max_abs_error == on_host->max_abs_error);
        CHECK(on_device->rms_error == Approx(on_host->rms_error).epsilon(1e-9));
      }
      CHECK((*comparer)->Compare(*got_buf)->ok == false);  // the last variant: all zero
    }
  }
}

}  // namespace
}  // namespace tuna::search
