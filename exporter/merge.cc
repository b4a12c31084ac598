// Merging an export into existing perf db and kernel db files (the find db merge is
// db::MergeFindDb). See exporter.h for the rules.
#include <map>
#include <utility>

#include "exporter/formats.h"

namespace tuna::exporter::internal {
namespace {

// The time of an existing perf-db row, from the existing find db of the same directory: the
// entry of the same solver under the config's find key.
std::optional<float> ExistingTime(const std::optional<db::FindDb>& find, const std::string& key,
                                  const std::string& solver) {
  if (!find) return std::nullopt;
  auto it = find->find(key);
  if (it == find->end()) return std::nullopt;
  for (const auto& e : it->second) {
    if (e.solver == solver) return e.time_ms;
  }
  return std::nullopt;
}

}  // namespace

PerfMergeResult MergePerfDb(const std::vector<db::PerfDbRow>& existing,
                            const IncomingPerf& incoming,
                            const std::optional<db::FindDb>& existing_find) {
  PerfMergeResult out;
  std::map<PerfDbConfig, std::map<std::string, std::string>, db::PerfDbConfigLess> rows;
  for (const auto& r : existing) rows[r.config][r.solver] = r.params;
  std::map<PerfDbConfig, std::map<std::string, bool>, db::PerfDbConfigLess> touched;
  for (const auto& [config, solvers] : incoming) {
    auto& file_solvers = rows[config];
    for (const auto& [solver, e] : solvers) {
      auto it = file_solvers.find(solver);
      if (it == file_solvers.end()) {
        file_solvers.emplace(solver, e.params);
        ++out.counts.added;
        continue;
      }
      touched[config][solver] = true;
      if (it->second == e.params) {
        ++out.counts.unchanged;
        continue;
      }
      std::optional<float> old_time = ExistingTime(existing_find, e.find_key, solver);
      if (!old_time) {
        it->second = e.params;
        ++out.counts.replaced_untimed;
      } else if (e.time_ms < *old_time) {
        it->second = e.params;
        ++out.counts.improved;
      } else {
        ++out.counts.unchanged;
      }
    }
  }
  const int64_t existing_rows = static_cast<int64_t>(existing.size());
  int64_t matched = 0;
  for (const auto& [config, solvers] : touched) matched += solvers.size();
  out.counts.kept = existing_rows - matched;
  for (auto& [config, solvers] : rows) {
    for (auto& [solver, params] : solvers) out.rows.push_back({config, solver, params});
  }
  return out;
}

KernelMergeResult MergeKernelDb(const std::vector<db::KernelDbEntry>& existing,
                                const std::vector<db::KernelDbEntry>& incoming) {
  using Key = std::pair<std::string, std::string>;
  KernelMergeResult out;
  std::map<Key, std::string> entries;
  for (const auto& e : existing) entries[{e.kernel_name, e.kernel_args}] = e.blob;
  const size_t existing_keys = entries.size();
  std::map<Key, bool> seen;  // incoming key -> it was in the existing file
  for (const auto& e : incoming) {
    Key key{e.kernel_name, e.kernel_args};
    if (seen.count(key)) {
      entries[key] = e.blob;  // a later incoming entry of the same key: last wins
      continue;
    }
    auto it = entries.find(key);
    seen[key] = it != entries.end();
    if (it == entries.end()) {
      entries.emplace(std::move(key), e.blob);
      ++out.counts.added;
    } else if (it->second == e.blob) {
      ++out.counts.unchanged;
    } else {
      it->second = e.blob;
      ++out.counts.replaced;
    }
  }
  out.counts.kept =
      static_cast<int64_t>(existing_keys) - out.counts.unchanged - out.counts.replaced;
  out.entries.reserve(entries.size());
  for (auto& [key, blob] : entries) out.entries.push_back({key.first, key.second, blob});
  return out;
}

}  // namespace tuna::exporter::internal
