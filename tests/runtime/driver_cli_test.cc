// `tuna driver` end to end through the built binary (//cli:tuna as data): -V 1 verification,
// -t 1 kernel time, the choice's origin (benchmark, then system db), a second process over the
// same kernel cache compiling nothing, LOGGING_CMD on stderr, immediate mode with -S, and
// MIOPEN_FIND_MODE=4 rejected; the CLI conventions: `driver conv --help`, usage errors exit 2,
// global flags after the subcommand.
#include <array>
#include <cstdio>
#include <fstream>

#include "catch2/catch.hpp"
#include "tests/runtime/test_util.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/problem/keys.h"

using namespace tuna;
using tuna::testing::TempDir;

namespace {

std::string TunaPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  return std::string(srcdir != nullptr ? srcdir : ".") + "/tuna/cli/tuna";
}

struct Run {
  int rc = -1;
  std::string out;  // stdout and stderr
};

Run Exec(const std::string& env, const std::string& args) {
  const std::string cmd = env + " " + TunaPath() + " driver --backend cpu " + args + " 2>&1";
  Run r;
  FILE* f = popen(cmd.c_str(), "r");
  if (f == nullptr) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(f);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool Has(const Run& r, const std::string& s) { return r.out.find(s) != std::string::npos; }

constexpr const char* kArgs = "conv -n 1 -c 4 -H 8 -W 8 -k 4 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1";

}  // namespace

TEST_CASE("tuna driver conv: verifies, times, reports the origin; second process compiles nothing") {
  REQUIRE(testing::FileExists(TunaPath()));
  TempDir user("cli_user"), sys("cli_sys"), cache("cli_cache");
  const std::string env = "HOME=" + user.str() + " MIOPEN_USER_DB_PATH=" + user.str() +
                          " MIOPEN_CUSTOM_CACHE_DIR=" + cache.str() + " MIOPEN_FIND_MODE=NORMAL";
  Run a = Exec(env, std::string(kArgs) + " -V 1 -t 1 -i 3");
  INFO(a.out);
  REQUIRE(a.rc == 0);
  CHECK(Has(a, "Verifies OK on CPU reference"));
  CHECK(Has(a, "Kernel time: "));
  CHECK(Has(a, "from benchmark"));
  // MIOpenDriver's own lines, as its scripts grep them, each before tuna's line.
  CHECK(Has(a, "\nGPU Kernel Time Forward Conv. Elapsed: "));
  CHECK(Has(a, " ms (average)\nstats: name, n, c, ho, wo, x, y, k, flopCnt, bytesRead, "
               "bytesWritten, GFLOPs, GB/s, timeMs\nstats: fwd-conv3x3u1, 1, 4, 8, 8, 3, 3, 4,  "));
  CHECK(Has(a, "\nForward Convolution Verifies OK on CPU reference ("));
  CHECK(a.out.find("GPU Kernel Time") < a.out.find("Kernel time: "));
  CHECK(a.out.find("Forward Convolution Verifies OK") < a.out.find("\nVerifies OK on CPU"));
  CHECK(!Has(a, "kernels: 0 compiled"));

  // Second process, same cache dir: nothing compiled. With HYBRID the user find db record
  // written by the first run is the choice.
  Run b = Exec("HOME=" + user.str() + " MIOPEN_USER_DB_PATH=" + user.str() + " MIOPEN_CUSTOM_CACHE_DIR=" +
                   cache.str() + " MIOPEN_FIND_MODE=HYBRID MIOPEN_ENABLE_LOGGING_CMD=1",
               std::string(kArgs) + " -V 1");
  INFO(b.out);
  REQUIRE(b.rc == 0);
  CHECK(Has(b, "from user db"));
  CHECK(Has(b, "kernels: 0 compiled"));
  CHECK(Has(b, "Verifies OK on CPU reference"));
  // The LOGGING_CMD line of the run re-parses to the problem.
  const size_t at = b.out.find("MIOpen(CPU): Command [LogCmdConvolution] ./bin/MIOpenDriver ");
  REQUIRE(at != std::string::npos);
  const std::string line = b.out.substr(at, b.out.find('\n', at) - at);
  auto back = ParseDriverLine(line);
  REQUIRE(back.ok());
  CHECK(back->front() == testing::ParseOne(kArgs));
}

