// MIOpen's text perf db (ROCm >= 6.2 default: `<basename>.db.txt` system, `*.udb.txt` user):
//
//   KEY=Solver:params;Solver2:params2...
//
// KEY is ProblemDescription::VisitAll: the 21 integer config columns then layout, data_type,
// direction, joined by 'x' (PerfDbTextKey below builds it from a PerfDbConfig). The record grammar
// is the find db's (text_record.h); `params` are opaque strings (they may hold ',' and ' ', never
// ';', ':', '='). The writer is canonical: lines in key byte order, entries in solver byte order
// (MIOpen's own sqlite2txt writes unordered_map order, which is not reproducible).
// Pure functions, thread-safe.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/db/text_record.h"
#include "tuner_core/problem/keys.h"

namespace tuna::db {

// Key -> solver -> params (both ordered: the writer's order).
using PerfDbText = std::map<std::string, std::map<std::string, std::string>>;

struct PerfDbTextReadResult {
  PerfDbText records;
  std::vector<ReadWarning> warnings;
  size_t lines = 0;
};

// Never fails; ill-formed lines are skipped with a warning. First occurrence of a key wins;
// within a line the first entry of a solver wins (MIOpen's rules). Empty params are accepted.
PerfDbTextReadResult ParsePerfDbText(std::string_view text);
absl::StatusOr<PerfDbTextReadResult> ReadPerfDbTextFile(const std::string& path);

// InvalidArgument when a key/solver is empty or any field holds ';', ':', '=' or a newline.
absl::StatusOr<std::string> SerializePerfDbText(const PerfDbText& db);
absl::Status WritePerfDbTextFile(const std::string& path, const PerfDbText& db);

// The text-db key of a config row (what MIOpen's tools/sqlite2txt prints), e.g.
// "2x1024x14x14x1x1x1x1x2048x128x0x0x0x2x2x0x1x1x0x0x1xNCHWxFP32xF".
std::string PerfDbTextKey(const PerfDbConfig& c);

// Inverse of PerfDbTextKey: 21 decimal integers then layout, data_type, direction, joined by
// 'x'. InvalidArgument naming the field otherwise. Names are not checked here
// (FromPerfDbConfig does that).
absl::StatusOr<PerfDbConfig> ParsePerfDbTextKey(std::string_view key);

// The text perf db as rows: each key parsed by ParsePerfDbTextKey; a key that does not parse is
// left out and described in `bad_keys` ("key: reason").
std::vector<PerfDbRow> PerfDbTextToRows(const PerfDbText& db, std::vector<std::string>* bad_keys);

// sqlite2txt: the rows of a SQLite perf db as a text perf db.
PerfDbText PerfDbRowsToText(const std::vector<PerfDbRow>& rows);

}  // namespace tuna::db
