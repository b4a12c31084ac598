// Find controls parsing, RuntimeConfig from an environment table, db file names, and the
// LOGGING_CMD line format (re-parsed by ParseDriverLine to the same problem).
#include <map>

#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/runtime/command_log.h"
#include "tuner_core/runtime/db_files.h"
#include "tuner_core/runtime/find_controls.h"

using namespace tuna;
using namespace tuna::runtime;

namespace {
EnvLookup Env(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}
}  // namespace

TEST_CASE("FIND_MODE: names (any case) and numbers; 4 rejected") {
  CHECK(*ParseFindMode("normal") == FindMode::kNormal);
  CHECK(*ParseFindMode("1") == FindMode::kNormal);
  CHECK(*ParseFindMode("Fast") == FindMode::kFast);
  CHECK(*ParseFindMode("2") == FindMode::kFast);
  CHECK(*ParseFindMode("HYBRID") == FindMode::kHybrid);
  CHECK(*ParseFindMode("3") == FindMode::kHybrid);
  CHECK(*ParseFindMode("dynamic_hybrid") == FindMode::kDynamicHybrid);
  CHECK(*ParseFindMode("5") == FindMode::kDynamicHybrid);
  auto four = ParseFindMode("4");
  REQUIRE(!four.ok());
  CHECK(std::string(four.status().message()).find("reserved") != std::string::npos);
  CHECK(!ParseFindMode("6").ok());
  CHECK(!ParseFindMode("quick").ok());
}

TEST_CASE("FIND_ENFORCE: names (any case) and numbers 1-5") {
  CHECK(*ParseFindEnforce("none") == FindEnforce::kNone);
  CHECK(*ParseFindEnforce("Db_Update") == FindEnforce::kDbUpdate);
  CHECK(*ParseFindEnforce("search") == FindEnforce::kSearch);
  CHECK(*ParseFindEnforce("SEARCH_DB_UPDATE") == FindEnforce::kSearchDbUpdate);
  CHECK(*ParseFindEnforce("db_clean") == FindEnforce::kDbClean);
  CHECK(*ParseFindEnforce("CLEAN") == FindEnforce::kDbClean);
  for (int i = 1; i <= 5; ++i) CHECK(static_cast<int>(*ParseFindEnforce(std::to_string(i))) == i);
  CHECK(!ParseFindEnforce("0").ok());
  CHECK(!ParseFindEnforce("6").ok());
  CHECK(EffectiveFindMode(FindMode::kFast, FindEnforce::kNone) == FindMode::kFast);
  CHECK(EffectiveFindMode(FindMode::kFast, FindEnforce::kSearch) == FindMode::kNormal);
  CHECK(EffectiveFindMode(FindMode::kDynamicHybrid, FindEnforce::kDbClean) == FindMode::kNormal);
}

TEST_CASE("RuntimeConfig from an environment table") {
  auto d = FromEnvironmentLookup(Env({{"HOME", "/home/u"}}));
  REQUIRE(d.ok());
  CHECK(d->find_mode == FindMode::kDynamicHybrid);
  CHECK(d->find_enforce == FindEnforce::kNone);
  CHECK(d->user_db_dir == "/home/u/.config/miopen");
  CHECK(d->system_db_dir.empty());
  CHECK(d->kernel_cache_dir == "/home/u/.cache/tuna/kernels");
  CHECK(!d->logging_cmd);

  auto c = FromEnvironmentLookup(Env({{"HOME", "/h"},
                                      {"MIOPEN_FIND_MODE", "fast"},
                                      {"MIOPEN_FIND_ENFORCE", "4"},
                                      {"MIOPEN_USER_DB_PATH", "~/udb"},
                                      {"MIOPEN_SYSTEM_DB_PATH", "/sys/db"},
                                      {"MIOPEN_CUSTOM_CACHE_DIR", "$HOME/kc"},
                                      {"MIOPEN_ENABLE_LOGGING_CMD", "1"},
                                      {"MIOPEN_DEVICE_CU", "104"},
                                      {"TUNA_BACKEND", "cpu"}}));
  REQUIRE(c.ok());
  CHECK(c->find_mode == FindMode::kFast);
  CHECK(c->find_enforce == FindEnforce::kSearchDbUpdate);
  CHECK(c->user_db_dir == "/h/udb");
  CHECK(c->system_db_dir == "/sys/db");
  CHECK(c->kernel_cache_dir == "/h/kc");
  CHECK(c->logging_cmd);
  CHECK(c->device_cu == 104);
  CHECK(c->backend == "cpu");

  auto empty_user = FromEnvironmentLookup(Env({{"MIOPEN_USER_DB_PATH", ""}}));
  REQUIRE(empty_user.ok());
  CHECK(empty_user->user_db_dir.empty());

  auto bad = FromEnvironmentLookup(Env({{"MIOPEN_FIND_MODE", "4"}}));
  REQUIRE(!bad.ok());
  CHECK(std::string(bad.status().message()).find("MIOPEN_FIND_MODE") != std::string::npos);
  CHECK(!FromEnvironmentLookup(Env({{"MIOPEN_ENABLE_LOGGING_CMD", "maybe"}})).ok());
}

