// The admin subcommands of the real `tuna` binary against a fixture database (--db URL):
// exit codes, --json output and that each command reaches the database.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "catch2/catch.hpp"
#include "tests/fixtures/mariadb_fixture.h"

using tuna::testing::MariadbTest;

namespace {

struct Result {
  int rc = -1;
  std::string out;  // stdout only
};

// The fixture's password reaches the binary through TUNA_DB_PASSWORD (never argv).
Result Tuna(const MariadbTest& t, const std::string& args) {
  setenv("TUNA_DB_PASSWORD", t.connection().password.c_str(), 1);
  const std::string cmd = "cli/tuna --log-level warn --db '" + t.connection().Redacted() + "' " +
                          args + " 2>/dev/null";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "tuna admin subcommands end to end", "[mariadb][admin][cli]") {
  const std::string file = "tests/admin/testdata/resnet50_n32.txt";
  auto imp = Tuna(*this, "import -t r50 -f " + file + " --json");
  REQUIRE(imp.rc == 0);
  CHECK(imp.out.find("\"configs_new\": 69") != std::string::npos);
  CHECK(Tuna(*this, "import -t r50 -f " + file + " --json").out.find("\"configs_new\": 0") !=
        std::string::npos);

  auto solvers = Tuna(*this, "solvers update --json");
  REQUIRE(solvers.rc == 0);
  CHECK(solvers.out.find("\"added\": ") != std::string::npos);
  CHECK(Tuna(*this, "solvers update --json").out.find("\"added\": 0") != std::string::npos);
  auto list = Tuna(*this, "solvers list --json");
  REQUIRE(list.rc == 0);
  CHECK(list.out.find("\"ConvDirectNaiveConvFwd\"") != std::string::npos);

  auto session = Tuna(*this, "session init -l cli --arch gfx90a --num_cu 104 --json");
  REQUIRE(session.rc == 0);
  CHECK(session.out.find("{\"session_id\": 1,") == 0);
  CHECK(Tuna(*this, "session init -l nothing").rc != 0);  // neither --arch nor --detect
  CHECK(Tuna(*this, "session list").out.find("gfx90a") != std::string::npos);

  REQUIRE(Tuna(*this, "applicability update --session_id 1").rc == 0);
  auto load = Tuna(*this, "jobs load --session_id 1 -t r50 --fin_steps "
                          "miopen_find_compile,miopen_find_eval -o --json");
  REQUIRE(load.rc == 0);
  const auto pos = load.out.find("\"new\": ");
  REQUIRE(pos != std::string::npos);
  const long added = std::strtol(load.out.c_str() + pos + 7, nullptr, 10);
  CHECK(added >= 69);  // the naive solvers apply to every direction
  auto reload = Tuna(*this, "jobs load --session_id 1 -t r50 --fin_steps "
                            "miopen_find_compile,miopen_find_eval -o --json");
  CHECK(reload.out.find("\"new\": 0") != std::string::npos);
  CHECK(Tuna(*this, "jobs load --session_id 1 -t r50 --fin_steps bogus").rc != 0);

  auto status = Tuna(*this, "status --session_id 1 --json");
  REQUIRE(status.rc == 0);
  CHECK(status.out.find("\"total\": " + std::to_string(added)) != std::string::npos);
  CHECK(status.out.find("\"new\": " + std::to_string(added)) != std::string::npos);
  CHECK(Tuna(*this, "jobs reset --session_id 1 --state failed,errored --json").out ==
        "{\"session_id\": 1, \"reset\": 0}\n");
  CHECK(Tuna(*this, "jobs reset --session_id 1 --state nonsense").rc != 0);

  auto bad = Tuna(*this, "import -t x -f tests/admin/cli_test.cc");
  CHECK(bad.rc != 0);
  CHECK(Tuna(*this, "import-db --session_id 99 " + file).rc != 0);
}
