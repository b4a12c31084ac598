#include "schema/store/session_store.h"

#include "absl/strings/str_cat.h"

namespace tuna::schema {
namespace {

constexpr const char* kSelect =
    "SELECT id, arch, num_cu, backend, tuner_version, compiler_versions, label, created_at "
    "FROM session";

SessionRecord FromRow(const Row& r) {
  SessionRecord s;
  s.id = r.Int(0);
  s.arch = r.String(1);
  s.num_cu = r.Int(2);
  s.backend = r.String(3);
  s.tuner_version = r.String(4);
  s.compiler_versions = r.String(5);
  s.label = r.String(6);
  s.created = r.String(7);
  return s;
}

}  // namespace

absl::StatusOr<int64_t> SessionStore::Create(const SessionRecord& s) {
  if (s.arch.empty()) return absl::InvalidArgumentError("session needs an arch");
  if (s.num_cu < 1) return absl::InvalidArgumentError(absl::StrCat("num_cu ", s.num_cu, " < 1"));
  if (s.backend != "HIP" && s.backend != "CUDA" && s.backend != "CPU") {
    return absl::InvalidArgumentError(
        absl::StrCat("backend '", s.backend, "' is not HIP, CUDA or CPU"));
  }
  int64_t id = 0;
  absl::Status st = db_.WithConnection([&](Connection& c) -> absl::Status {
    auto n = c.Execute(
        "INSERT INTO session (arch, num_cu, backend, tuner_version, compiler_versions, label) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        {s.arch, s.num_cu, s.backend, s.tuner_version, s.compiler_versions, s.label});
    if (!n.ok()) return n.status();
    auto last = c.LastInsertId();
    if (!last.ok()) return last.status();
    id = *last;
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return id;
}

absl::StatusOr<SessionRecord> SessionStore::Get(int64_t id) {
  auto rows = db_.Query(absl::StrCat(kSelect, " WHERE id = ?"), {id});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return absl::NotFoundError(absl::StrCat("no session ", id));
  return FromRow((*rows)[0]);
}

absl::StatusOr<std::optional<int64_t>> SessionStore::FindLatest(const std::string& label,
                                                                const std::string& arch,
                                                                int64_t num_cu,
                                                                const std::string& backend) {
  auto rows = db_.Query("SELECT id FROM session WHERE label = ? AND arch = ? AND num_cu = ? AND "
                        "backend = ? ORDER BY id DESC LIMIT 1",
                        {label, arch, num_cu, backend});
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<int64_t>();
  return std::optional<int64_t>((*rows)[0].Int(0));
}

absl::StatusOr<std::vector<SessionRecord>> SessionStore::List() {
  auto rows = db_.Query(absl::StrCat(kSelect, " ORDER BY id"));
  if (!rows.ok()) return rows.status();
  std::vector<SessionRecord> out;
  for (const Row& r : *rows) out.push_back(FromRow(r));
  return out;
}

absl::StatusOr<std::vector<SessionTarget>> SessionStore::Targets() {
  auto rows = db_.Query("SELECT id, arch, num_cu, backend FROM session ORDER BY id");
  if (!rows.ok()) return rows.status();
  std::vector<SessionTarget> out;
  for (const Row& r : *rows) out.push_back({r.Int(0), r.String(1), r.Int(2), r.String(3)});
  return out;
}

}  // namespace tuna::schema
