#include "schema/store/sample_store.h"

namespace tuna::schema {

absl::Status ScanPassedSamples(Database& db, int64_t session_id, int page_size,
                               const std::function<absl::Status(const std::vector<CandidateSample>&)>& page) {
  static constexpr char kSql[] =
      "SELECT e.id, j.config_id, s.name, e.params, e.time FROM eval_sample e "
      "JOIN job j ON j.id = e.job_id JOIN solver s ON s.id = j.solver_id "
      "WHERE j.session_id = ? AND e.id > ? AND e.status = 'Passed' AND e.time IS NOT NULL "
      "AND e.time >= 0 AND s.valid = TRUE ORDER BY e.id LIMIT ?";
  int64_t last = 0;
  std::vector<CandidateSample> batch;
  for (;;) {
    auto rows = db.Query(kSql, {session_id, last, int64_t{page_size}});
    if (!rows.ok()) return rows.status();
    if (rows->empty()) return absl::OkStatus();
    batch.clear();
    for (const Row& r : *rows) batch.push_back({r.Int(0), r.Int(1), r.String(2), r.String(3), r.Double(4)});
    last = batch.back().id;
    if (absl::Status st = page(batch); !st.ok()) return st;
    if (static_cast<int>(rows->size()) < page_size) return absl::OkStatus();
  }
}

}  // namespace tuna::schema
