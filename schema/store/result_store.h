// Reading a session's results for export (and writing results in tests and benchmarks).
//
// This is the exporter's only SQL. What "exportable" means is decided here, in one place:
//   find_result: verified (migration 003: the timed kernel matched the reference), kernel_time
//                finite and >= 0, workspace >= 0, the solver still valid;
//   perf_result: the same, plus non-empty params and a tunable solver (MITuna's export_pdb rule:
//                only tunable solvers have perf-db entries).
// Rows failing any of these stay in the database (audits) and are counted, never exported.
//
// Results are read in keyset pages (ORDER BY id LIMIT n) so that a session of millions of rows is
// never held as one result set. Problems are rebuilt from conv_config's columns (not from the
// `driver` text) and validated.
//
// Kernels (kernel.blob) are stored zstd-compressed; this file hides that: writers hand in the
// code object, readers get it back decompressed and checked against uncompressed_size.
//
// Threads: every function takes a Database (thread-safe) and keeps no state. Errors: the store's
// codes (schema/store/errors.h); NotFound for a missing session; DataLoss for a kernel blob that
// does not decompress.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "schema/store/session_store.h"  // SessionTarget
#include "tuner_core/problem/problem.h"

namespace tuna::schema {

// ---- Reading (export) ------------------------------------------------------------------------

// NotFound when there is no such session.
absl::StatusOr<SessionTarget> ReadSessionTarget(Database& db, int64_t session_id);

// Jobs of a session by (kind, state), sorted by kind then state name.
struct JobStateCount {
  std::string kind;   // "perf" or "find"
  std::string state;  // job.state
  int64_t count = 0;
};
absl::StatusOr<std::vector<JobStateCount>> CountSessionJobs(Database& db, int64_t session_id);

// Rows of one result table of a session: all of them, and those the export rules accept.
struct ResultCounts {
  int64_t total = 0;
  int64_t exportable = 0;
};
absl::StatusOr<ResultCounts> CountFindResults(Database& db, int64_t session_id);
absl::StatusOr<ResultCounts> CountPerfResults(Database& db, int64_t session_id);

// The problems of these conv_config ids (duplicates allowed). Rows whose columns do not make a
// valid Problem, and ids with no row, land in `bad` with the reason (never fatal: the exporter
// reports them and skips their results).
struct SessionConfigs {
  std::map<int64_t, Problem> problems;
  std::map<int64_t, std::string> bad;
};
absl::StatusOr<SessionConfigs> ReadConfigs(Database& db, const std::vector<int64_t>& ids);

struct FindResultRow {
  int64_t id = 0;
  int64_t config_id = 0;
  std::string solver;  // solver.name
  double kernel_time = 0;  // ms
  int64_t workspace = 0;   // bytes
  std::optional<int64_t> job_id;
};
struct PerfResultRow {
  int64_t id = 0;
  int64_t config_id = 0;
  std::string solver;
  std::string params;
  double kernel_time = 0;
  int64_t workspace = 0;
  std::optional<int64_t> job_id;
};

// Calls `page` with consecutive pages (ascending result id) of the session's exportable rows;
// a non-OK return from `page` stops the scan and is returned.
absl::Status ScanExportableFindResults(
    Database& db, int64_t session_id, int page_size,
    const std::function<absl::Status(const std::vector<FindResultRow>&)>& page);
absl::Status ScanExportablePerfResults(
    Database& db, int64_t session_id, int page_size,
    const std::function<absl::Status(const std::vector<PerfResultRow>&)>& page);

struct KernelObject {
  int64_t job_id = 0;
  int64_t kernel_id = 0;
  std::string arch;
  std::string kernel_name;  // source file name, e.g. "naive_conv.cu"
  std::string options;      // compile options
  std::string code_object;  // decompressed
};
// The kernels linked to these jobs (job_kernel), ordered by (job_id, kernel_id). Jobs without
// kernels contribute nothing. DataLoss for a blob that does not decompress to uncompressed_size.
absl::StatusOr<std::vector<KernelObject>> ReadJobKernels(Database& db,
                                                         const std::vector<int64_t>& job_ids);

// ---- Writing (tests, benchmarks, and the eval step's result reports) ----------------------------

struct NewSession {
  std::string arch;
  int64_t num_cu = 0;
  std::string backend = "HIP";
  std::string label;
};
absl::StatusOr<int64_t> InsertSession(Database& db, const NewSession& s);

// Insert or update the solver row with this id.
absl::Status UpsertSolver(Database& db, int64_t id, const std::string& name, bool tunable,
                          bool valid = true);

// Inserts the problems' conv_config rows (an existing row with the same canonical line is
// reused) and returns their ids in input order. config_hash = SHA-256 of Problem::Canonical().
absl::StatusOr<std::vector<int64_t>> InsertConfigs(Database& db,
                                                   const std::vector<Problem>& problems);
// The conv_config columns <-> Problem (exposed for tests).
absl::StatusOr<Problem> ProblemFromConfigRow(const Row& row);

struct NewJob {
  int64_t session_id = 0;
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::string kind = "find";    // perf | find
  std::string state = "evaluated";
};
absl::StatusOr<int64_t> InsertJob(Database& db, const NewJob& j);

struct NewFindResult {
  int64_t session_id = 0;
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::optional<int64_t> job_id;
  double kernel_time = 0;
  int64_t workspace = 0;
  std::string params;
  bool verified = true;
};
struct NewPerfResult {
  int64_t session_id = 0;
  int64_t config_id = 0;
  int64_t solver_id = 0;
  std::optional<int64_t> job_id;
  std::string params;
  double kernel_time = 0;
  int64_t workspace = 0;
  int64_t candidates_tried = 0;
  bool verified = true;
};
// Multi-row inserts in one transaction; a row for an existing (session, config, solver) replaces
// it (a re-reported result). Order of ids follows input order.
absl::Status InsertFindResults(Database& db, const std::vector<NewFindResult>& rows);
// The same inside the caller's transaction (the coordinator's batched reports).
absl::Status InsertFindResults(Connection& c, const std::vector<NewFindResult>& rows);
absl::Status InsertPerfResults(Database& db, const std::vector<NewPerfResult>& rows);
absl::Status InsertPerfResults(Connection& c, const std::vector<NewPerfResult>& rows);

struct NewKernel {
  std::string arch;
  std::string compiler;
  std::string kernel_name;
  std::string options;
  std::string code_object;  // uncompressed; stored zstd-compressed, hash = SHA-256 of it
};
// The kernel's id (an identical code object already stored is reused).
absl::StatusOr<int64_t> InsertKernel(Database& db, const NewKernel& k);
absl::Status LinkJobKernel(Database& db, int64_t job_id, int64_t kernel_id);

}  // namespace tuna::schema
