// Golden db versions (MITuna's conv_golden and update_golden; migration 005, table
// golden_result): the results that ship, per version, target, config, solver and kind.
//
//   UpdateGolden({.golden_v = 3, .session_id = 12, .base_golden_v = 2})
//     copies version 2 into version 3, then the exportable results of session 12 (the export
//     rules of result_store.h: verified, timed, valid solver; perf rows of tunable solvers with
//     params) over it: a session row replaces the row of the same (target, config, solver,
//     kind), since the newer measurement is the one that ships. Rows of other targets, configs
//     or solvers are kept. Writing into a version that has rows needs `overwrite` (MITuna's
//     --overwrite); without it nothing is written and AlreadyExists is returned.
//   ScanGoldenFindResults / ScanGoldenPerfResults read one version's rows of one target in the
//     exporter's row types, so `tuna export --golden_v N` writes the same files a session would.
//
// All of an update runs in one transaction: a failure leaves the version as it was. Threads:
// every function takes a Database (thread-safe) and keeps no state. Errors: InvalidArgument
// (negative version, nothing to copy from), NotFound (no such session, an empty base version),
// AlreadyExists (see above), the store's codes for SQL errors.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "schema/store/database.h"
#include "schema/store/result_store.h"

namespace tuna::schema {

struct GoldenUpdate {
  int64_t golden_v = -1;                 // the version written, >= 0
  std::optional<int64_t> session_id;     // results copied from this session
  std::optional<int64_t> base_golden_v;  // rows copied from this version first
  bool overwrite = false;                // allow writing into a version that has rows
};

struct GoldenUpdateReport {
  int64_t rows_before = 0;        // rows of golden_v before the update
  int64_t from_base = 0;          // rows copied from base_golden_v
  int64_t from_session_find = 0;  // find rows copied from the session
  int64_t from_session_perf = 0;  // perf rows copied from the session
  int64_t rows_after = 0;         // rows of golden_v after the update
};

absl::StatusOr<GoldenUpdateReport> UpdateGolden(Database& db, const GoldenUpdate& update);

// One target of one golden version with its row counts.
struct GoldenTargetRows {
  int64_t golden_v = 0;
  SessionTarget target;  // id is 0: a golden target has no session
  int64_t find_rows = 0;
  int64_t perf_rows = 0;
};
// Every (version, target) in the table, or of one version; ordered by version, arch, num_cu,
// backend.
absl::StatusOr<std::vector<GoldenTargetRows>> ListGolden(Database& db,
                                                         std::optional<int64_t> golden_v);

// The rows of one version and target in id pages (as ScanExportable*Results). The rows carry
// the golden row's id; job_id is the source job (its kernels make the kernel db).
absl::Status ScanGoldenFindResults(
    Database& db, int64_t golden_v, const SessionTarget& target, int page_size,
    const std::function<absl::Status(const std::vector<FindResultRow>&)>& page);
absl::Status ScanGoldenPerfResults(
    Database& db, int64_t golden_v, const SessionTarget& target, int page_size,
    const std::function<absl::Status(const std::vector<PerfResultRow>&)>& page);

}  // namespace tuna::schema
