#include "schema/store/imported_result_store.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "schema/store/sql_batch.h"

namespace tuna::schema {
namespace {

constexpr size_t kChunk = 2000;

// A row measured by tuna (verified, or written by an eval step with its job id) is never
// overwritten by an imported value (see the header's precedence rule).
constexpr const char* kMeasured = "(verified OR job_id IS NOT NULL)";

absl::StatusOr<int64_t> CountRows(Connection& c, const char* table, int64_t session_id) {
  auto rows = c.Query(absl::StrCat("SELECT COUNT(*) FROM ", table, " WHERE session_id = ?"),
                      {session_id});
  if (!rows.ok()) return rows.status();
  return (*rows)[0].Int(0);
}

// Runs `insert_chunk` over the rows in chunks, counting the rows added: before each chunk, the
// chunk's (config, solver) pairs already stored are looked up by the unique key's prefix
// (session, config), so the cost follows the chunk, not the session's size (exact inside one
// transaction; the rows are distinct pairs, see LastPerKey).
template <typename Record, typename InsertChunk>
absl::StatusOr<UpsertCounts> Chunked(Connection& c, const char* table, int64_t session_id,
                                     const std::vector<Record>& rows, const ProgressFn& progress,
                                     InsertChunk insert_chunk) {
  UpsertCounts counts;
  const size_t n = rows.size();
  for (size_t begin = 0; begin < n; begin += kChunk) {
    const size_t end = std::min(n, begin + kChunk);
    std::set<int64_t> configs;
    for (size_t k = begin; k < end; ++k) configs.insert(rows[k].config_id);
    Params params{session_id};
    params.insert(params.end(), configs.begin(), configs.end());
    auto stored = c.Query(absl::StrCat("SELECT config_id, solver_id FROM ", table,
                                       " WHERE session_id = ? AND config_id IN (",
                                       ListPlaceholders(configs.size()), ")"),
                          params);
    if (!stored.ok()) return stored.status();
    std::set<std::pair<int64_t, int64_t>> have;
    for (const Row& r : *stored) have.insert({r.Int(0), r.Int(1)});
    for (size_t k = begin; k < end; ++k) {
      if (have.count({rows[k].config_id, rows[k].solver_id})) {
        ++counts.existing;
      } else {
        ++counts.added;
      }
    }
    if (auto st = insert_chunk(begin, end); !st.ok()) return st;
    if (progress) progress(static_cast<int64_t>(end), static_cast<int64_t>(n));
  }
  return counts;
}

// Last record per (config, solver), in key order.
template <typename Record>
std::vector<Record> LastPerKey(const std::vector<Record>& rows) {
  std::map<std::pair<int64_t, int64_t>, const Record*> last;
  for (const Record& r : rows) last[{r.config_id, r.solver_id}] = &r;
  std::vector<Record> out;
  out.reserve(last.size());
  for (const auto& [key, r] : last) out.push_back(*r);
  return out;
}

}  // namespace

absl::StatusOr<UpsertCounts> ImportedResultStore::UpsertFind(
    Connection& c, int64_t session_id, const std::vector<FindResultRecord>& input,
    const ProgressFn& progress) {
  const std::vector<FindResultRecord> rows = LastPerKey(input);
  return Chunked(c, "find_result", session_id, rows, progress,
                 [&](size_t begin, size_t end) -> absl::Status {
                   Params params;
                   params.reserve((end - begin) * 7);
                   for (size_t k = begin; k < end; ++k) {
                     const FindResultRecord& r = rows[k];
                     params.insert(params.end(),
                                   {session_id, r.config_id, r.solver_id, r.kernel_time,
                                    r.workspace, std::string(), r.alg_lib});
                   }
                   return c
                       .Execute(absl::StrCat(
                                    "INSERT INTO find_result (session_id, config_id, solver_id, "
                                    "kernel_time, workspace, params, alg_lib) VALUES ",
                                    RowPlaceholders(end - begin, 7),
                                    " ON DUPLICATE KEY UPDATE kernel_time = IF(", kMeasured,
                                    ", kernel_time, VALUES(kernel_time)), workspace = IF(",
                                    kMeasured, ", workspace, VALUES(workspace)), alg_lib = IF(",
                                    kMeasured, ", alg_lib, VALUES(alg_lib))"),
                                params)
                       .status();
                 });
}

absl::StatusOr<UpsertCounts> ImportedResultStore::UpsertPerf(
    Connection& c, int64_t session_id, const std::vector<PerfResultRecord>& input,
    const ProgressFn& progress) {
  const std::vector<PerfResultRecord> rows = LastPerKey(input);
  return Chunked(c, "perf_result", session_id, rows, progress,
                 [&](size_t begin, size_t end) -> absl::Status {
                   Params params;
                   params.reserve((end - begin) * 6);
                   for (size_t k = begin; k < end; ++k) {
                     const PerfResultRecord& r = rows[k];
                     params.insert(params.end(), {session_id, r.config_id, r.solver_id, r.params,
                                                  double{-1}, int64_t{-1}});
                   }
                   return c
                       .Execute(absl::StrCat(
                                    "INSERT INTO perf_result (session_id, config_id, solver_id, "
                                    "params, kernel_time, workspace) VALUES ",
                                    RowPlaceholders(end - begin, 6),
                                    " ON DUPLICATE KEY UPDATE params = IF(", kMeasured,
                                    ", params, VALUES(params))"),
                                params)
                       .status();
                 });
}

}  // namespace tuna::schema
