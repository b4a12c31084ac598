// `tuna merge`: one MIOpen db file merged into another of the same kind (MITuna's merge_db),
// with the exporter's merge rules (exporter.h, "Merge"), so an export merged with --merge-into
// and two files merged here give the same result.
//
//   kind by name: <base>.db perf db (SQLite), <base>.<BACKEND>.fdb.txt find db, <base>.kdb
//   kernel db. Both files must be of one kind.
//   find db  per key and solver the faster entry (db::MergeFindDb), then the top_n cut;
//   perf db  per (config, solver) the faster row; a perf db holds no times, so each row's time
//            is looked up in the find db beside its file (<base>.<BACKEND>.fdb.txt in the same
//            directory, or the one named in the options): same key, same solver. A row of
//            `from` replaces a row of `into` when it is faster, or when the `into` row has no
//            known time; a `from` row with no time does not replace a timed one;
//   kdb      union; on an equal (kernel_name, kernel_args) the `from` blob wins.
// Targets: when both base names parse (db::ParseDbBasename), their arch (and, for find dbs, the
// backend) must be equal; different CU counts are refused unless `across_cu` (MITuna's DB_ALIAS:
// a db tuned on one CU count used for another of the same arch). Names that do not parse are
// merged with a warning.
//
// The output is written as a temp and renamed (exporter/output_dir.h): a failure leaves the old
// file whole. Errors: InvalidArgument (kinds differ, unknown kind, target mismatch),
// NotFound (an input file missing), the readers' codes for unreadable files, Internal for I/O.
// Threads: no shared state; one call per output file at a time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "exporter/exporter.h"

namespace tuna::exporter {

enum class DbFileKind { kPerfDb, kFindDb, kKernelDb };
// The kind of a db file by its name; InvalidArgument naming the accepted suffixes otherwise.
absl::StatusOr<DbFileKind> DbFileKindOf(const std::string& path);
const char* DbFileKindName(DbFileKind kind);  // "perf db", "find db", "kernel db"

struct MergeFilesOptions {
  std::string into;        // the file merged into (MITuna's --master_file)
  std::string from;        // the file merged (MITuna's --target_file)
  std::string output;      // written here; empty: over `into`
  bool across_cu = false;  // allow different CU counts of one arch
  size_t top_n = 0;        // find db: entries per key (0 = all)
  // perf db: the find dbs that time the rows; empty: <base>.*.fdb.txt beside each file (none
  // found: the rows of that file have no times).
  std::string into_find_db, from_find_db;
};

struct MergeFilesReport {
  DbFileKind kind = DbFileKind::kFindDb;
  FileReport file;                    // path = the output; merge counts as for an export
  std::vector<std::string> warnings;  // skipped lines, unparsed names, missing time sources
};

absl::StatusOr<MergeFilesReport> MergeDbFiles(const MergeFilesOptions& options);

}  // namespace tuna::exporter
