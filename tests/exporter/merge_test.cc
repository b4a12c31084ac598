// Unit tests of the exporter's folding and merges (no database).
#include <map>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "exporter/formats.h"
#include "tuner_core/problem/keys.h"

namespace tuna::exporter::internal {
namespace {

Problem Fwd() {
  Problem p;
  p.n = 2;
  p.c = 8;
  p.k = 16;
  p.in = {1, 10, 10};
  p.fil = {1, 3, 3};
  return p;
}

AlgorithmResolver Resolver() {
  return [](std::string_view solver, Direction d) -> absl::StatusOr<std::string> {
    if (solver == "Unknown") return absl::NotFoundError("no");
    return std::string(d == Direction::kForward ? "miopenConvolutionFwdAlgoDirect"
                                                : "miopenConvolutionBwdDataAlgoDirect");
  };
}

}  // namespace

TEST_CASE("find results sharing a key keep the faster per solver", "[exporter]") {
  // Configs 1 and 2 have the same MIOpen key (as a transpose problem and its mirror do).
  const std::map<int64_t, Problem> problems = {{1, Fwd()}, {2, Fwd()}};
  const std::vector<schema::FindResultRow> rows = {
      {10, 1, "A", 0.5, 0, 100}, {11, 2, "A", 0.4, 8, 101}, {12, 1, "B", 0.3, 0, 102},
      {13, 2, "B", 0.3, 0, 103},  // a tie: same time and workspace, smaller config id (1) kept
      {14, 1, "Unknown", 0.1, 0, 104}, {15, 3, "A", 0.1, 0, 105}};  // config 3 is not usable
  IncomingFind f = FoldFindResults(rows, problems, Resolver());
  CHECK(f.skipped_unknown_solver == 1);
  CHECK(f.skipped_bad_config == 1);
  CHECK(f.warnings.size() == 1);
  REQUIRE(f.db.size() == 1);
  const std::string key = FindDbKey(Fwd());
  CHECK(f.db.at(key) == std::vector<db::FindDbEntry>{{"B", 0.3f, 0, "miopenConvolutionFwdAlgoDirect"},
                                                     {"A", 0.4f, 8, "miopenConvolutionFwdAlgoDirect"}});
  CHECK(f.fastest_job.at(key) == std::optional<int64_t>(102));
}

TEST_CASE("transpose problems are filed under the mirrored direction", "[exporter]") {
  Problem t = Fwd();
  t.mode = ConvMode::kTrans;
  CHECK(KeyDirection(t) == Direction::kBackwardData);
  t.direction = Direction::kBackwardData;
  CHECK(KeyDirection(t) == Direction::kForward);
  CHECK(KeyDirection(Fwd()) == Direction::kForward);
}

TEST_CASE("perf db merge: faster replaces, slower and untouched are kept", "[exporter]") {
  const PerfDbConfig c1 = ToPerfDbConfig(Fwd());
  Problem other = Fwd();
  other.k = 32;
  const PerfDbConfig c2 = ToPerfDbConfig(other);
  const std::string k1 = FindDbKey(Fwd());
  const std::vector<db::PerfDbRow> existing = {
      {c1, "A", "a-old"}, {c1, "B", "b-old"}, {c1, "C", "c-old"}, {c1, "D", "d-same"},
      {c2, "A", "untouched"}};
  db::FindDb existing_find;
  existing_find[k1] = {{"A", 0.5f, 0, "x"}, {"B", 0.2f, 0, "x"}};  // no time for C
  IncomingPerf incoming;
  incoming[c1]["A"] = {"a-new", 0.4f, k1};   // 0.4 < 0.5: improved
  incoming[c1]["B"] = {"b-new", 0.3f, k1};   // 0.3 > 0.2: existing kept
  incoming[c1]["C"] = {"c-new", 9.0f, k1};   // no existing time: replaced
  incoming[c1]["D"] = {"d-same", 9.0f, k1};  // same params: unchanged
  incoming[c1]["E"] = {"e", 1.0f, k1};       // added
  PerfMergeResult m = MergePerfDb(existing, incoming, existing_find);
  CHECK(m.counts.added == 1);
  CHECK(m.counts.improved == 1);
  CHECK(m.counts.unchanged == 2);
  CHECK(m.counts.replaced_untimed == 1);
  CHECK(m.counts.kept == 1);
  std::map<std::string, std::string> c1_params;
  for (const auto& r : m.rows) {
    if (r.config == c1) c1_params[r.solver] = r.params;
  }
  CHECK(c1_params == std::map<std::string, std::string>{
                         {"A", "a-new"}, {"B", "b-old"}, {"C", "c-new"}, {"D", "d-same"}, {"E", "e"}});
  CHECK(m.rows.size() == 6);

  // Without an existing find db every changed row is "replaced without a time".
  PerfMergeResult untimed = MergePerfDb(existing, incoming, std::nullopt);
  CHECK(untimed.counts.replaced_untimed == 3);
  CHECK(untimed.counts.improved == 0);
}

TEST_CASE("kernel db merge: union, incoming wins on an equal key", "[exporter]") {
  const std::vector<db::KernelDbEntry> existing = {
      {"a.o", "-x", "old a"}, {"b.o", "-x", "same b"}, {"c.o", "-x", "kept c"}};
  const std::vector<db::KernelDbEntry> incoming = {
      {"a.o", "-x", "new a"}, {"b.o", "-x", "same b"}, {"d.o", "-x", "d1"}, {"d.o", "-x", "d2"}};
  KernelMergeResult m = MergeKernelDb(existing, incoming);
  CHECK(m.counts.added == 1);
  CHECK(m.counts.replaced == 1);
  CHECK(m.counts.unchanged == 1);
  CHECK(m.counts.kept == 1);
  CHECK(m.entries == std::vector<db::KernelDbEntry>{{"a.o", "-x", "new a"},
                                                    {"b.o", "-x", "same b"},
                                                    {"c.o", "-x", "kept c"},
                                                    {"d.o", "-x", "d2"}});
}

TEST_CASE("find merge counts: unmatched existing entries are kept", "[exporter]") {
  db::MergeReport r;
  r.added_entries = 2;
  r.improved_entries = 1;
  r.unchanged_entries = 3;
  FileMergeCounts c = FindMergeCounts(r, 10);
  CHECK(c.added == 2);
  CHECK(c.improved == 1);
  CHECK(c.unchanged == 3);
  CHECK(c.kept == 6);
}

}  // namespace tuna::exporter::internal
