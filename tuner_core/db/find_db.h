// MIOpen's find db text format (`<basename>.<BACKEND>.fdb.txt`, user `*.ufdb.txt`).
//
//   KEY=Solver:time_ms,workspace_bytes,algorithm;Solver2:...        (current, "2.0")
//   KEY=algorithm:Solver,time_ms,workspace_bytes,algorithm,<unused>;...   (legacy, read only)
//
// KEY is MIOpen's ProblemDescription::Serialize string; this layer treats it as opaque.
// The writer is canonical like MITuna's export (write_fdb): lines sorted by key in byte order,
// entries sorted by (time, solver), optionally only the N fastest kept, times printed as
// `std::ostream << float` prints them (precision 6, %g style). All functions are pure and
// thread-safe; errors are absl::Status, never exceptions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tuner_core/db/text_record.h"

namespace tuna::db {

struct FindDbEntry {
  std::string solver;     // MIOpen solver DbId, e.g. "ConvBinWinogradRxSf2x3"
  float time_ms = 0;      // MIOpen stores a float; so do we, so values round-trip exactly
  uint64_t workspace = 0; // bytes
  std::string algorithm;  // e.g. "miopenConvolutionFwdAlgoWinograd"
  bool operator==(const FindDbEntry&) const = default;
};

struct FindDbRecord {
  std::string key;
  std::vector<FindDbEntry> entries;
  bool operator==(const FindDbRecord&) const = default;
};

// Key -> entries, iterated in byte order of the key (std::string's operator< is memcmp-like).
using FindDb = std::map<std::string, std::vector<FindDbEntry>>;

struct FindDbReadResult {
  FindDb records;
  std::vector<ReadWarning> warnings;
  size_t lines = 0;  // lines seen, including empty and ill-formed ones
};

// Parses a whole find db. Never fails: ill-formed lines/entries are skipped and reported.
// MIOpen's rules: the first occurrence of a duplicate key wins; within a line the first entry of
// a solver wins. Legacy entries (ID is an algorithm name) are rewritten to the current form and
// their trailing kernel-cache field dropped, as MIOpen's db_record.cpp (WORKAROUND_ISSUE_1987)
// does. Entry order within a record is kept as read.
FindDbReadResult ParseFindDb(std::string_view text);
// ParseFindDb of a file; NotFound/Internal when the file cannot be read.
absl::StatusOr<FindDbReadResult> ReadFindDbFile(const std::string& path);

// ParseFindDb's rules over a file read line by line, for files too large to hold: each usable
// record is passed to `on_record` in file order (a duplicate key is dropped with a warning: the
// first one wins), each warning to `on_warning`. Memory: one line plus the keys seen so far.
// NotFound/Internal when the file cannot be read; an error of `on_record` stops and is returned.
absl::Status ForEachFindDbRecord(const std::string& path,
                                 const std::function<absl::Status(FindDbRecord&&)>& on_record,
                                 const std::function<void(const ReadWarning&)>& on_warning);

// One line (no '\n'); InvalidArgument (with the reason) when it is not a usable record.
absl::StatusOr<FindDbRecord> ParseFindDbLine(std::string_view line);

// True for the directional algorithm names of MIOpen conv_algo_name.cpp (how legacy entries are
// recognised).
bool IsFindDbAlgorithmName(std::string_view name);

// `std::ostream << float` with default flags: "%g" with precision 6 ("0.051639", "17.2271", "1e-05").
std::string FormatFindDbTime(float time_ms);

struct FindDbWriteOptions {
  // Keep only the N fastest entries per key (MITuna writes 4); 0 keeps all.
  size_t max_entries_per_key = 0;
};

// The canonical file text ('\n' after every line; keys without entries are omitted).
// InvalidArgument when a key/solver/algorithm cannot be written (contains ';', ':', '=', newline,
// or is empty) or a time is not finite.
absl::StatusOr<std::string> SerializeFindDb(const FindDb& db, const FindDbWriteOptions& options = {});
// SerializeFindDb into `path`, written to `path.tmp` then renamed.
absl::Status WriteFindDbFile(const std::string& path, const FindDb& db,
                             const FindDbWriteOptions& options = {});

// Entries in writer order: ascending time, ties by solver name (byte order).
void SortFindDbEntries(std::vector<FindDbEntry>& entries);

// Counts of what MergeFindDb did. Each incoming entry lands in exactly one of added_entries,
// improved_entries, unchanged_entries (entries of an added key count in added_entries too).
struct MergeReport {
  size_t added_keys = 0;         // keys only in `incoming`
  size_t kept_keys = 0;          // keys only in `existing`, copied as they are
  size_t added_entries = 0;      // (key, solver) pairs only in `incoming`
  size_t improved_entries = 0;   // incoming strictly faster: replaced the existing entry
  size_t unchanged_entries = 0;  // incoming not faster (ties included): existing entry kept
  bool operator==(const MergeReport&) const = default;
};

struct FindDbMergeResult {
  FindDb db;  // entries of every key in writer order (SortFindDbEntries)
  MergeReport report;
};

// Per key and per solver keeps the faster entry (lower time_ms; on a tie the existing one).
// Untouched keys and solvers of `existing` are kept. No truncation: the writer does that.
FindDbMergeResult MergeFindDb(const FindDb& existing, const FindDb& incoming);

}  // namespace tuna::db
