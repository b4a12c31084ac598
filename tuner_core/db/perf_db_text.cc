#include "tuner_core/db/perf_db_text.h"

#include "tuner_core/db/str_util.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tuna::db {

PerfDbTextReadResult ParsePerfDbText(std::string_view text) {
  PerfDbTextReadResult result;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    std::optional<RawRecord> raw = ParseRecordLine(line, line_no, result.warnings);
    if (!raw) continue;
    auto [it, inserted] = result.records.try_emplace(std::string(raw->key));
    if (!inserted) {
      result.warnings.push_back(
          {line_no, internal::Cat("duplicate key '", raw->key, "' ignored (first one wins)")});
      continue;
    }
    for (const RawEntry& e : raw->entries) {
      if (!it->second.try_emplace(std::string(e.id), std::string(e.values)).second) {
        result.warnings.push_back({line_no, internal::Cat("duplicate solver ", e.id, " ignored")});
      }
    }
  }
  result.lines = line_no;
  return result;
}

absl::StatusOr<PerfDbTextReadResult> ReadPerfDbTextFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return text.status();
  return ParsePerfDbText(*text);
}

absl::StatusOr<std::string> SerializePerfDbText(const PerfDbText& db) {
  std::string out;
  for (const auto& [key, entries] : db) {
    if (entries.empty()) continue;
    if (absl::Status s = CheckRecordField("perf-db key", key); !s.ok()) return s;
    out.append(key);
    out.push_back('=');
    bool first = true;
    for (const auto& [solver, params] : entries) {
      if (absl::Status s = CheckRecordField("solver", solver); !s.ok()) return s;
      if (!params.empty()) {
        if (absl::Status s = CheckRecordField("params", params); !s.ok()) return s;
      }
      if (!first) out.push_back(';');
      first = false;
      internal::Append(&out, solver, ":", params);
    }
    out.push_back('\n');
  }
  return out;
}

absl::Status WritePerfDbTextFile(const std::string& path, const PerfDbText& db) {
  absl::StatusOr<std::string> text = SerializePerfDbText(db);
  if (!text.ok()) return text.status();
  return WriteFileAtomically(path, *text);
}

std::string PerfDbTextKey(const PerfDbConfig& c) {
  return absl::StrJoin(
      std::make_tuple(c.spatial_dim, c.in_channels, c.in_h, c.in_w, c.in_d, c.fil_h, c.fil_w,
                      c.fil_d, c.out_channels, c.batchsize, c.pad_h, c.pad_w, c.pad_d,
                      c.conv_stride_h, c.conv_stride_w, c.conv_stride_d, c.dilation_h,
                      c.dilation_w, c.dilation_d, c.bias, c.group_count, c.layout, c.data_type,
                      c.direction),
      "x");
}

PerfDbText PerfDbRowsToText(const std::vector<PerfDbRow>& rows) {
  PerfDbText out;
  for (const PerfDbRow& r : rows) out[PerfDbTextKey(r.config)][r.solver] = r.params;
  return out;
}

}  // namespace tuna::db
