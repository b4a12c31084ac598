#include "schema/store/worker_store.h"

namespace tuna::schema {

std::string LeaseOwnerHost(const std::string& owner) {
  return owner.substr(0, owner.rfind('/'));
}

absl::Status WorkerStore::Upsert(const WorkerDeviceRecord& d) {
  auto n = db_.Execute(
      "INSERT INTO worker (host, device_index, arch, num_cu, backend, version, state, "
      "last_seen) VALUES (?, ?, ?, ?, ?, ?, 'idle', NOW(6)) ON DUPLICATE KEY UPDATE "
      "arch = VALUES(arch), num_cu = VALUES(num_cu), backend = VALUES(backend), "
      "version = VALUES(version), state = 'idle', last_seen = NOW(6)",
      {d.host, d.device_index, d.arch, d.num_cu, d.backend, d.version});
  return n.status();
}

absl::Status WorkerStore::MarkSeen(const std::string& host) {
  return db_.Execute("UPDATE worker SET last_seen = NOW(6) WHERE host = ?", {host}).status();
}

absl::StatusOr<std::vector<WorkerSeen>> WorkerStore::SeenWithin(absl::Duration within,
                                                                 int64_t limit) {
  auto rows = db_.Query(
      "SELECT host, device_index, backend, arch, num_cu, state, "
      "TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(6)) / 1e6 FROM worker "
      "WHERE last_seen >= NOW(6) - INTERVAL ? SECOND ORDER BY last_seen DESC, host, device_index "
      "LIMIT ?",
      {static_cast<int64_t>(absl::ToInt64Seconds(within)), limit});
  if (!rows.ok()) return rows.status();
  std::vector<WorkerSeen> out;
  for (const Row& r : *rows) {
    out.push_back({r.String(0), static_cast<int>(r.Int(1)), r.String(2), r.String(3),
                   static_cast<int>(r.Int(4)), r.String(5), r.Double(6)});
  }
  return out;
}

absl::StatusOr<std::vector<HeldLease>> WorkerStore::HeldLeases(std::optional<int64_t> session_id,
                                                               int64_t limit) {
  std::string sql =
      "SELECT j.lease_owner, j.id, j.state, s.name FROM job j JOIN solver s ON s.id = j.solver_id "
      "WHERE j.state IN ('compile_start', 'eval_start') AND j.lease_owner IS NOT NULL";
  Params params;
  if (session_id) {
    sql += " AND j.session_id = ?";
    params.emplace_back(std::in_place_type<int64_t>, *session_id);
  }
  sql += " ORDER BY j.id LIMIT ?";
  params.emplace_back(std::in_place_type<int64_t>, limit);
  auto rows = db_.Query(sql, params);
  if (!rows.ok()) return rows.status();
  std::vector<HeldLease> out;
  for (const Row& r : *rows) out.push_back({r.String(0), r.Int(1), r.String(2), r.String(3)});
  return out;
}

}  // namespace tuna::schema
