// DiskKernelCache (tuner_core/backend/disk_kernel_cache.h) with code objects of the real cpu backend: a round
// trip through a private directory that another object (another process) reads back and loads;
// corrupt, truncated, other-version and misplaced files are misses that the next Put replaces;
// concurrent Puts of one key never show a reader a torn file; and KernelCacheBackend over it
// compiles a kernel once for every later cache object, records disk hits for TakeBuilt, and
// never stores kernels fetched from a coordinator.
#include "tuner_core/backend/disk_kernel_cache.h"

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/backend/test_kernels.h"
#include "tests/fixtures/skip.h"
#include "tuner_core/backend/cpu/cpu_backend.h"
#include "tuner_core/backend/kernel_identity.h"
#include "worker/kernel_cache.h"

namespace tuna::worker {
namespace {

namespace fs = std::filesystem;
using backend::DiskKernelCache;

std::string FreshDir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  fs::path p = fs::path(tmp != nullptr ? tmp : "/tmp") / name;
  fs::remove_all(p);
  return p.string();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

std::unique_ptr<backend::Backend> CpuOrSkip() {
  auto cpu = backend::NewCpuBackend(backend::CpuBackendOptions::FromEnv());
  if (!cpu->CompilerStatus().ok()) {
    ::tuna::testing::SkipUnlessCi("no C++ compiler for the cpu backend: " +
                                  cpu->CompilerStatus().ToString());
    return nullptr;
  }
  return cpu;
}

void CheckSame(const backend::CodeObject& a, const backend::CodeObject& b) {
  CHECK(a.kind == b.kind);
  CHECK(a.arch == b.arch);
  CHECK(a.compiler_version == b.compiler_version);
  CHECK(a.entries == b.entries);
  CHECK(a.bytes == b.bytes);
}

TEST_CASE("a kernel put to the disk cache comes back in another object and loads") {
  auto cpu = CpuOrSkip();
  if (!cpu) return;
  const backend::CompileRequest req = backend::testing::CpuRequest("cpu-x86_64");
  absl::StatusOr<backend::CodeObject> code = cpu->Compile(req);
  REQUIRE(code.ok());
  const std::string key = backend::KernelIdentity(*cpu, req);
  const std::string dir = FreshDir("kc_roundtrip") + "/nested/cache";

  auto writer = DiskKernelCache::Open(dir);
  REQUIRE(writer.ok());
  struct stat st;
  REQUIRE(::stat(dir.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(!(*writer)->Get(key).has_value());
  REQUIRE((*writer)->Put(key, *code).ok());
  CHECK((*writer)->PathOf(key) == dir + "/" + key.substr(0, 2) + "/" + key);
  CHECK(fs::is_regular_file((*writer)->PathOf(key)));

  auto reader = DiskKernelCache::Open(dir);
  REQUIRE(reader.ok());
  std::optional<backend::CodeObject> back = (*reader)->Get(key);
  REQUIRE(back.has_value());
  CheckSame(*back, *code);
  auto device = cpu->OpenDevice(0);
  REQUIRE(device.ok());
  auto module = (*device)->Load(*back);
  REQUIRE(module.ok());
  CHECK((*module)->GetKernel("vector_add").ok());

  // Keys are build keys only: nothing outside the directory is ever named.
  CHECK(!(*reader)->Get("../../etc/passwd").has_value());
  CHECK(absl::IsInvalidArgument((*reader)->Put("../x", *code)));
  CHECK(absl::IsInvalidArgument((*reader)->Put(std::string(64, 'A'), *code)));
}

TEST_CASE("a corrupt, truncated, other-version or misplaced cache file is a miss, then replaced") {
  backend::CodeObject code;
  code.kind = backend::BackendKind::kCuda;
  code.arch = "sm_90";
  code.compiler_version = "nvrtc 13.0";
  code.entries = {"a", "b"};
  code.bytes = std::string("\0\x01payload\xff", 10);
  const std::string key(64, 'c');
  const std::string other(64, 'd');
  const std::string good = DiskKernelCache::Serialize(key, code);
  auto parsed = DiskKernelCache::Parse(key, good);
  REQUIRE(parsed.ok());
  CheckSame(*parsed, code);

  auto cache = DiskKernelCache::Open(FreshDir("kc_corrupt"));
  REQUIRE(cache.ok());
  const std::string path = (*cache)->PathOf(key);
  REQUIRE((*cache)->Put(key, code).ok());
  REQUIRE((*cache)->Get(key).has_value());

  std::vector<std::pair<std::string, std::string>> bad = {
      {"empty", ""},
      {"garbage", "not a cache file at all"},
      {"truncated", good.substr(0, good.size() - 1)},
      {"cut in the header", good.substr(0, 13)},
      {"trailing bytes", good + "x"},
  };
  std::string flipped = good;
  flipped[good.size() - 40] ^= 0x20;  // inside the code object's bytes
  bad.push_back({"damaged", flipped});
  std::string version2 = good;
  version2[8] = 2;  // the version field right after the magic
  bad.push_back({"other version", version2});
  bad.push_back({"another key's file", DiskKernelCache::Serialize(other, code)});
  for (const auto& [what, data] : bad) {
    INFO(what);
    CHECK(!DiskKernelCache::Parse(key, data).ok());
    WriteFile(path, data);
    CHECK(!(*cache)->Get(key).has_value());
    REQUIRE((*cache)->Put(key, code).ok());  // the next build replaces it
    std::optional<backend::CodeObject> back = (*cache)->Get(key);
    REQUIRE(back.has_value());
    CheckSame(*back, code);
  }
  // A version this build does not read says which.
  auto v2 = DiskKernelCache::Parse(key, version2);
  CHECK(absl::IsDataLoss(v2.status()));
  CHECK(std::string(v2.status().message()).find("version 2") != std::string::npos);
}

TEST_CASE("concurrent puts of one key never show a reader a torn file") {
  backend::CodeObject code;
  code.kind = backend::BackendKind::kCpu;
  code.arch = "cpu-x86_64";
  code.compiler_version = "c++ test";
  code.entries = {"f"};
  code.bytes = std::string(1 << 20, 'z');  // large enough for partial writes to be visible
  for (size_t i = 0; i < code.bytes.size(); i += 4096) code.bytes[i] = static_cast<char>(i / 4096);
  const std::string key(64, 'e');
  const std::string dir = FreshDir("kc_concurrent");
  auto cache = DiskKernelCache::Open(dir);
  REQUIRE(cache.ok());

  std::atomic<bool> done{false};
  std::atomic<int> reads{0}, torn{0}, put_errors{0};
  std::vector<std::thread> readers, writers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&] {
      while (!done) {
        std::optional<backend::CodeObject> got = (*cache)->Get(key);
        if (!got) continue;
        ++reads;
        if (got->bytes != code.bytes || got->entries != code.entries) ++torn;
      }
    });
  }
  for (int w = 0; w < 6; ++w) {
    writers.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (!(*cache)->Put(key, code).ok()) ++put_errors;
      }
    });
  }
  for (auto& t : writers) t.join();
  done = true;
  for (auto& t : readers) t.join();
  CHECK(put_errors == 0);
  CHECK(torn == 0);
  CHECK(reads > 0);
  // Every temporary file was renamed into place: the key's directory holds only the key.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir + "/" + key.substr(0, 2))) {
    names.push_back(e.path().filename().string());
  }
  CHECK(names == std::vector<std::string>{key});
}

