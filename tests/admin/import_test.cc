// `tuna import` against a real MariaDB: counts, idempotence, atomicity, verbatim tags.
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "admin/import_configs.h"
#include "catch2/catch.hpp"
#include "schema/store/config_store.h"
#include "tests/fixtures/mariadb_fixture.h"
#include "tests/fixtures/read_file.h"

using tuna::admin::ImportDriverFile;
using tuna::admin::ImportDriverText;
using tuna::admin::ImportOptions;
using tuna::testing::MariadbTest;

namespace {

const char* kResnet = "tests/admin/testdata/resnet50_n32.txt";

ImportOptions Tag(const std::string& tag, bool recurrent = false) {
  ImportOptions o;
  o.tag = tag;
  o.mark_recurrent = recurrent;
  return o;
}

int64_t Scalar(tuna::schema::Database& db, const std::string& sql) {
  auto rows = db.Query(sql);
  REQUIRE(rows.ok());
  return (*rows)[0].Int(0);
}

// Row count and an order-independent checksum of everything the import touches.
std::string Fingerprint(tuna::schema::Database& db) {
  auto rows = db.Query(
      "SELECT (SELECT COUNT(*) FROM conv_config), (SELECT COALESCE(SUM(CRC32(CONCAT_WS('|', id, "
      "config_hash, driver))), 0) FROM conv_config), (SELECT COUNT(*) FROM config_tag), "
      "(SELECT COALESCE(SUM(CRC32(CONCAT_WS('|', id, config_id, tag, recurrent))), 0) FROM "
      "config_tag)");
  REQUIRE(rows.ok());
  const auto& r = (*rows)[0];
  return r.String(0) + "/" + r.String(1) + "/" + r.String(2) + "/" + r.String(3);
}

}  // namespace

TEST_CASE_METHOD(MariadbTest, "Importing resnet50 gives 69 configs once, tags merge",
                 "[mariadb][admin][import]") {
  // Stages for the progress display, each announced with nothing done and ended with its count.
  std::vector<std::string> calls;
  ImportOptions o = Tag("resnet50");
  o.progress = [&](std::string_view stage, int64_t done, int64_t total) {
    calls.push_back(std::string(stage) + " " + std::to_string(done) + "/" + std::to_string(total));
  };
  auto first = ImportDriverFile(db(), kResnet, o);
  REQUIRE(first.ok());
  CHECK(calls == std::vector<std::string>{"lines parsed 0/0", "lines parsed 23/23",
                                          "configs written 0/0", "configs written 69/69",
                                          "configs tagged 0/0", "configs tagged 69/69"});
  CHECK(first->lines == 23);
  CHECK(first->problems == 69);
  CHECK(first->configs_new == 69);
  CHECK(first->configs_known == 0);
  CHECK(first->tags_added == 69);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 69);
  for (const char* dir : {"F", "B", "W"}) {
    CHECK(Scalar(db(), std::string("SELECT COUNT(*) FROM conv_config WHERE direction = '") + dir +
                           "'") == 23);
  }

  // Same file, same tag: nothing new.
  auto again = ImportDriverFile(db(), kResnet, Tag("resnet50"));
  REQUIRE(again.ok());
  CHECK(again->configs_new == 0);
  CHECK(again->configs_known == 69);
  CHECK(again->tags_added == 0);

  // Second tag: only tags.
  auto second = ImportDriverFile(db(), kResnet, Tag("resnet50-copy", true));
  REQUIRE(second.ok());
  CHECK(second->configs_new == 0);
  CHECK(second->tags_added == 69);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config") == 69);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM config_tag") == 138);
  CHECK(Scalar(db(), "SELECT SUM(recurrent) FROM config_tag WHERE tag = 'resnet50-copy'") == 69);

  // The stored rows read back as the same problems.
  tuna::schema::ConfigStore store(db());
  auto listed = store.List(std::string("resnet50"));
  REQUIRE(listed.ok());
  REQUIRE(listed->size() == 69);
  for (const auto& c : *listed) CHECK(tuna::schema::ConfigHash(c.problem).size() == 64);
}

TEST_CASE_METHOD(MariadbTest, "Duplicates inside one file merge, also across spellings",
                 "[mariadb][admin][import]") {
  const std::string text =
      "# comment\n"
      "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 1\n"
      "\n"
      "./bin/MIOpenDriver conv -F 1 -x 1 -y 1 -k 64 -W 56 -H 56 -c 64 -n 32\n"
      "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -g 1 -F 1 -t 1\n"
      "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 1 -x 1 -F 0\n";
  auto r = ImportDriverText(db(), text, Tag("dups"));
  REQUIRE(r.ok());
  CHECK(r->lines == 4);
  CHECK(r->problems == 6);
  CHECK(r->unique_configs == 3);
  CHECK(r->configs_new == 3);
  CHECK(r->tags_added == 3);
}

