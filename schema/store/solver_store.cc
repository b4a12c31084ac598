#include "schema/store/solver_store.h"

#include <set>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace tuna::schema {
namespace {

SolverRecord FromRow(const Row& r) {
  SolverRecord s;
  s.id = r.Int(0);
  s.name = r.String(1);
  s.tunable = r.Int(2) != 0;
  s.directions = r.String(3);
  s.is_dynamic = r.Int(4) != 0;
  s.valid = r.Int(5) != 0;
  return s;
}

constexpr const char* kSelect =
    "SELECT id, name, tunable, directions, is_dynamic, valid FROM solver";

absl::StatusOr<std::vector<SolverRecord>> ReadAll(Connection& c, bool for_update) {
  auto rows = c.Query(absl::StrCat(kSelect, " ORDER BY id", for_update ? " FOR UPDATE" : ""));
  if (!rows.ok()) return rows.status();
  std::vector<SolverRecord> out;
  for (const Row& r : *rows) out.push_back(FromRow(r));
  return out;
}

absl::Status Insert(Connection& c, const SolverRecord& s) {
  return c
      .Execute("INSERT INTO solver (id, name, tunable, directions, is_dynamic, valid) VALUES "
               "(?, ?, ?, ?, ?, ?)",
               {s.id, s.name, int64_t{s.tunable}, s.directions, int64_t{s.is_dynamic},
                int64_t{s.valid}})
      .status();
}

// Moves every row that refers to solver `from` over to `to` (which must exist), then deletes
// `from`. A row whose unique key already exists under `to` is a duplicate: the `to` row wins.
absl::Status ReplaceSolverId(Connection& c, int64_t from, int64_t to) {
  struct Table {
    const char* name;
    const char* key_match;  // the unique key's other columns, o = old row, n = new row
  };
  static constexpr Table kTables[] = {
      {"find_result", "n.session_id = o.session_id AND n.config_id = o.config_id"},
      {"perf_result", "n.session_id = o.session_id AND n.config_id = o.config_id"},
      {"solver_applicability", "n.session_id = o.session_id AND n.config_id = o.config_id"},
      {"job", "n.session_id = o.session_id AND n.config_id = o.config_id AND n.kind = o.kind"},
  };
  for (const Table& t : kTables) {
    auto dups = c.Execute(absl::StrCat("DELETE o FROM ", t.name, " o JOIN ", t.name, " n ON ",
                                       t.key_match, " AND n.solver_id = ? WHERE o.solver_id = ?"),
                          {to, from});
    if (!dups.ok()) return dups.status();
    auto moved = c.Execute(absl::StrCat("UPDATE ", t.name, " SET solver_id = ? WHERE solver_id = ?"),
                           {to, from});
    if (!moved.ok()) return moved.status();
  }
  return c.Execute("DELETE FROM solver WHERE id = ?", {from}).status();
}

}  // namespace