TEST_CASE("the disk cache refuses a directory others can write") {
  const std::string dir = FreshDir("kc_shared");
  fs::create_directories(dir);
  REQUIRE(::chmod(dir.c_str(), 0777) == 0);
  auto opened = DiskKernelCache::Open(dir);
  REQUIRE(!opened.ok());
  CHECK(absl::IsFailedPrecondition(opened.status()));
  CHECK(std::string(opened.status().message()).find(dir) != std::string::npos);
  REQUIRE(::chmod(dir.c_str(), 0700) == 0);
  CHECK(DiskKernelCache::Open(dir).ok());
  WriteFile(dir + "/file", "x");
  CHECK(!DiskKernelCache::Open(dir + "/file").ok());  // not a directory
}

TEST_CASE("the kernel cache backend builds once for every later process over the disk cache") {
  auto cpu = CpuOrSkip();
  if (!cpu) return;
  auto disk = DiskKernelCache::Open(FreshDir("kc_backend"));
  REQUIRE(disk.ok());
  const backend::CompileRequest built = backend::testing::CpuRequest("cpu-x86_64");
  backend::CompileRequest fetched = built;
  fetched.options = {"-DTUNA_SCALE=5.0f"};
  const std::string built_key = backend::KernelIdentity(*cpu, built);
  const std::string fetched_key = backend::KernelIdentity(*cpu, fetched);

  {  // the first run: a real build, stored on disk
    KernelCacheBackend first(*cpu, disk->get());
    REQUIRE(first.Compile(built).ok());
    CHECK(first.builds() == 1);
    CHECK(first.disk_hits() == 0);
    CHECK(first.TakeBuilt().size() == 1);
    CHECK(fs::is_regular_file((*disk)->PathOf(built_key)));
  }
  // A later process: a disk hit, counted and recorded once for its compile step to put.
  KernelCacheBackend later(*cpu, disk->get());
  absl::StatusOr<backend::CodeObject> code = later.Compile(built);
  REQUIRE(code.ok());
  CHECK(later.builds() == 0);
  CHECK(later.hits() == 1);
  CHECK(later.disk_hits() == 1);
  REQUIRE(later.Compile(built).ok());  // now from memory
  CHECK(later.hits() == 2);
  CHECK(later.disk_hits() == 1);
  std::vector<coordinator::KernelBlob> taken = later.TakeBuilt();
  REQUIRE(taken.size() == 1);
  CHECK(taken[0].build_key == built_key);
  CHECK(taken[0].code_object == code->bytes);

  // A kernel fetched from a coordinator is used but never written to this host's disk cache.
  absl::StatusOr<backend::CodeObject> elsewhere = cpu->Compile(fetched);
  REQUIRE(elsewhere.ok());
  later.Prefetch({ToKernelBlob(fetched_key, fetched, *elsewhere)});
  REQUIRE(later.Compile(fetched).ok());
  CHECK(later.builds() == 0);
  CHECK(!fs::exists((*disk)->PathOf(fetched_key)));
  CHECK(later.TakeBuilt().empty());

  // Between jobs the disk hits are forgotten in memory and read again.
  later.Clear();
  REQUIRE(later.Compile(built).ok());
  CHECK(later.disk_hits() == 2);
  CHECK(later.builds() == 0);
}

}  // namespace
}  // namespace tuna::worker
