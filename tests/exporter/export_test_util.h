// Shared pieces of the exporter tests: a small session inserted through result_store, a test
// algorithm resolver, file helpers and SQL dumps of the SQLite outputs.
#pragma once

#include <sqlite3.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "exporter/exporter.h"
#include "schema/store/result_store.h"
#include "tuner_core/problem/problem.h"

namespace tuna::exporter::test {

inline std::string TmpDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string TestData(const std::string& name) { return "tests/exporter/testdata/" + name; }

// Compares with a golden file; on a mismatch the actual text is written next to the test's
// outputs (TEST_UNDECLARED_OUTPUTS_DIR) so it can be inspected and, if right, copied over.
inline void CheckGolden(const std::string& golden, const std::string& actual) {
  if (const char* out = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR")) {
    std::ofstream(std::string(out) + "/" + golden, std::ios::binary) << actual;
  }
  std::ifstream in(TestData(golden), std::ios::binary);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  CHECK(s.str() == actual);
}

// Rows of a SQLite query as text: one line per row, columns joined by '|', blobs as
// "<N bytes>" (their content is checked through the readers).
inline std::string DumpSqlite(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK);
  std::string out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      if (i) out += '|';
      if (sqlite3_column_type(st, i) == SQLITE_BLOB) {
        out += "<" + std::to_string(sqlite3_column_bytes(st, i)) + " bytes>";
      } else if (const unsigned char* t = sqlite3_column_text(st, i)) {
        out += reinterpret_cast<const char*>(t);
      } else {
        out += "NULL";
      }
    }
    out += '\n';
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

inline std::string DumpPerfDb(const std::string& path) {
  return DumpSqlite(path, "SELECT * FROM config ORDER BY id") + "--\n" +
         DumpSqlite(path, "SELECT * FROM perf_db ORDER BY id");
}
inline std::string DumpKernelDb(const std::string& path) {
  return DumpSqlite(path, "SELECT * FROM kern_db ORDER BY id");
}

// Solvers' algorithm families for the tests (the real resolver reads tuna's solver registry).
inline AlgorithmResolver TestResolver() {
  return [](std::string_view solver, Direction d) -> absl::StatusOr<std::string> {
    static const std::map<std::string, std::string, std::less<>> kFamily = {
        {"ConvDirectNaiveConvFwd", "Direct"}, {"TunaDirectTiled", "Direct"},
        {"TunaIgemm", "ImplicitGEMM"},       {"TunaWinograd", "Winograd"},
        {"TunaFft", "FFT"},                  {"TunaRetired", "Direct"}};
    auto it = kFamily.find(solver);
    if (it == kFamily.end()) return absl::NotFoundError("unknown solver");
    const char* dir = d == Direction::kForward        ? "Fwd"
                      : d == Direction::kBackwardData ? "BwdData"
                                                      : "BwdWeights";
    return std::string("miopenConvolution") + dir + "Algo" + it->second;
  };
}

inline Problem Conv2d(int64_t n, int64_t c, int64_t k, int64_t hw, int64_t f, int64_t pad,
                      Direction dir, DataType type = DataType::kFp32) {
  Problem p;
  p.n = n;
  p.c = c;
  p.k = k;
  p.in = {1, hw, hw};
  p.fil = {1, f, f};
  p.pad = {0, pad, pad};
  p.direction = dir;
  p.data_type = type;
  return p;
}

}  // namespace tuna::exporter::test
