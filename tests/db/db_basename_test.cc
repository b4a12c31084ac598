#include "tuner_core/db/db_basename.h"

#include "catch2/catch.hpp"

namespace tuna::db {
namespace {

TEST_CASE("DbBasename follows MIOpen's decimal/hex rule") {
  CHECK(DbBasename("gfx906", 60) == "gfx906_60");
  CHECK(DbBasename("gfx900", 56) == "gfx900_56");
  CHECK(DbBasename("gfx908", 120) == "gfx90878");
  CHECK(DbBasename("gfx90a", 104) == "gfx90a68");
  CHECK(DbBasename("gfx90a", 110) == "gfx90a6e");
  CHECK(DbBasename("gfx942", 304) == "gfx942130");
  CHECK(DbBasename("sm_90", 132) == "sm_9084");
  CHECK(DbBasename("gfx1030", 64) == "gfx1030_64");
  CHECK(DbBasename("gfx1030", 65) == "gfx103041");
}

TEST_CASE("ParseDbBasename inverts DbBasename") {
  struct Case {
    const char* name;
    const char* arch;
    uint32_t cu;
  } cases[] = {{"gfx906_60", "gfx906", 60},     {"gfx90878", "gfx908", 120},
               {"gfx942130", "gfx942", 304},    {"gfx90a6e", "gfx90a", 110},
               {"sm_9084", "sm_90", 132},       {"gfx1030_36", "gfx1030", 36},
               {"gfx1100c0", "gfx1100", 192},   {"sm_86_46", "sm_86", 46},
               {"sm_10094", "sm_100", 148},     {"gfx90a_xnack68", "gfx90a_xnack", 104},
               {"gfx906_nosramecc_60", "gfx906_nosramecc", 60}};
  for (const Case& c : cases) {
    INFO(c.name);
    auto p = ParseDbBasename(c.name);
    REQUIRE(p.ok());
    CHECK(p->arch == c.arch);
    CHECK(p->num_cu == c.cu);
    CHECK(DbBasename(p->arch, p->num_cu) == c.name);
  }
}

TEST_CASE("ParseDbBasename rejects ambiguous or non-canonical names") {
  CHECK_FALSE(ParseDbBasename("gfx906").ok());        // no CU count
  CHECK_FALSE(ParseDbBasename("gfx906_65").ok());     // > 64 must be hex
  CHECK_FALSE(ParseDbBasename("gfx90640").ok());      // hex 0x40 = 64 must be decimal
  CHECK_FALSE(ParseDbBasename("mygpu78").ok());       // unknown arch length
  CHECK_FALSE(ParseDbBasename("gfx942_0130").ok());   // decimal > 64
  CHECK_FALSE(ParseDbBasename("gfx94213G").ok());     // not hex
  CHECK_FALSE(ParseDbBasename("").ok());
}

}  // namespace
}  // namespace tuna::db