TEST_CASE_METHOD(MariadbTest, "A bad line anywhere: error names every bad line, nothing changes",
                 "[mariadb][admin][import]") {
  REQUIRE(ImportDriverFile(db(), kResnet, Tag("before")).ok());
  const std::string before = Fingerprint(db());

  std::string text = tuna::testing::ReadFile(kResnet);
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  REQUIRE(lines.size() == 24);
  // Line 13 (1-based) becomes bad; add a new valid problem so a partial write would show.
  lines[12] = "conv -n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -F 1 -g 5";
  lines.push_back("conv -n 7 -c 3 -H 9 -W 9 -k 5 -y 3 -x 3 -F 1");
  lines.push_back("conv -n 1 -c 1 -H 1 -W 1 -k 1 -y 9 -x 9 -p 9 -m trans -F 1");  // empty: bad too
  std::string bad;
  for (const auto& l : lines) bad += l + "\n";

  auto r = ImportDriverText(db(), bad, Tag("after"));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string msg(r.status().message());
  CHECK(msg.find("2 bad lines") != std::string::npos);
  CHECK(msg.find("line 13:") != std::string::npos);
  CHECK(msg.find("line 26:") != std::string::npos);
  CHECK(msg.find("line 25:") == std::string::npos);
  CHECK(Fingerprint(db()) == before);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM config_tag WHERE tag = 'after'") == 0);
}

TEST_CASE_METHOD(MariadbTest, "Transposed lines are stored as the convolutions MIOpen runs them as",
                 "[mariadb][admin][import]") {
  // Transposed forward of x (2, 8, 9, 11): the backward data of the convolution of y (2, 4, 18, 21).
  const std::string trans =
      "convfp16 -n 2 -c 8 -H 9 -W 11 -k 4 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 0 "
      "--trans_output_pad_h 1\n";
  auto r = ImportDriverText(db(), trans, Tag("gan"));
  REQUIRE(r.ok());
  CHECK(r->problems == 3);
  CHECK(r->transposed == 3);
  CHECK(r->configs_new == 3);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config WHERE mode = 'trans'") == 0);
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM conv_config WHERE direction = 'B' AND in_channels = 4 AND "
                     "out_channels = 8 AND in_h = 18 AND in_w = 21") == 1);
  // The same convolutions written as such are the same configs.
  auto again = ImportDriverText(
      db(),
      "convfp16 -n 2 -c 4 -H 18 -W 21 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m conv -g 1 -F 2\n",
      Tag("gan"));
  REQUIRE(again.ok());
  CHECK(again->transposed == 0);
  CHECK(again->configs_known == 1);
  // No convolution has the shape of an output padding past the stride (but below the dilation).
  const std::string before = Fingerprint(db());
  auto bad = ImportDriverText(
      db(), "conv -n 1 -c 4 -H 5 -W 5 -k 6 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 3 -j 1 -m trans -F 1 -Y 2\n",
      Tag("gan"));
  REQUIRE_FALSE(bad.ok());
  CHECK(std::string(bad.status().message()).find("line 1: transposed convolution with trans_output_pad_h 2") !=
        std::string::npos);
  CHECK(Fingerprint(db()) == before);
}

TEST_CASE_METHOD(MariadbTest, "Tags with quotes, backslashes, SQL and UTF-8 are kept verbatim",
                 "[mariadb][admin][import]") {
  const std::vector<std::string> tags = {
      "it's \"quoted\"", "back\\slash\\", "'; DROP TABLE job; --", "Ünïcödé ✓ 日本語 🚀",
      "ResNet", "resnet", "cafe", "café", "trailing space "};
  const std::string line = "conv -n 2 -c 8 -H 10 -W 10 -k 8 -y 3 -x 3 -F 1\n";
  for (const auto& tag : tags) {
    auto r = ImportDriverText(db(), line, Tag(tag));
    REQUIRE(r.ok());
    CHECK(r->tags_added == 1);  // distinct from every other tag, even case/accent variants
  }
  tuna::schema::ConfigStore store(db());
  auto listed = store.Tags();
  REQUIRE(listed.ok());
  std::set<std::string> got;
  for (const auto& t : *listed) got.insert(t.tag);
  CHECK(got == std::set<std::string>(tags.begin(), tags.end()));
  for (const auto& tag : tags) {
    auto configs = store.List(tag);
    REQUIRE(configs.ok());
    CHECK(configs->size() == 1);
  }
  CHECK(Scalar(db(), "SELECT COUNT(*) FROM job") == 0);  // the table is still there

  CHECK_FALSE(ImportDriverText(db(), line, Tag("")).ok());
  CHECK_FALSE(ImportDriverText(db(), line, Tag(std::string(192, 'x'))).ok());
  CHECK(ImportDriverText(db(), line, Tag(std::string(191, 'x'))).ok());
}
