// MIOpen's text databases under seeded mutation (tests/fuzz/mutate.h): find-db lines and files
// (*.fdb.txt, current and legacy entry forms) and text perf-db lines and files (*.db.txt),
// through the real readers (tuner_core/db) and key parsers (tuner_core/problem). Nothing may
// crash; every refused line is a warning with its line number and a reason; what is accepted
// writes back and reads again to the same records; the streaming reader agrees with the
// whole-file reader.
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "catch2/catch.hpp"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/mutate.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/perf_db_text.h"
#include "tuner_core/problem/keys.h"
#include "tuner_core/problem/validate.h"

namespace tuna::fuzz {
namespace {

constexpr int kLines = 10000;

// Current-form lines of MIOpen's gfx942 find db, plus the legacy forms.
std::vector<std::string> FindDbLines() {
  std::vector<std::string> lines = Lines(Slurp("tests/problem/testdata/miopen/gfx942130.HIP.fdb.txt"));
  REQUIRE(lines.size() > 1000);
  for (std::string& l : Lines(Slurp("tests/db/testdata/legacy.fdb.txt"))) lines.push_back(l);
  return lines;
}

// Text perf-db lines: MIOpen's gfx942 SQLite perf db as sqlite2txt prints it.
std::vector<std::string> PerfDbTextLines() {
  auto reader = db::PerfDbReader::Open("tests/problem/testdata/miopen/gfx942130.db");
  REQUIRE(reader.ok());
  auto rows = reader->ReadAll();
  REQUIRE(rows.ok());
  auto text = db::SerializePerfDbText(db::PerfDbRowsToText(*rows));
  REQUIRE(text.ok());
  std::vector<std::string> lines = Lines(*text);
  for (std::string& l : Lines(Slurp("tests/db/testdata/small.db.txt"))) lines.push_back(l);
  REQUIRE(lines.size() > 100);
  return lines;
}

void CheckWarnings(const std::vector<db::ReadWarning>& warnings, size_t lines) {
  for (const db::ReadWarning& w : warnings) {
    REQUIRE(w.line >= 1);
    REQUIRE(w.line <= lines);
    REQUIRE(!w.message.empty());
    REQUIRE(w.message.size() <= kMaxMessage);
  }
}

// An accepted find db: written canonically and read again it is the same (entries may come
// back in writer order; times as MIOpen's format prints them, 6 significant digits); or the
// writer refuses it with a reason (a non-finite time).
void CheckFindDbRoundTrip(const db::FindDb& records) {
  auto text = db::SerializeFindDb(records);
  if (!text.ok()) {
    RequireClearError(text.status());
    return;
  }
  const db::FindDbReadResult again = db::ParseFindDb(*text);
  REQUIRE(again.warnings.empty());
  db::FindDb want;
  for (const auto& [key, entries] : records) {
    if (entries.empty()) continue;
    want[key] = entries;
    for (db::FindDbEntry& e : want[key]) {
      e.time_ms = std::strtof(db::FormatFindDbTime(e.time_ms).c_str(), nullptr);
    }
    db::SortFindDbEntries(want[key]);
  }
  db::FindDb got = again.records;
  for (auto& [key, entries] : got) db::SortFindDbEntries(entries);
  REQUIRE(got == want);
}

// A key: a valid problem, or refused with a reason.
void CheckFindKey(std::string_view key) {
  auto p = ParseFindDbKey(key);
  if (p.ok()) {
    REQUIRE(ValidateProblem(*p).ok());
  } else {
    RequireClearError(p.status());
  }
}

TEST_CASE("10k mutated find-db lines: a record that writes back, or a reasoned refusal") {
  const std::vector<std::string> valid = FindDbLines();
  Mutator m(15001, "=;:,-x");
  int accepted = 0, refused = 0;
  for (int i = 0; i < kLines; ++i) {
    const std::string line = m.Mutate(valid[m.Below(valid.size())]);
    INFO(MutationName(m.last()) << ": " << line.substr(0, 400));
    auto rec = db::ParseFindDbLine(line);
    if (!rec.ok()) {
      ++refused;
      RequireClearError(rec.status());
      continue;
    }
    ++accepted;
    REQUIRE(!rec->key.empty());
    REQUIRE(!rec->entries.empty());
    CheckFindKey(rec->key);
    CheckFindDbRoundTrip({{rec->key, rec->entries}});
    // The whole-file reader agrees with the line reader (on one line: a '\n' makes two).
    if (line.find('\n') != std::string::npos) continue;
    const db::FindDbReadResult whole = db::ParseFindDb(line);
    REQUIRE(whole.records.size() == 1);
    REQUIRE(whole.records.begin()->second == rec->entries);
  }
  CHECK(accepted > kLines / 4);
  CHECK(refused > kLines / 20);
}

// A file of `n` lines drawn from `valid`, each mutated with probability 1/4, sometimes the
// whole text mutated again (truncated in the middle of a line, bytes flipped, ...).
std::string MutatedFile(Mutator& m, const std::vector<std::string>& valid, int n) {
  std::string text;
  for (int j = 0; j < n; ++j) {
    const std::string& line = valid[m.Below(valid.size())];
    text += m.Below(4) == 0 ? m.Mutate(line) : line;
    text += m.Below(10) == 0 ? "\r\n" : "\n";
  }
  if (m.Below(4) == 0) text = m.Mutate(text);
  return text;
}

size_t CountLines(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

TEST_CASE("300 mutated find-db files: every bad line reported, streaming agrees with whole-file") {
  const std::vector<std::string> valid = FindDbLines();
  Mutator m(15002, "=;:,-x");
  const std::string path = TmpPath("fuzz.fdb.txt");
  for (int i = 0; i < 300; ++i) {
    const std::string text = MutatedFile(m, valid, 1 + static_cast<int>(m.Below(40)));
    INFO("file " << i);
    const db::FindDbReadResult whole = db::ParseFindDb(text);
    CheckWarnings(whole.warnings, CountLines(text));
    for (const auto& [key, entries] : whole.records) CheckFindKey(key);
    CheckFindDbRoundTrip(whole.records);

    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    db::FindDb streamed;
    size_t warnings = 0;
    absl::Status st = db::ForEachFindDbRecord(
        path,
        [&](db::FindDbRecord&& r) {
          REQUIRE(streamed.count(r.key) == 0);
          streamed[r.key] = std::move(r.entries);
          return absl::OkStatus();
        },
        [&](const db::ReadWarning& w) {
          ++warnings;
          REQUIRE(!w.message.empty());
        });
    REQUIRE(st.ok());
    REQUIRE(streamed == whole.records);
    REQUIRE(warnings >= whole.warnings.size());
  }
}

// A text perf-db key: a config row that makes a problem, or refused with a reason.
void CheckPerfTextKey(const std::string& key) {
  auto config = db::ParsePerfDbTextKey(key);
  if (!config.ok()) {
    RequireClearError(config.status());
    return;
  }
  auto p = FromPerfDbConfig(*config);
  if (!p.ok()) {
    RequireClearError(p.status());
    return;
  }
  REQUIRE(ValidateProblem(*p).ok());
  // Older spellings are read in today's form (keys.h), which reads back unchanged.
  auto again = FromPerfDbConfig(ToPerfDbConfig(*p));
  REQUIRE(again.ok());
  REQUIRE(*again == *p);
}

// An accepted text perf db writes back to a text that reads as the same records, or the writer
// names the field it cannot write.
void CheckPerfTextRoundTrip(const db::PerfDbText& records) {
  auto text = db::SerializePerfDbText(records);
  if (!text.ok()) {
    RequireClearError(text.status());
    return;
  }
  const db::PerfDbTextReadResult again = db::ParsePerfDbText(*text);
  REQUIRE(again.warnings.empty());
  db::PerfDbText want = records;
  std::erase_if(want, [](const auto& kv) { return kv.second.empty(); });
  REQUIRE(again.records == want);
}

TEST_CASE("10k mutated text perf-db lines: a key that parses, or a reasoned refusal") {
  const std::vector<std::string> valid = PerfDbTextLines();
  Mutator m(15003, "=;:,x");
  int keys_accepted = 0;
  for (int i = 0; i < kLines; ++i) {
    const std::string line = m.Mutate(valid[m.Below(valid.size())]);
    INFO(MutationName(m.last()) << ": " << line.substr(0, 400));
    const db::PerfDbTextReadResult r = db::ParsePerfDbText(line);
    CheckWarnings(r.warnings, CountLines(line));
    REQUIRE(r.records.size() <= CountLines(line));
    for (const auto& [key, entries] : r.records) {
      CheckPerfTextKey(key);
      keys_accepted += db::ParsePerfDbTextKey(key).ok();
    }
    CheckPerfTextRoundTrip(r.records);
    std::vector<std::string> bad_keys;
    const std::vector<db::PerfDbRow> rows = db::PerfDbTextToRows(r.records, &bad_keys);
    for (const std::string& b : bad_keys) {
      REQUIRE(!b.empty());
      REQUIRE(b.size() <= kMaxMessage + line.size());
    }
    for (const db::PerfDbRow& row : rows) REQUIRE(!row.solver.empty());
  }
  CHECK(keys_accepted > kLines / 4);
}

TEST_CASE("300 mutated text perf-db files: every bad line reported") {
  const std::vector<std::string> valid = PerfDbTextLines();
  Mutator m(15004, "=;:,x");
  for (int i = 0; i < 300; ++i) {
    const std::string text = MutatedFile(m, valid, 1 + static_cast<int>(m.Below(40)));
    INFO("file " << i);
    const db::PerfDbTextReadResult r = db::ParsePerfDbText(text);
    CheckWarnings(r.warnings, CountLines(text));
    for (const auto& [key, entries] : r.records) CheckPerfTextKey(key);
    CheckPerfTextRoundTrip(r.records);
  }
}

}  // namespace
}  // namespace tuna::fuzz
