// Internals of the exporter, one section per file (find_db_export.cc, perf_db_export.cc,
// kernel_db_export.cc, merge.cc). Pure functions over in-memory results and files: no SQL here,
// so merges and folding are unit-testable without a database. Not thread-safe only in the sense
// that callers must not share the output structures.
#pragma once

#include <cstdint>
#include <filesystem>
#include <utility>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exporter/exporter.h"
#include "schema/store/result_store.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/db/kernel_db.h"
#include "tuner_core/db/perf_db.h"
#include "tuner_core/problem/keys.h"

namespace tuna::exporter::internal {

// ---- find db (find_db_export.cc) ----

// The session's find results folded per MIOpen key: one entry per (key, solver), the faster when
// two configs share a key (ties: smaller workspace, then smaller config id).
struct IncomingFind {
  db::FindDb db;                                     // entries in writer order per key
  std::map<std::string, std::optional<int64_t>> fastest_job;  // key -> job of its first entry
  int64_t skipped_bad_config = 0;
  int64_t skipped_unknown_solver = 0;
  std::vector<std::string> warnings;  // one per unknown solver name (not per row)
};
IncomingFind FoldFindResults(const std::vector<schema::FindResultRow>& rows,
                             const std::map<int64_t, Problem>& problems,
                             const AlgorithmResolver& algorithm_for);

// The direction MIOpen files a problem under (transpose problems swap F and B; see keys.h).
Direction KeyDirection(const Problem& p);

// Merges into `existing` when given, cuts to top_n, writes `path` atomically.
absl::StatusOr<FileReport> WriteFindDbExport(const IncomingFind& incoming,
                                             const std::optional<db::FindDb>& existing,
                                             const std::string& path, size_t top_n);

// The find db at `path` when the file exists (nullopt when it does not); ill-formed lines are
// skipped and described in `warnings`. Other read errors are returned.
absl::StatusOr<std::optional<db::FindDb>> ReadExistingFindDb(const std::string& path,
                                                             std::vector<std::string>* warnings);

// ---- perf db (perf_db_export.cc) ----

struct IncomingPerfEntry {
  std::string params;
  float time_ms = 0;
  std::string find_key;  // the config's find-db key: where an existing row's time is looked up
};
using IncomingPerf =
    std::map<PerfDbConfig, std::map<std::string, IncomingPerfEntry>, db::PerfDbConfigLess>;

struct FoldedPerf {
  IncomingPerf rows;
  int64_t skipped_bad_config = 0;
};
// One row per (config, solver): the faster on a collision (ties: smaller params string).
FoldedPerf FoldPerfResults(const std::vector<schema::PerfResultRow>& rows,
                           const std::map<int64_t, Problem>& problems);

// Merges into the perf db at existing_path when given (a missing file is an empty one), writes
// `path` atomically. existing_find gives the times of existing rows (see exporter.h).
absl::StatusOr<FileReport> WritePerfDbExport(const IncomingPerf& incoming,
                                             const std::optional<std::string>& existing_path,
                                             const std::optional<db::FindDb>& existing_find,
                                             const std::string& path);

// The text perf db (`<base>.db.txt`): the same merge as WritePerfDbExport over the existing text
// file at existing_path (a missing file is an empty one); its keys that do not parse are kept
// verbatim with a warning.
absl::StatusOr<FileReport> WritePerfDbTextExport(const IncomingPerf& incoming,
                                                 const std::optional<std::string>& existing_path,
                                                 const std::optional<db::FindDb>& existing_find,
                                                 const std::string& path);

// ---- kernel db (kernel_db_export.cc) ----

// MIOpen kdb entries of the kernels (MakeKernelDbEntry with the bare arch), in input order.
std::vector<db::KernelDbEntry> KernelDbEntries(const std::vector<schema::KernelObject>& kernels,
                                               const std::string& bare_arch);
absl::StatusOr<FileReport> WriteKernelDbExport(const std::vector<db::KernelDbEntry>& incoming,
                                               const std::optional<std::string>& existing_path,
                                               const std::string& path);

// The rows of the existing file at existing_path (none when not given or missing), read with
// Reader (db::PerfDbReader, db::KernelDbReader); sets report->merged when the file was read.
template <typename Reader, typename Row>
absl::StatusOr<std::vector<Row>> ReadExistingRows(const std::optional<std::string>& existing_path,
                                                  FileReport* report) {
  std::error_code ec;
  if (!existing_path || !std::filesystem::exists(*existing_path, ec)) return std::vector<Row>{};
  auto reader = Reader::Open(*existing_path);
  if (!reader.ok()) return reader.status();
  auto rows = reader->ReadAll();
  if (!rows.ok()) return rows.status();
  report->merged = true;
  return *std::move(rows);
}

// ---- merges (merge.cc) ----

struct PerfMergeResult {
  std::vector<db::PerfDbRow> rows;  // the merged file's rows (any order: the writer sorts)
  FileMergeCounts counts;
};
PerfMergeResult MergePerfDb(const std::vector<db::PerfDbRow>& existing,
                            const IncomingPerf& incoming,
                            const std::optional<db::FindDb>& existing_find);

struct KernelMergeResult {
  std::vector<db::KernelDbEntry> entries;
  FileMergeCounts counts;
};
KernelMergeResult MergeKernelDb(const std::vector<db::KernelDbEntry>& existing,
                                const std::vector<db::KernelDbEntry>& incoming);

// db::MergeFindDb's report in the exporter's terms; `existing_entries` counts the existing db's
// entries (those not matched by an incoming entry are `kept`).
FileMergeCounts FindMergeCounts(const db::MergeReport& report, int64_t existing_entries);

}  // namespace tuna::exporter::internal
