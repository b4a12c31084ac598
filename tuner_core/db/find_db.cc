#include "tuner_core/db/find_db.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <unordered_set>

#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"

namespace tuna::db {
namespace {

bool ParseTime(std::string_view s, float& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size() && std::isfinite(out);
}

bool ParseWorkspace(std::string_view s, uint64_t& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 10);
  return !s.empty() && ec == std::errc() && p == s.data() + s.size();
}

// Converts one raw entry (current or legacy form); a message on failure.
absl::StatusOr<FindDbEntry> ToEntry(const RawEntry& raw) {
  std::vector<std::string_view> f;
  for (std::string_view rest = raw.values;;) {
    size_t comma = rest.find(',');
    f.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  FindDbEntry e;
  size_t t = 0;  // index of the time field
  if (IsFindDbAlgorithmName(raw.id)) {
    // Legacy: algorithm:Solver,time,workspace,algorithm[,kcache key]
    if (f.size() < 4 || f.size() > 5 || f[0].empty()) {
      return absl::InvalidArgumentError(
          internal::Cat("legacy entry ", internal::Quoted(internal::Cat(raw.id, ":", raw.values)),
                       " needs Solver,time,workspace,algorithm[,kcache]"));
    }
    e.solver = std::string(f[0]);
    t = 1;
  } else {
    if (f.size() != 3) {
      return absl::InvalidArgumentError(internal::Cat(
          "entry ", internal::Quoted(internal::Cat(raw.id, ":", raw.values)),
          " needs time,workspace,algorithm"));
    }
    e.solver = std::string(raw.id);
  }
  if (!ParseTime(f[t], e.time_ms)) {
    return absl::InvalidArgumentError(internal::Cat("bad time ", internal::Quoted(f[t]), " for ",
                                                    internal::Quoted(e.solver)));
  }
  if (!ParseWorkspace(f[t + 1], e.workspace)) {
    return absl::InvalidArgumentError(
        internal::Cat("bad workspace ", internal::Quoted(f[t + 1]), " for ",
                      internal::Quoted(e.solver)));
  }
  if (f[t + 2].empty()) {
    return absl::InvalidArgumentError(internal::Cat("empty algorithm for ", internal::Quoted(e.solver)));
  }
  e.algorithm = std::string(f[t + 2]);
  return e;
}

// Raw line -> record, dropping bad and duplicate entries with a warning. False if nothing is left.
bool ToRecord(const RawRecord& raw, size_t line_no, std::vector<ReadWarning>& warnings,
              FindDbRecord& out) {
  out.key = std::string(raw.key);
  out.entries.clear();
  std::unordered_set<std::string_view> seen;
  for (const RawEntry& r : raw.entries) {
    absl::StatusOr<FindDbEntry> e = ToEntry(r);
    if (!e.ok()) {
      warnings.push_back({line_no, std::string(e.status().message())});
      continue;
    }
    if (std::any_of(out.entries.begin(), out.entries.end(),
                    [&](const FindDbEntry& x) { return x.solver == e->solver; })) {
      warnings.push_back({line_no, internal::Cat("duplicate solver ", internal::Quoted(e->solver), " ignored")});
      continue;
    }
    out.entries.push_back(*std::move(e));
  }
  if (out.entries.empty()) {
    warnings.push_back({line_no, internal::Cat("record ", internal::Quoted(out.key), " has no valid entries")});
    return false;
  }
  return true;
}

}  // namespace

bool IsFindDbAlgorithmName(std::string_view name) {
  static constexpr std::string_view kNames[] = {
      "miopenConvolutionFwdAlgoGEMM",         "miopenConvolutionFwdAlgoDirect",
      "miopenConvolutionFwdAlgoFFT",          "miopenConvolutionFwdAlgoWinograd",
      "miopenConvolutionFwdAlgoImplicitGEMM", "miopenConvolutionBwdDataAlgoGEMM",
      "miopenConvolutionBwdDataAlgoDirect",   "miopenConvolutionBwdDataAlgoFFT",
      "miopenConvolutionBwdDataAlgoWinograd", "miopenConvolutionBwdDataAlgoImplicitGEMM",
      "miopenTransposeBwdDataAlgoGEMM",       "miopenConvolutionBwdWeightsAlgoGEMM",
      "miopenConvolutionBwdWeightsAlgoDirect", "miopenConvolutionBwdWeightsAlgoWinograd",
      "miopenConvolutionBwdWeightsAlgoImplicitGEMM"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

FindDbReadResult ParseFindDb(std::string_view text) {
  FindDbReadResult result;
  FindDbRecord rec;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    std::optional<RawRecord> raw = ParseRecordLine(line, line_no, result.warnings);
    if (!raw) continue;
    if (result.records.count(std::string(raw->key)) != 0) {
      result.warnings.push_back(
          {line_no, internal::Cat("duplicate key ", internal::Quoted(raw->key), " ignored (first one wins)")});
      continue;
    }
    if (ToRecord(*raw, line_no, result.warnings, rec)) {
      result.records.emplace(std::move(rec.key), std::move(rec.entries));
    }
  }
  result.lines = line_no;
  return result;
}

absl::StatusOr<FindDbReadResult> ReadFindDbFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParseFindDb(*text);
}

absl::Status ForEachFindDbRecord(const std::string& path,
                                 const std::function<absl::Status(FindDbRecord&&)>& on_record,
                                 const std::function<void(const ReadWarning&)>& on_warning) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(internal::Cat("cannot open ", path));
  std::unordered_set<std::string> seen;
  std::vector<ReadWarning> warnings;
  std::string line;
  FindDbRecord rec;
  size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    warnings.clear();
    std::optional<RawRecord> raw = ParseRecordLine(line, line_no, warnings);
    bool usable = false;
    if (raw) {
      if (seen.count(std::string(raw->key)) != 0) {
        warnings.push_back(
            {line_no, internal::Cat("duplicate key ", internal::Quoted(raw->key), " ignored (first one wins)")});
      } else {
        usable = ToRecord(*raw, line_no, warnings, rec);
      }
    }
    for (const ReadWarning& w : warnings) on_warning(w);
    if (!usable) continue;
    seen.insert(rec.key);
    if (absl::Status st = on_record(std::move(rec)); !st.ok()) return st;
    rec = FindDbRecord();
  }
  if (in.bad()) return absl::InternalError(internal::Cat("read error on ", path));
  return absl::OkStatus();
}