TEST_CASE("tuna driver: a system find db makes the choice (\"system db\"); -S immediate mode") {
  TempDir user("cli2_user"), sys("cli2_sys"), cache("cli2_cache");
  const Problem p = testing::ParseOne(kArgs);
  // The basename the binary will use: ask a handle with the same backend.
  auto h = testing::CpuHandle(testing::CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(h.ok());
  db::FindDb system;
  system[FindDbKey(p)] = {{"ConvDirectNaiveConvFwd", 0.125f, 0, "miopenConvolutionFwdAlgoDirect"}};
  REQUIRE(db::WriteFindDbFile((*h)->db().files().system_find_db, system).ok());
  const std::string env = "HOME=" + user.str() + " MIOPEN_USER_DB_PATH=" + user.str() + " MIOPEN_SYSTEM_DB_PATH=" +
                          sys.str() + " MIOPEN_CUSTOM_CACHE_DIR=" + cache.str();
  Run a = Exec(env + " MIOPEN_FIND_MODE=FAST", std::string(kArgs) + " -V 1");
  INFO(a.out);
  REQUIRE(a.rc == 0);
  CHECK(Has(a, "solver: ConvDirectNaiveConvFwd (id 85) from system db"));
  CHECK(Has(a, "Verifies OK"));

  Run s = Exec(env, std::string(kArgs) + " -V 1 -S TunaCpuGemmConv");
  INFO(s.out);
  REQUIRE(s.rc == 0);
  CHECK(Has(s, "solver: TunaCpuGemmConv (id 2001) from immediate mode"));
  CHECK(Has(s, "Verifies OK"));

  Run bad = Exec(env + " MIOPEN_FIND_MODE=4", kArgs);
  CHECK(bad.rc == 2);
  CHECK(Has(bad, "MIOPEN_FIND_MODE=4"));
  Run unknown = Exec(env, std::string(kArgs) + " -S NoSuchSolver");
  CHECK(unknown.rc != 0);
}

TEST_CASE("tuna driver -m trans: runs as the convolution MIOpen runs, reads MIOpen's keys for it") {
  TempDir user("cli4_user"), sys("cli4_sys"), cache("cli4_cache");
  const std::string trans =
      "conv -n 1 -c 6 -H 5 -W 5 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -Y 1 -X 1";
  const Problem p = testing::ParseOne(trans);
  auto h = testing::CpuHandle(testing::CpuConfig(user.str(), sys.str(), cache.str()));
  REQUIRE(h.ok());
  // A MIOpen find db files a transposed forward under its backward-data key, with a B solver.
  db::FindDb system;
  system[FindDbKey(p)] = {{"ConvDirectNaiveConvBwd", 0.125f, 0, "miopenConvolutionBwdDataAlgoDirect"}};
  REQUIRE(db::WriteFindDbFile((*h)->db().files().system_find_db, system).ok());
  const std::string env = "HOME=" + user.str() + " MIOPEN_USER_DB_PATH=" + user.str() + " MIOPEN_SYSTEM_DB_PATH=" +
                          sys.str() + " MIOPEN_CUSTOM_CACHE_DIR=" + cache.str();
  Run a = Exec(env + " MIOPEN_FIND_MODE=FAST", trans + " -V 1");
  INFO(a.out);
  REQUIRE(a.rc == 0);
  CHECK(Has(a, "runs as: ./bin/MIOpenDriver conv -n 1 -c 4 -H 10 -W 10 -k 6 "));
  CHECK(Has(a, " -F 2 "));
  CHECK(Has(a, "solver: ConvDirectNaiveConvBwd (id 86) from system db"));
  CHECK(Has(a, "\nForward Convolution Verifies OK on CPU reference ("));  // MIOpenDriver's line for -F 1
  Run found = Exec(env + " MIOPEN_FIND_MODE=NORMAL", trans + " -V 1");
  INFO(found.out);
  REQUIRE(found.rc == 0);
  CHECK(Has(found, "from benchmark"));
  CHECK(Has(found, "Verifies OK"));
}

TEST_CASE("tuna driver -s 1: search writes the user perf db") {
  TempDir user("cli3_user"), cache("cli3_cache");
  const std::string env = "HOME=" + user.str() + " MIOPEN_USER_DB_PATH=" + user.str() + " MIOPEN_CUSTOM_CACHE_DIR=" +
                          cache.str() + " MIOPEN_FIND_MODE=NORMAL MIOPEN_DEBUG_TUNING_ITERATIONS_MAX=2";
  Run a = Exec(env, std::string(kArgs) + " -V 1 -s 1");
  INFO(a.out);
  REQUIRE(a.rc == 0);
  CHECK(Has(a, "Verifies OK"));
  bool found = false;
  for (const auto& e : std::filesystem::directory_iterator(user.str())) {
    if (e.path().string().ends_with(".udb.txt")) {
      found = true;
      CHECK(testing::ReadFile(e.path().string()).find("TunaCpuGemmConv:") != std::string::npos);
    }
  }
  CHECK(found);
}

TEST_CASE("tuna CLI conventions: driver --help, usage errors exit 2, global flags after the subcommand") {
  REQUIRE(testing::FileExists(TunaPath()));
  auto exec = [](const std::string& args) {
    Run r;
    FILE* f = popen((TunaPath() + " " + args + " 2>&1").c_str(), "r");
    if (f == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(f);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  };
  Run help = exec("driver conv --help");
  INFO(help.out);
  CHECK(help.rc == 0);
  CHECK(Has(help, "MIOpenDriver's convolution flags"));
  Run bad = exec("tune --no-such-flag");
  CHECK(bad.rc == 2);
  CHECK(Has(bad, "--no-such-flag"));
  // A global flag after the subcommand is the global flag (here: a bad --log-format value is
  // refused by the global option's own check, not as an unexpected argument).
  Run late = exec("solvers list --progress sideways");
  INFO(late.out);
  CHECK(late.rc == 2);
  CHECK(!Has(late, "not expected"));
  CHECK(Has(late, "--progress"));
  Run ok = exec("devices --log-level warn");
  INFO(ok.out);
  CHECK(!Has(ok, "not expected"));
  // ... while a driver line keeps all its flags (-F, -t: not global, and -n never falls through).
  Run line = exec("problem parse conv -n 1 -c 4 -H 8 -W 8 -k 4 -y 3 -x 3 -F 1 -t 1");
  INFO(line.out);
  CHECK(line.rc == 0);
  CHECK(Has(line, "find-db key"));
  CHECK(!Has(line, "runs as:"));
  Run trans = exec("problem parse conv -n 1 -c 8 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -m trans -F 1 -Y 1 -X 1");
  INFO(trans.out);
  CHECK(trans.rc == 0);
  CHECK(Has(trans, "runs as:      ./bin/MIOpenDriver conv -n 1 -c 4 -H 12 -W 12 -k 8 "));
  CHECK(Has(trans, "find-db key:  8-6-6-3x3-4-12-12-1-1x1-2x2-1x1-0-NCHW-FP32-B"));
  // --target: the solvers that would tune it there (a transposed forward: backward-data solvers).
  Run fit = exec("problem parse --target sm_90 --why convfp16 -n 32 -c 64 -H 56 -W 56 -k 256 -y 1 -x 1 -F 1");
  INFO(fit.out);
  CHECK(fit.rc == 0);
  // (An NCHW 1x1 layer: TunaHopperTmaFwd runs it as per-image GEMMs, its channels-last adapter steps aside.)
  CHECK(Has(fit, "  solvers (sm_90): ConvDirectNaiveConvFwd TunaDirectTiledFwd TunaIgemmFwd TunaHopperTmaFwd "));
  CHECK(Has(fit, "    not applicable: TunaHopperTmaFwdNchw: TunaHopperTmaFwd runs these layouts without copies"));
  Run fit3 = exec("problem parse --target sm_90 --why convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -F 1");
  INFO(fit3.out);
  CHECK(Has(fit3, "TunaHopperTmaFwdNchw"));
  CHECK(Has(fit3, "    not applicable: TunaHopperTmaFwd: requires dense NHWC x, w and y"));
  CHECK(!Has(fit, "TunaIgemmBwd"));
  Run tfit = exec("problem parse --target cpu-avx2 conv -n 1 -c 8 -H 6 -W 6 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -m trans -F 1");
  INFO(tfit.out);
  CHECK(Has(tfit, "  solvers (cpu-avx2): ConvDirectNaiveConvBwd TunaCpuGemmConv"));
  CHECK(!Has(tfit, "not applicable"));
  // A file: a summary of the problems only the naive solver would tune (INT8 on sm_90).
  TempDir lines("cli_lines");
  const std::string two = lines / "two_lines.txt";
  {
    std::ofstream f(two);
    f << "convint8 -n 1 -c 8 -H 8 -W 8 -k 8 -y 3 -x 3 -F 1\n"
      << "convfp16 -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1\n";
  }
  Run file_fit = exec("problem parse --target sm_90 -f " + two);
  INFO(file_fit.out);
  CHECK(Has(file_fit, "# sm_90: 1 of 2 problem(s) only the naive solver would tune"));
  Run bad_target = exec("problem parse --target vax conv -n 1 -c 4 -H 8 -W 8 -k 4 -y 3 -x 3");
  CHECK(bad_target.rc == 2);
  CHECK(Has(bad_target, "--target"));
  // The database from the environment: a bad TUNA_DB, a half-set MITuna environment, each
  // named, before any server is started.
  auto exec_env = [](const std::string& env, const std::string& args) {
    Run r;
    FILE* f = popen(("env " + env + " " + TunaPath() + " " + args + " 2>&1").c_str(), "r");
    if (f == nullptr) return r;
    std::array<char, 4096> buf;
    size_t n;
    while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) r.out.append(buf.data(), n);
    const int st = pclose(f);
    r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
  };
  Run env_url = exec_env("TUNA_DB=postgres://x@y/z", "solvers list");
  INFO(env_url.out);
  CHECK(env_url.rc != 0);
  CHECK(Has(env_url, "TUNA_DB: "));
  Run half = exec_env("-u TUNA_DB TUNA_DB_HOSTNAME=db.example TUNA_DB_USER_NAME=u", "solvers list");
  INFO(half.out);
  CHECK(half.rc != 0);
  CHECK(Has(half, "TUNA_DB_NAME"));
}
