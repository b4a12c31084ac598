// backend::ModuleCache on the cpu backend: the same code object loads once per device, another
// one (or the same on another device) loads on its own, the bound drops the least recently used
// module first, and a dropped module stays usable while a holder keeps it.
#include <vector>

#include "catch2/catch.hpp"
#include "tests/fixtures/skip.h"
#include "tests/backend/test_kernels.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/backend/module_cache.h"

namespace tuna::backend {
namespace {

struct Fixture {
  std::unique_ptr<Backend> backend = NewCpuBackend(CpuBackendOptions::FromEnv());
  std::unique_ptr<Device> device;
  std::vector<CodeObject> code;  // three builds: TUNA_SCALE 1, 2, 3
  bool ok = false;  // false: no C++ compiler (skipped, or failed under CI)
  Fixture() {
    if (!backend->CompilerStatus().ok()) {
      ::tuna::testing::SkipUnlessCi("no C++ compiler for the cpu backend: " + backend->CompilerStatus().ToString());
      return;
    }
    auto d = backend->OpenDevice(0);
    REQUIRE(d.ok());
    device = *std::move(d);
    for (const char* scale : {"-DTUNA_SCALE=1.0f", "-DTUNA_SCALE=2.0f", "-DTUNA_SCALE=3.0f"}) {
      CompileRequest req = testing::CpuRequest(device->Info().arch);
      req.options = {scale};
      auto c = backend->Compile(req);
      INFO(c.status().ToString());
      REQUIRE(c.ok());
      code.push_back(*std::move(c));
    }
    ok = true;
  }
};

// c = a + scale * b for n = 4 with a = 1, b = 1: returns c[0] (1 + scale), or -1 on an error.
float Run(Device& device, Module& module) {
  auto kernel = module.GetKernel("vector_add");
  if (!kernel.ok()) return -1;
  const int n = 4;
  std::vector<float> ones(n, 1.0f), c(n, 0.0f);
  auto da = device.Alloc(n * sizeof(float));
  auto dc = device.Alloc(n * sizeof(float));
  if (!da.ok() || !dc.ok() || !device.CopyToDevice(*da, ones.data(), n * sizeof(float)).ok()) return -1;
  KernelArgs args;
  args.Add(*da).Add(*da).Add(*dc).Add(n);
  if (!device.Launch(*kernel, Dim3{1}, Dim3{4}, 0, args).ok() || !device.Synchronize().ok()) return -1;
  if (!device.CopyToHost(c.data(), *dc, n * sizeof(float)).ok()) return -1;
  return c[0];
}

TEST_CASE("the same code object is loaded once per device, others on their own") {
  Fixture f;
  if (!f.ok) return;
  ModuleCache cache;
  auto a = cache.Load(*f.device, f.code[0]);
  REQUIRE(a.ok());
  CodeObject copy = f.code[0];  // equal bytes, another object: still a hit
  copy.log = "warnings differ";
  auto again = cache.Load(*f.device, copy);
  REQUIRE(again.ok());
  CHECK(again->get() == a->get());
  CHECK(cache.loads() == 1);
  CHECK(cache.hits() == 1);

  auto b = cache.Load(*f.device, f.code[1]);
  REQUIRE(b.ok());
  CHECK(b->get() != a->get());
  CHECK(Run(*f.device, **a) == 2.0f);  // each module runs its own code
  CHECK(Run(*f.device, **b) == 3.0f);

  CodeObject other_entries = f.code[0];
  other_entries.entries = {"vector_add"};  // a different code object for the cache
  REQUIRE(cache.Load(*f.device, other_entries).ok());
  CHECK(cache.loads() == 3);

  auto second_device = f.backend->OpenDevice(0);
  REQUIRE(second_device.ok());
  auto elsewhere = cache.Load(**second_device, f.code[0]);
  REQUIRE(elsewhere.ok());
  CHECK(elsewhere->get() != a->get());
  CHECK(cache.loads() == 4);
  CHECK(cache.size() == 4);
  elsewhere->reset();
  cache.Abandon();  // the second device goes first: nothing of it may be unloaded after
  CHECK(cache.size() == 0);
}

TEST_CASE("the least recently used module is dropped first and stays usable while held") {
  Fixture f;
  if (!f.ok) return;
  ModuleCache cache(2);
  auto first = cache.Load(*f.device, f.code[0]);
  REQUIRE(first.ok());
  REQUIRE(cache.Load(*f.device, f.code[1]).ok());
  REQUIRE(cache.Load(*f.device, f.code[0]).ok());  // now the most recent
  REQUIRE(cache.Load(*f.device, f.code[2]).ok());  // drops code[1]
  CHECK(cache.size() == 2);
  CHECK(cache.loads() == 3);
  REQUIRE(cache.Load(*f.device, f.code[0]).ok());
  CHECK(cache.loads() == 3);  // still held
  REQUIRE(cache.Load(*f.device, f.code[1]).ok());
  CHECK(cache.loads() == 4);  // was dropped: loaded again (and drops code[2])
  REQUIRE(cache.Load(*f.device, f.code[0]).ok());
  REQUIRE(cache.Load(*f.device, f.code[1]).ok());
  CHECK(cache.loads() == 4);

  ModuleCache tiny(1);
  auto held = tiny.Load(*f.device, f.code[2]);
  REQUIRE(held.ok());
  REQUIRE(tiny.Load(*f.device, f.code[0]).ok());  // drops code[2] from the cache
  CHECK(tiny.size() == 1);
  CHECK(Run(*f.device, **held) == 4.0f);  // the holder's module is still loaded
}

}  // namespace
}  // namespace tuna::backend
