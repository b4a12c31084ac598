// KernelCacheBackend (worker/kernel_cache.h) over the real cpu backend: known builds are
// answered without compiling, what it built is recorded once, and Clear forgets the prefetched
// kernels but keeps those built here; TrustedKernels keeps only shared objects with a recorded
// (compile-role) builder on the CPU backend.
#include "worker/kernel_cache.h"

#include "catch2/catch.hpp"
#include "tests/backend/test_kernels.h"
#include "tests/fixtures/skip.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/backend/kernel_identity.h"

namespace tuna::worker {
namespace {

TEST_CASE("the kernel cache answers known builds and keeps its own across Clear") {
  auto cpu = backend::NewCpuBackend(backend::CpuBackendOptions::FromEnv());
  if (!cpu->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("no C++ compiler for the cpu backend: " +
                                  cpu->CompilerStatus().ToString());
    return;
  }
  backend::CompileRequest built = backend::testing::CpuRequest("cpu-x86_64");
  backend::CompileRequest fetched = built;
  fetched.options = {"-DTUNA_SCALE=3.0f"};
  CHECK(backend::KernelIdentity(*cpu, built) != backend::KernelIdentity(*cpu, fetched));
  // The compiler version is part of a kernel's identity: another compiler, another kernel.
  CHECK(backend::KernelIdentity(backend::BackendKind::kCpu, "g++ 12", built) !=
        backend::KernelIdentity(backend::BackendKind::kCpu, "g++ 13", built));
  CHECK(backend::KernelIdentity(*cpu, built).size() == 64);
  // ... but not where it is installed: one NVRTC at two paths on two hosts builds the same code.
  CHECK(backend::KernelIdentity(backend::BackendKind::kCuda, "nvrtc 13.0 (/opt/a/libnvrtc.so.13)", built) ==
        backend::KernelIdentity(backend::BackendKind::kCuda, "nvrtc 13.0 (/usr/lib/libnvrtc.so.13)", built));
  CHECK(backend::KernelIdentity(backend::BackendKind::kCuda, "nvrtc 13.0 (/opt/a/libnvrtc.so.13)", built) !=
        backend::KernelIdentity(backend::BackendKind::kCuda, "nvrtc 13.1 (/opt/a/libnvrtc.so.13)", built));
  // A version's own parentheses stay (g++'s distribution tag is part of the version).
  CHECK(backend::KernelIdentity(backend::BackendKind::kCpu, "g++ (Debian 12.2.0-14) 12.2.0", built) !=
        backend::KernelIdentity(backend::BackendKind::kCpu, "g++ (Debian 12.2.0-15) 12.2.0", built));

  KernelCacheBackend cache(*cpu);
  CHECK_FALSE(cache.Lookup(built).has_value());  // unknown: never compiled by a lookup
  CHECK(cache.builds() == 0);
  REQUIRE(cache.Compile(built).ok());
  REQUIRE(cache.Compile(built).ok());
  CHECK(cache.builds() == 1);
  CHECK(cache.hits() == 1);
  CHECK(cache.Lookup(built).has_value());
  CHECK(cache.hits() == 2);
  CHECK_FALSE(cpu->Lookup(built).has_value());  // a plain backend has nothing at hand
  std::vector<coordinator::KernelBlob> taken = cache.TakeBuilt();
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].build_key == backend::KernelIdentity(*cpu, built));
  CHECK(cache.TakeBuilt().empty());

  // A kernel compiled elsewhere (a compile worker) and fetched: answered, never built here.
  absl::StatusOr<backend::CodeObject> elsewhere = cpu->Compile(fetched);
  REQUIRE(elsewhere.ok());
  cache.Prefetch({ToKernelBlob(backend::KernelIdentity(*cpu, fetched), fetched, *elsewhere)});
  REQUIRE(cache.Compile(fetched).ok());
  CHECK(cache.builds() == 1);
  CHECK(cache.hits() == 3);

  // Between jobs: the fetched kernel is forgotten, the one built here is kept.
  cache.Clear();
  REQUIRE(cache.Compile(built).ok());
  CHECK(cache.builds() == 1);
  CHECK(cache.hits() == 4);
  REQUIRE(cache.Compile(fetched).ok());
  CHECK(cache.builds() == 2);
}

TEST_CASE("a CPU host loads only shared objects with a recorded builder") {
  auto blob = [](const std::string& built_by) {
    return coordinator::KernelBlob{std::string(64, 'a'), "cpu-x86_64", "c++", "k.cc", "", "f",
                                   "\x7f" "ELF", built_by};
  };
  size_t dropped = 0;
  auto kept = TrustedKernels(backend::BackendKind::kCpu,
                             {blob("build/1"), blob(""), blob("build/2")}, &dropped);
  CHECK(kept.size() == 2);
  CHECK(dropped == 1);
  for (const auto& k : kept) CHECK(!k.built_by.empty());
  // GPU code objects only run on the device: kept whoever built them.
  kept = TrustedKernels(backend::BackendKind::kHip, {blob(""), blob("build/1")}, &dropped);
  CHECK(kept.size() == 2);
  CHECK(dropped == 0);
}

}  // namespace
}  // namespace tuna::worker
