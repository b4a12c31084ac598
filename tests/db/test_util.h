#pragma once

#include <cstdlib>
#include <string>

#include "catch2/catch.hpp"
#include "tuner_core/db/text_record.h"

namespace tuna::db::test {

inline std::string TestData(const std::string& name) { return "tests/db/testdata/" + name; }

// MIOpen's shipped gfx942130 dbs, kept once for all test packages under tests/problem.
inline std::string MiopenData(const std::string& name) { return "tests/problem/testdata/miopen/" + name; }

inline std::string TmpPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

inline std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  REQUIRE(s.ok());
  return *s;
}

}  // namespace tuna::db::test
