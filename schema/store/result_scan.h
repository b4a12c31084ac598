// Internal to schema/store (result_store.cc, golden_store.cc): the export rules as SQL, and the
// keyset-paged scan both read results with. Not part of any public interface.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "schema/store/database.h"
#include "schema/store/result_store.h"

namespace tuna::schema::internal {

// The export rules of result_store.h, as SQL conditions over `r` (the result) and `s` (its
// solver).
inline constexpr char kExportableFind[] =
    "r.verified = TRUE AND r.kernel_time >= 0 AND r.workspace >= 0 AND s.valid = TRUE";
inline constexpr char kExportablePerf[] =
    "r.verified = TRUE AND r.kernel_time >= 0 AND r.workspace >= 0 AND s.valid = TRUE"
    " AND r.params <> '' AND s.tunable = TRUE";

// Rows selected as (id, config_id, solver name, kernel_time, workspace, job_id) and
// (id, config_id, solver name, params, kernel_time, workspace, job_id).
FindResultRow DecodeFindResult(const Row& r);
PerfResultRow DecodePerfResult(const Row& r);

// Keyset pagination: `sql` takes the `leading` parameters, then `id > ?` and `LIMIT ?`, and
// selects rows in id order; `decode` turns one row into a T whose `id` is the next page's lower
// bound. A non-OK return of `page` stops the scan and is returned.
template <typename T>
absl::Status ScanPages(Database& db, const std::string& sql, const Params& leading, int page_size,
                       T (*decode)(const Row&),
                       const std::function<absl::Status(const std::vector<T>&)>& page) {
  int64_t last = 0;
  std::vector<T> batch;
  for (;;) {
    Params params = leading;
    params.push_back(last);
    params.push_back(int64_t{page_size});
    auto rows = db.Query(sql, params);
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return absl::OkStatus();
    batch.clear();
    batch.reserve(rows->size());
    for (const Row& r : *rows) batch.push_back(decode(r));
    last = batch.back().id;
    if (auto st = page(batch); !st.ok()) return st;
    if (static_cast<int>(rows->size()) < page_size) return absl::OkStatus();
  }
}

}  // namespace tuna::schema::internal