TEST_CASE("db file names follow MIOpen's scheme") {
  DbFiles f = MakeDbFiles(backend::BackendKind::kHip, "gfx90a:sramecc+:xnack-", 104, "/s", "/u");
  CHECK(f.basename == "gfx90a68");
  CHECK(f.system_find_db == "/s/gfx90a68.HIP.fdb.txt");
  CHECK(f.system_perf_db_txt == "/s/gfx90a68.db.txt");
  CHECK(f.system_perf_db_sqlite == "/s/gfx90a68.db");
  CHECK(f.system_kdb == "/s/gfx90a68.kdb");
  CHECK(f.system_kdb_arch == "/s/gfx90a.kdb");
  CHECK(f.user_find_db == "/u/gfx90a68.HIP.1_0_0.ufdb.txt");
  CHECK(f.user_perf_db == "/u/gfx90a68.HIP.1_0_0.udb.txt");
  DbFiles n = MakeDbFiles(backend::BackendKind::kCpu, "cpu-avx2", 16, "", "");
  CHECK(n.basename == "cpu-avx2_16");
  CHECK(n.system_find_db.empty());
  CHECK(n.user_find_db.empty());
}

TEST_CASE("LOGGING_CMD: MIOpen's exact format, re-parses to the same problem") {
  const Problem p = testing::ParseOne("conv -n 2 -c 16 -H 32 -W 32 -k 16 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1");
  CHECK(LogCmdLine(backend::BackendKind::kHip, "LogCmdFindConvolution", p, false) ==
        "MIOpen(HIP): Command [LogCmdFindConvolution] ./bin/MIOpenDriver conv -n 2 -c 16 -H 32 -W 32 -k 16 "
        "-y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1");
  const std::vector<std::string> lines = {
      "convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 --in_layout NHWC "
      "--fil_layout NHWC --out_layout NHWC -g 1 -F 2",
      "convbfp16 -n 4 -c 32 -H 14 -W 14 -k 64 -y 1 -x 1 -p 0 -q 0 -u 2 -v 2 -l 1 -j 1 -g 4 -F 4",
      "conv -n 2 -c 8 --in_d 4 -H 6 -W 6 -k 8 --fil_d 3 -y 3 -x 3 --pad_d 1 -p 1 -q 1 --conv_stride_d 1 "
      "-u 1 -v 1 --dilation_d 1 -l 2 -j 2 --spatial_dim 3 -g 2 -F 1",
      "conv -n 1 -c 3 -H 7 -W 9 -k 5 -y 2 -x 3 -p 0 -q 2 -u 3 -v 1 -l 1 -j 2 -g 1 -F 4",
  };
  for (const std::string& l : lines) {
    const Problem q = testing::ParseOne(l);
    const std::string log = LogCmdLine(backend::BackendKind::kCpu, "LogCmdConvolution", q, true);
    CHECK(log.starts_with("MIOpen(CPU): Command [LogCmdConvolution] ./bin/MIOpenDriver conv"));
    CHECK(log.ends_with(" -t 1 -S 0"));
    auto back = ParseDriverLine(log);
    REQUIRE(back.ok());
    REQUIRE(back->size() == 1);
    CHECK(back->front() == q);
  }
}