absl::StatusOr<SolverSyncCounts> SolverStore::Sync(const std::vector<SolverRecord>& registry) {
  std::set<int64_t> ids;
  std::set<std::string> names;
  for (const SolverRecord& s : registry) {
    if (s.id < 1 || s.id >= kImportedSolverIdBase) {
      return absl::InvalidArgumentError(absl::StrCat("solver ", s.name, ": id ", s.id,
                                                     " outside [1, ", kImportedSolverIdBase, ")"));
    }
    if (!ids.insert(s.id).second || !names.insert(s.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("registry repeats solver id ", s.id, " or name ", s.name));
    }
  }
  SolverSyncCounts counts;
  absl::Status st = db_.Transaction([&](Connection& c) -> absl::Status {
    counts = {};
    auto existing = ReadAll(c, /*for_update=*/true);
    if (!existing.ok()) return existing.status();
    std::unordered_map<int64_t, SolverRecord> by_id;
    std::unordered_map<std::string, int64_t> id_of_name;
    for (const SolverRecord& s : *existing) {
      by_id[s.id] = s;
      id_of_name[s.name] = s.id;
    }
    std::vector<std::pair<int64_t, int64_t>> replaced;  // placeholder id -> registry id
    // A name held by another row: a placeholder from import-db (moved over) or a renamed
    // registry entry (the old row loses the name: it is only ever invalid from now on).
    for (const SolverRecord& want : registry) {
      auto holder = id_of_name.find(want.name);
      if (holder == id_of_name.end() || holder->second == want.id) continue;
      const int64_t old_id = holder->second;
      if (old_id >= kImportedSolverIdBase) {
        // Free the name now; its rows move once the registry row exists (foreign keys).
        auto n = c.Execute("UPDATE solver SET name = ? WHERE id = ?",
                           {absl::StrCat(want.name, "#moving", old_id), old_id});
        if (!n.ok()) return n.status();
        replaced.emplace_back(old_id, want.id);
        by_id.erase(old_id);
      } else {
        const std::string retired = absl::StrCat(want.name, "#retired", old_id);
        auto n = c.Execute("UPDATE solver SET name = ?, valid = 0 WHERE id = ?",
                           {retired, old_id});
        if (!n.ok()) return n.status();
        by_id[old_id].name = retired;
        by_id[old_id].valid = false;
      }
      id_of_name.erase(holder);
      ++counts.updated;
    }
    for (const SolverRecord& want : registry) {
      SolverRecord w = want;
      w.valid = true;
      auto it = by_id.find(w.id);
      if (it == by_id.end()) {
        if (auto s = Insert(c, w); !s.ok()) return s;
        ++counts.added;
        continue;
      }
      if (it->second == w) {
        ++counts.unchanged;
      } else {
        auto n = c.Execute(
            "UPDATE solver SET name = ?, tunable = ?, directions = ?, is_dynamic = ?, valid = 1 "
            "WHERE id = ?",
            {w.name, int64_t{w.tunable}, w.directions, int64_t{w.is_dynamic}, w.id});
        if (!n.ok()) return n.status();
        ++counts.updated;
      }
      by_id.erase(it);
    }
    for (const auto& [from, to] : replaced) {
      if (auto s = ReplaceSolverId(c, from, to); !s.ok()) return s;
    }
    // What is left is not in the registry.
    for (const auto& [id, s] : by_id) {
      if (!s.valid) continue;
      auto n = c.Execute("UPDATE solver SET valid = 0 WHERE id = ?", {id});
      if (!n.ok()) return n.status();
      ++counts.invalidated;
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return counts;
}

absl::StatusOr<std::vector<SolverRecord>> SolverStore::List() {
  std::vector<SolverRecord> out;
  absl::Status st = db_.WithConnection([&](Connection& c) -> absl::Status {
    auto all = ReadAll(c, false);
    if (!all.ok()) return all.status();
    out = std::move(*all);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

absl::StatusOr<std::map<std::string, int64_t>> SolverStore::EnsureNames(
    Connection& c, const std::vector<std::string>& names, const std::vector<SolverRecord>& known,
    int64_t* added) {
  *added = 0;
  auto existing = ReadAll(c, /*for_update=*/true);
  if (!existing.ok()) return existing.status();
  std::map<std::string, int64_t> out;
  std::set<int64_t> used_ids;
  int64_t next_placeholder = kImportedSolverIdBase;
  for (const SolverRecord& s : *existing) {
    out[s.name] = s.id;
    used_ids.insert(s.id);
    if (s.id >= next_placeholder) next_placeholder = s.id + 1;
  }
  std::unordered_map<std::string, const SolverRecord*> registry;
  for (const SolverRecord& s : known) registry[s.name] = &s;
  std::map<std::string, int64_t> result;
  for (const std::string& name : names) {
    if (name.empty()) return absl::InvalidArgumentError("empty solver name");
    if (auto it = out.find(name); it != out.end()) {
      result[name] = it->second;
      continue;
    }
    SolverRecord s;
    auto reg = registry.find(name);
    if (reg != registry.end() && !used_ids.count(reg->second->id)) {
      s = *reg->second;
      s.valid = true;
    } else {
      s.id = next_placeholder++;
      s.name = name;
      s.valid = false;
      s.directions = "";
    }
    if (auto st = Insert(c, s); !st.ok()) return st;
    ++*added;
    used_ids.insert(s.id);
    out[name] = s.id;
    result[name] = s.id;
  }
  return result;
}

}  // namespace tuna::schema
