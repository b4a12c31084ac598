// Kernel cache: a second handle over the same cache dir performs 0 compilations (the files are
// the worker's disk cache format; corrupt ones are recompiled); a system .kdb
// (written with db::KernelDbWriter under MIOpen's key rule) is used before compiling; LOGGING_CMD
// lines of Immediate runs re-parse to the problem that ran.
#include <filesystem>
#include <fstream>
#include <iterator>

#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/backend/disk_kernel_cache.h"
#include "tuner_core/db/kernel_db.h"
#include "tuner_core/runtime/kernel_cache.h"

using namespace tuna;
using namespace tuna::runtime;
using tuna::testing::TempDir;

namespace {
constexpr const char* kLine = "conv -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1";
}

TEST_CASE("kernel cache: the second handle compiles nothing") {
  TempDir user("kc_user"), cache("kc_cache");
  const Problem p = testing::ParseOne(kLine);
  const RuntimeConfig c = testing::CpuConfig(user.str(), "", cache.str());
  int first_compiles = 0;
  {
    auto h = testing::CpuHandle(c);
    REQUIRE(h.ok());
    auto rep = testing::RunAndVerify(**h, p, 85);
    REQUIRE(rep.ok());
    CHECK(rep->ok);
    first_compiles = (*h)->kernels().compilations();
    CHECK(first_compiles >= 1);
    CHECK((*h)->kernels().stats().cache_hits == 0);
  }
  // The worker's disk cache format (tuner_core/backend/disk_kernel_cache.h): DIR/<2 hex>/<key>.
  int files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache.str())) {
    if (!e.is_regular_file()) continue;
    ++files;
    const std::string key = e.path().filename().string();
    CHECK(e.path().parent_path().filename().string() == key.substr(0, 2));
    std::ifstream in(e.path(), std::ios::binary);
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(backend::DiskKernelCache::Parse(key, data).ok());
  }
  CHECK(files == first_compiles);
  auto h = testing::CpuHandle(c);
  REQUIRE(h.ok());
  auto rep = testing::RunAndVerify(**h, p, 85);
  REQUIRE(rep.ok());
  CHECK(rep->ok);
  CHECK((*h)->kernels().compilations() == 0);
  CHECK((*h)->kernels().stats().cache_hits == first_compiles);

  // A corrupt cache file is ignored and recompiled.
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache.str())) {
    if (e.is_regular_file()) std::ofstream(e.path(), std::ios::trunc) << "garbage";
  }
  auto h3 = testing::CpuHandle(c);
  REQUIRE(h3.ok());
  auto rep3 = testing::RunAndVerify(**h3, p, 85);
  REQUIRE(rep3.ok());
  CHECK(rep3->ok);
  CHECK((*h3)->kernels().compilations() == first_compiles);

  // Disabled cache: every handle compiles.
  RuntimeConfig off = c;
  off.disable_kernel_cache = true;
  auto h4 = testing::CpuHandle(off);
  REQUIRE(h4.ok());
  REQUIRE(CompileSolution(**h4, p, 85).ok());
  CHECK((*h4)->kernels().compilations() == first_compiles);
}

TEST_CASE("kernel cache: a system .kdb's kernels are used first") {
  TempDir sys("kdb_sys"), user("kdb_user"), cache("kdb_cache");
  const Problem p = testing::ParseOne(kLine);
  RuntimeConfig c = testing::CpuConfig(user.str(), sys.str(), cache.str());
  std::string kdb_path;
  {
    // Build the kdb from what the runtime would compile (MIOpen key: file.o, " opts -mcpu=arch").
    auto h = testing::CpuHandle(c);
    REQUIRE(h.ok());
    auto prepared = PrepareSolution(**h, p, 85);
    REQUIRE(prepared.ok());
    db::KernelDbWriter w;
    for (const solver::KernelBuild& k : (*prepared)->solution.kernels) {
      auto code = (*h)->kernels().Get(k);
      REQUIRE(code.ok());
      // Written as the exporter writes it (the shared key rule of tuner_core/db/kernel_db.h).
      db::KernelDbEntry e =
          db::MakeTunaKernelDbEntry(k.source, k.options, BareArch((*h)->target().arch), code->bytes);
      CHECK(e.kernel_name == KernelCache::KdbName(k));
      CHECK(e.kernel_args == KernelCache::KdbArgs(k, (*h)->target().arch));
      w.Add(std::move(e));
    }
    kdb_path = (*h)->db().files().system_kdb;
    REQUIRE(w.Write(kdb_path).ok());
  }
  c.kernel_cache_dir = (TempDir("kdb_empty_cache") / "never");  // an empty cache: only the kdb can serve
  auto h = testing::CpuHandle(c);
  REQUIRE(h.ok());
  auto rep = testing::RunAndVerify(**h, p, 85);
  REQUIRE(rep.ok());
  CHECK(rep->ok);
  CHECK((*h)->kernels().compilations() == 0);
  CHECK((*h)->kernels().stats().kdb_hits >= 1);
  CHECK((*h)->kernels().stats().cache_hits == 0);

  // Named by the bare arch instead of the basename: found too.
  std::filesystem::rename(kdb_path, (*h)->db().files().system_kdb_arch);
  auto h2 = testing::CpuHandle(c);
  REQUIRE(h2.ok());
  REQUIRE(CompileSolution(**h2, p, 85).ok());
  CHECK((*h2)->kernels().compilations() == 0);
  CHECK((*h2)->kernels().stats().kdb_hits >= 1);
}

TEST_CASE("LOGGING_CMD: every run logs a MIOpenDriver line that re-parses to the problem") {
  TempDir user("log_user"), cache("log_cache");
  RuntimeConfig c = testing::CpuConfig(user.str(), "", cache.str());
  c.logging_cmd = true;
  std::vector<std::string> log;
  auto h = testing::CpuHandle(c, &log);
  REQUIRE(h.ok());
  const std::vector<std::string> lines = {
      kLine,
      "conv -n 2 -c 4 -H 5 -W 7 -k 6 -y 3 -x 1 -p 1 -q 0 -u 2 -v 1 -l 1 -j 1 -g 2 -F 2",
      "convfp16 -n 1 -c 4 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC "
      "--fil_layout NHWC --out_layout NHWC -g 1 -F 4",
  };
  for (const std::string& l : lines) {
    const Problem p = testing::ParseOne(l);
    const uint64_t id = p.direction == Direction::kForward ? 85 : p.direction == Direction::kBackwardData ? 86 : 87;
    log.clear();
    auto rep = testing::RunAndVerify(**h, p, id);
    REQUIRE(rep.ok());
    CHECK(rep->ok);
    REQUIRE(log.size() == 1);
    CHECK(log[0].starts_with("MIOpen(CPU): Command [LogCmdConvolution] ./bin/MIOpenDriver "));
    CHECK(log[0].ends_with(" -S 0"));
    auto back = ParseDriverLine(log[0]);
    REQUIRE(back.ok());
    REQUIRE(back->size() == 1);
    CHECK(back->front() == p);
  }
  log.clear();
  const Problem p = testing::ParseOne(kLine);
  auto r = FindConvolution(**h, p);
  REQUIRE(r.ok());
  REQUIRE(!log.empty());
  CHECK(log[0].starts_with("MIOpen(CPU): Command [LogCmdFindConvolution] ./bin/MIOpenDriver conv "));
  CHECK(ParseDriverLine(log[0])->front() == p);
}
