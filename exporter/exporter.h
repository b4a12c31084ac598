// The exporter: a session's verified results as MIOpen's files (DESIGN §1 step 8, §6).
//
//   <base>.db                SQLite perf db: every exportable perf_result (tunable solvers with
//                            params), one row per (config, solver)
//   <base>.db.txt            the same perf db as text (MIOpen's format when it is built without
//                            SQLite perf dbs, ROCm >= 6.2's default: tools/sqlite2txt's keys);
//                            chosen instead of or with <base>.db (kPerfDbText)
//   <base>.<BACKEND>.fdb.txt find db: per problem key the `top_n` fastest exportable find_results
//   <base>.kdb               kernel db: the code objects of each key's fastest find result
//
// <base> is db::DbBasename of the session's arch (target features stripped, MIOpen's DbId rule)
// and num_cu, unless overridden; BACKEND is the session's backend (HIP, CUDA, CPU). Which rows
// are exportable is defined in schema/store/result_store.h (verified, timed, valid solver).
//
// Deterministic: the same results give byte-identical files (same SQLite library), whatever the
// row order in the database. Two configs whose MIOpen keys coincide (a transpose problem filed
// as its mirrored direction) are folded, keeping the faster result per solver.
//
// Merge (`merge_dir`): the files of the same names in merge_dir are read first and combined:
//   find db  per key and solver the faster entry (db::MergeFindDb), then the top_n cut;
//   text perf db  as the perf db; existing keys that do not parse are kept as they are;
//   perf db  an incoming (config, solver) replaces an existing row when it is faster; existing
//            rows have no time, so theirs is taken from the existing find db of merge_dir (same
//            key, same solver); a row with no known time is replaced (the fresh, verified tuning
//            wins) and counted as `replaced_untimed`; rows without incoming data are kept;
//   kdb      union; on an equal (kernel_name, kernel_args) the incoming blob wins.
// Files are written atomically and as a set into output_dir (exporter/output_dir.h): one writer
// at a time (an flock on `<output_dir>/.tuna.lock`; a second writer fails at once with
// FailedPrecondition naming the holder's pid), stale temps of a killed run removed at start,
// every file written as a temp first and all renamed only once all are written (perf db, find
// db, kdb). A failure before the renames leaves the old files untouched; a crash never leaves
// half of a file.
//
// Golden versions (`golden_v`): the same files from a golden version's rows of one target; there
// are no jobs, so require_complete has nothing to refuse.
//
// Threads: ExportSession uses the Database from the calling thread only; `progress` is called on
// that thread. Errors: NotFound (no session), FailedPrecondition (output dir locked by another
// writer; require_complete with
// unfinished jobs; an unreadable existing file to merge into), InvalidArgument (bad options or a
// name the formats cannot hold), the store's codes for SQL errors, Internal for I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "schema/store/result_store.h"
#include "tuner_core/db/find_db.h"
#include "tuner_core/problem/problem.h"

namespace tuna::exporter {

// The find db's algorithm field for a solver in the key's direction, e.g.
// "miopenConvolutionFwdAlgoDirect". NotFound for a solver it does not know: such entries are
// skipped and counted (a find db entry without a valid algorithm breaks MIOpen's reader).
using AlgorithmResolver =
    std::function<absl::StatusOr<std::string>(std::string_view solver, Direction direction)>;

// Called when a stage begins, now and then during it and when it ends: stage ("read find
// results", "write find db", ...), work done and total (total 0 when unknown).
using ProgressFn = std::function<void(std::string_view stage, int64_t done, int64_t total)>;

// The files an export can write; each has one exporter in the format registry
// (exporter/format_registry.h), written and committed in this order.
enum class ExportFormat { kPerfDb, kPerfDbText, kFindDb, kKernelDb };
inline const std::set<ExportFormat> kAllExportFormats = {
    ExportFormat::kPerfDb, ExportFormat::kFindDb, ExportFormat::kKernelDb};

struct ExportOptions {
  int64_t session_id = 0;
  // Export golden version N (schema/store/golden_store.h) instead of a session; session_id is
  // then ignored. A version holding several targets needs `arch` and/or `num_cu` to pick one
  // (arch matches the stored arch, its bare arch or its DbArchId); the files are named for the
  // picked target unless `arch`/`num_cu` say otherwise.
  std::optional<int64_t> golden_v;
  std::set<ExportFormat> formats = kAllExportFormats;  // at least one
  std::string output_dir = ".";
  std::string merge_dir;               // empty: no merge
  std::optional<std::string> arch;     // override the session's arch for <base> and -mcpu
  std::optional<uint32_t> num_cu;      // override the session's num_cu for <base>
  bool require_complete = false;       // refuse when a job of the session is unfinished
  size_t top_n = 4;                    // find db entries per key (MITuna writes 4); 0 = all
  int page_size = 10000;               // result rows per SQL page
  AlgorithmResolver algorithm_for;     // required for the find db and the kernel db
  ProgressFn progress;                 // optional
  // Take the output directory's lock (output_dir.h) for the write. false: the caller already
  // holds an OutputDirLock on output_dir (tune -f holds it for its whole run).
  bool lock_output_dir = true;
};

// What happened to one file's entries. For the find db, entries are (key, solver) pairs; for the
// perf db (config, solver) rows; for the kdb (kernel_name, kernel_args) rows.
struct FileMergeCounts {
  int64_t added = 0;             // incoming, not in the existing file
  int64_t improved = 0;          // incoming faster: replaced the existing entry
  int64_t unchanged = 0;         // incoming not faster or identical: existing entry kept
  int64_t kept = 0;              // existing entries without incoming data, copied as they are
  int64_t replaced_untimed = 0;  // perf db: existing row without a known time, replaced
  int64_t replaced = 0;          // kdb: same key, incoming blob written
};

struct FileReport {
  bool written = false;
  std::string path;
  int64_t keys = 0;     // lines (fdb) / configs (perf db) / rows (kdb) in the written file
  int64_t entries = 0;  // entries (fdb) / rows (perf db, kdb) in the written file
  bool merged = false;  // an existing file was merged into
  FileMergeCounts merge;
  std::vector<std::string> warnings;  // e.g. ill-formed lines of the existing file (skipped)
};

struct ExportReport {
  schema::SessionTarget session;
  std::string basename;
  std::vector<schema::JobStateCount> jobs;  // all of the session's jobs by (kind, state)
  int64_t unfinished_jobs = 0;
  schema::ResultCounts find_results;  // rows in the database: all / exportable
  schema::ResultCounts perf_results;
  int64_t skipped_bad_config = 0;     // results whose config does not make a valid problem
  int64_t skipped_unknown_solver = 0; // find results whose solver has no algorithm
  std::vector<std::string> warnings;
  FileReport perf, perf_text, find, kernel;
};

absl::StatusOr<ExportReport> ExportSession(schema::Database& db, const ExportOptions& options);

// File names of an export (exposed for the CLI and tests).
std::string PerfDbFileName(const std::string& basename);                           // <base>.db
std::string PerfDbTextFileName(const std::string& basename);                   // <base>.db.txt
std::string FindDbFileName(const std::string& basename, const std::string& backend);  // .fdb.txt
std::string KernelDbFileName(const std::string& basename);                         // <base>.kdb
// MIOpen's DbId of a device name: ":feature" suffixes dropped, "_xnack" added for ":xnack+".
std::string DbArchId(std::string_view arch);
// The bare architecture (no target features): what -mcpu of the kdb keys takes.
std::string BareArch(std::string_view arch);

}  // namespace tuna::exporter
