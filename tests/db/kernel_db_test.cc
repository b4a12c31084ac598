#include "tuner_core/db/kernel_db.h"

#include <sqlite3.h>

#include <random>

#include "catch2/catch.hpp"
#include "tests/db/test_util.h"
#include "tuner_core/db/codec.h"

namespace tuna::db {
namespace {

using test::Slurp;
using test::TestData;
using test::TmpPath;

std::string Compressible() {
  std::string s;
  for (int i = 0; i < 2000; ++i) s += "ELF code object section " + std::to_string(i % 7) + "\n";
  return s;
}

std::string Incompressible() {
  std::mt19937 rng(42);  // fixed seed: same bytes every run
  std::string s(4096, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

std::vector<KernelDbEntry> Entries() {
  return {MakeKernelDbEntry("naive_conv.cpp", " -DMIOPEN_USE_FP16=1", "gfx942", Compressible()),
          MakeKernelDbEntry("conv1x1u.s.o", " -Wa,-defsym,x=1", "gfx942", Incompressible()),
          MakeKernelDbEntry("igemm.mlir", "--x2 1", "gfx942", "tiny"),
          MakeKernelDbEntry("MIOpenIm2d2Col.cl", " -mcpu=gfx90a", "gfx942", "")};
}

TEST_CASE("kernel key rules: .o suffix and -mcpu") {
  auto e = Entries();
  CHECK(e[0].kernel_name == "naive_conv.cpp.o");
  CHECK(e[0].kernel_args == " -DMIOPEN_USE_FP16=1 -mcpu=gfx942");
  CHECK(e[1].kernel_name == "conv1x1u.s.o");
  CHECK(e[1].kernel_args == " -Wa,-defsym,x=1 -mcpu=gfx942");
  CHECK(e[2].kernel_name == "igemm.mlir.o");
  CHECK(e[2].kernel_args == "--x2 1");  // no -mcpu for MLIR
  CHECK(e[3].kernel_args == " -mcpu=gfx90a");  // already present
}

TEST_CASE("bzip2 like MIOpen: compressible shrinks, incompressible is stored raw") {
  auto c = Bz2CompressLikeMiopen(Compressible());
  REQUIRE(c.ok());
  CHECK(c->uncompressed_size == Compressible().size());
  CHECK(c->bytes.size() < Compressible().size());
  CHECK(c->bytes.substr(0, 4) == "BZh9");
  CHECK(*Bz2DecompressLikeMiopen(c->bytes, c->uncompressed_size) == Compressible());
  auto raw = Bz2CompressLikeMiopen(Incompressible());
  REQUIRE(raw.ok());
  CHECK(raw->uncompressed_size == 0);
  CHECK(raw->bytes == Incompressible());
  CHECK(Md5Hex("") == "d41d8cd98f00b204e9800998ecf8427e");
  CHECK(Md5Hex("abc") == "900150983cd24fb0d6963f7d28e17f72");
}

std::string Dump(const std::string& path) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(db,
                             "SELECT id, kernel_name, kernel_args, kernel_hash, uncompressed_size, "
                             "typeof(kernel_blob), length(kernel_blob) > 0, substr(hex(kernel_blob),"
                             " 1, 8) FROM kern_db ORDER BY id;",
                             -1, &st, nullptr) == SQLITE_OK);
  std::string out;
  while (sqlite3_step(st) == SQLITE_ROW) {
    for (int i = 0; i < sqlite3_column_count(st); ++i) {
      if (i) out += '|';
      out += reinterpret_cast<const char*>(sqlite3_column_text(st, i));
    }
    out += '\n';
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

TEST_CASE("kdb rows match the golden dump, files are byte-identical, round trip is exact") {
  KernelDbWriter w;
  for (auto& e : Entries()) w.Add(e);
  w.Add(MakeKernelDbEntry("igemm.mlir", "--x2 1", "gfx942", "replaced"));  // last wins
  w.Add(MakeKernelDbEntry("igemm.mlir", "--x2 1", "gfx942", "tiny"));
  CHECK(w.size() == 4);
  std::string a = TmpPath("a.kdb"), b = TmpPath("b.kdb");
  absl::Status st = w.Write(a);
  INFO(st.ToString());
  REQUIRE(st.ok());
  REQUIRE(w.Write(b).ok());
  CHECK(Slurp(a) == Slurp(b));
  CHECK(Dump(a) == Slurp(TestData("small_kern_db.dump")));

  auto r = KernelDbReader::Open(a);
  REQUIRE(r.ok());
  auto all = r->ReadAll();
  REQUIRE(all.ok());
  std::vector<KernelDbEntry> want = Entries();
  std::sort(want.begin(), want.end(), [](const auto& x, const auto& y) {
    return std::tie(x.kernel_name, x.kernel_args) < std::tie(y.kernel_name, y.kernel_args);
  });
  CHECK(*all == want);
  auto blob = r->Find("naive_conv.cpp.o", " -DMIOPEN_USE_FP16=1 -mcpu=gfx942");
  REQUIRE(blob.ok());
  CHECK(*blob == Compressible());
  auto missing = r->Find("naive_conv.cpp.o", " -mcpu=gfx942");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("an md5 mismatch is reported as possible database corruption") {
  KernelDbWriter w;
  for (auto& e : Entries()) w.Add(e);
  std::string path = TmpPath("corrupt.kdb");
  REQUIRE(w.Write(path).ok());
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  // Flip the raw (incompressible) blob's first byte; its hash stays the same.
  REQUIRE(sqlite3_exec(db,
                       "UPDATE kern_db SET kernel_blob = X'00' || substr(kernel_blob, 2) WHERE "
                       "kernel_name = 'conv1x1u.s.o';",
                       nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(db);
  auto r = KernelDbReader::Open(path);
  REQUIRE(r.ok());
  auto one = r->Find("conv1x1u.s.o", " -Wa,-defsym,x=1 -mcpu=gfx942");
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().code() == absl::StatusCode::kDataLoss);
  CHECK(std::string(one.status().message()).find("possible database corruption") !=
        std::string::npos);
  CHECK_FALSE(r->ReadAll().ok());
  CHECK(r->Find("naive_conv.cpp.o", " -DMIOPEN_USE_FP16=1 -mcpu=gfx942").ok());
}

}  // namespace
}  // namespace tuna::db