absl::StatusOr<FindDbRecord> ParseFindDbLine(std::string_view line) {
  std::vector<ReadWarning> warnings;
  std::optional<RawRecord> raw = ParseRecordLine(line, 1, warnings);
  FindDbRecord rec;
  if (raw && ToRecord(*raw, 1, warnings, rec) && warnings.empty()) return rec;
  return absl::InvalidArgumentError(
      warnings.empty() ? std::string("empty find-db line") : warnings.front().message);
}

std::string FormatFindDbTime(float time_ms) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), time_ms, std::chars_format::general, 6);
  return std::string(buf, r.ptr);
}

void SortFindDbEntries(std::vector<FindDbEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const FindDbEntry& a, const FindDbEntry& b) {
    if (a.time_ms != b.time_ms) return a.time_ms < b.time_ms;
    return a.solver < b.solver;
  });
}

absl::StatusOr<std::string> SerializeFindDb(const FindDb& db, const FindDbWriteOptions& options) {
  std::string out;
  std::vector<const FindDbEntry*> sorted;
  for (const auto& [key, entries] : db) {
    if (entries.empty()) continue;
    if (absl::Status s = CheckRecordField("find-db key", key); !s.ok()) return s;
    sorted.clear();
    for (const FindDbEntry& e : entries) sorted.push_back(&e);
    std::stable_sort(sorted.begin(), sorted.end(), [](const FindDbEntry* a, const FindDbEntry* b) {
      if (a->time_ms != b->time_ms) return a->time_ms < b->time_ms;
      return a->solver < b->solver;
    });
    size_t n = sorted.size();
    if (options.max_entries_per_key != 0) n = std::min(n, options.max_entries_per_key);
    out.append(key);
    out.push_back('=');
    for (size_t i = 0; i < n; ++i) {
      const FindDbEntry& e = *sorted[i];
      if (absl::Status s = CheckRecordField("solver", e.solver); !s.ok()) return s;
      if (absl::Status s = CheckRecordField("algorithm", e.algorithm); !s.ok()) return s;
      if (e.algorithm.find(',') != std::string::npos || e.solver.find(',') != std::string::npos) {
        return absl::InvalidArgumentError(
            internal::Cat("',' in solver/algorithm of key ", key));
      }
      if (!std::isfinite(e.time_ms)) {
        return absl::InvalidArgumentError(
            internal::Cat("non-finite time for ", e.solver, " in key ", key));
      }
      if (i != 0) out.push_back(';');
      internal::Append(&out, e.solver, ":", FormatFindDbTime(e.time_ms), ",", e.workspace, ",",
                      e.algorithm);
    }
    out.push_back('\n');
  }
  return out;
}

absl::Status WriteFindDbFile(const std::string& path, const FindDb& db,
                             const FindDbWriteOptions& options) {
  absl::StatusOr<std::string> text = SerializeFindDb(db, options);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path, *text);
}

FindDbMergeResult MergeFindDb(const FindDb& existing, const FindDb& incoming) {
  FindDbMergeResult result;
  result.db = existing;
  for (const auto& [key, entries] : existing) {
    if (incoming.count(key) == 0) ++result.report.kept_keys;
  }
  for (const auto& [key, in_entries] : incoming) {
    auto [it, inserted] = result.db.try_emplace(key);
    if (inserted) ++result.report.added_keys;
    std::vector<FindDbEntry>& merged = it->second;
    for (const FindDbEntry& in : in_entries) {
      auto cur = std::find_if(merged.begin(), merged.end(),
                              [&](const FindDbEntry& x) { return x.solver == in.solver; });
      if (cur == merged.end()) {
        merged.push_back(in);
        ++result.report.added_entries;
      } else if (in.time_ms < cur->time_ms) {
        *cur = in;
        ++result.report.improved_entries;
      } else {
        ++result.report.unchanged_entries;
      }
    }
  }
  for (auto& [key, entries] : result.db) SortFindDbEntries(entries);
  return result;
}

}  // namespace tuna::db
