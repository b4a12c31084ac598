#include "schema/store/applicability_store.h"

#include "absl/strings/str_cat.h"
#include "schema/store/sql_batch.h"

namespace tuna::schema {
namespace {

constexpr size_t kChunk = 2000;  // 5 values a row
constexpr size_t kMaxReasonChars = 1024;

// At most kMaxReasonChars UTF-8 characters, never cutting one in half.
std::string CutReason(const std::string& s) {
  size_t chars = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && chars++ == kMaxReasonChars) {
      return s.substr(0, i);
    }
  }
  return s;
}

}  // namespace

absl::Status ApplicabilityStore::Upsert(int64_t session_id,
                                        const std::vector<ApplicabilityRecord>& records,
                                        const ProgressFn& progress) {
  const int64_t total = static_cast<int64_t>(records.size());
  for (size_t begin = 0; begin < records.size(); begin += kChunk) {
    const size_t end = std::min(records.size(), begin + kChunk);
    Params params;
    params.reserve((end - begin) * 5);
    for (size_t k = begin; k < end; ++k) {
      const ApplicabilityRecord& r = records[k];
      params.push_back(session_id);
      params.push_back(r.config_id);
      params.push_back(r.solver_id);
      params.push_back(int64_t{r.applicable ? 1 : 0});
      params.push_back(r.applicable ? std::string() : CutReason(r.reason));
    }
    const std::string sql = absl::StrCat(
        "INSERT INTO solver_applicability (session_id, config_id, solver_id, applicable, reason) "
        "VALUES ",
        RowPlaceholders(end - begin, 5),
        " ON DUPLICATE KEY UPDATE applicable = VALUES(applicable), reason = VALUES(reason)");
    absl::Status st = db_.Transaction(
        [&](Connection& c) -> absl::Status { return c.Execute(sql, params).status(); });
    if (!st.ok()) return st;
    if (progress) progress(static_cast<int64_t>(end), total);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<ApplicabilityRecord>> ApplicabilityStore::Applicable(
    int64_t session_id) {
  auto rows = db_.Query(
      "SELECT a.config_id, a.solver_id FROM solver_applicability a JOIN solver s ON "
      "s.id = a.solver_id WHERE a.session_id = ? AND a.applicable = 1 AND s.valid = 1 "
      "ORDER BY a.config_id, a.solver_id",
      {session_id});
  if (!rows.ok()) return rows.status();
  std::vector<ApplicabilityRecord> out;
  out.reserve(rows->size());
  for (const Row& r : *rows) out.push_back({r.Int(0), r.Int(1), true, ""});
  return out;
}

absl::StatusOr<ApplicabilityCounts> ApplicabilityStore::Count(int64_t session_id,
                                                              const std::string& tag) {
  absl::StatusOr<Rows> rows =
      tag.empty()
          ? db_.Query("SELECT applicable, COUNT(*) FROM solver_applicability WHERE session_id = ? "
                      "GROUP BY applicable",
                      {session_id})
          : db_.Query("SELECT a.applicable, COUNT(*) FROM solver_applicability a JOIN config_tag "
                      "t ON t.config_id = a.config_id WHERE a.session_id = ? AND t.tag = ? "
                      "GROUP BY a.applicable",
                      {session_id, tag});
  if (!rows.ok()) return rows.status();
  ApplicabilityCounts out;
  for (const Row& r : *rows) (r.Int(0) ? out.applicable : out.not_applicable) = r.Int(1);
  return out;
}

}  // namespace tuna::schema
